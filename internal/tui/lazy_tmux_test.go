package tui

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
)

// TestIdleServersInTmux: with 12 copies of the reference server that one
// `otter mcp list` has pinned, the real TUI starts none of them: the
// status bar and /mcp show them idle with their known tools. The model's
// call of one server's tool starts that server alone; /mcp then shows it
// connected and the other eleven idle; enter on an idle one starts it.
// No server process outlives otter.
func TestIdleServersInTmux(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the process check reads /proc")
	}
	const n = 12
	peers := testpeer.Require(t)
	dir := t.TempDir()
	model := llmtest.New(t, llmtest.OpenAI,
		llmtest.Reply{Calls: []llmtest.Call{{ID: "call_1", Name: "mcp__s07__echo", Args: `{"message":"from idle"}`}}},
		llmtest.Reply{Text: []string{"The server said it."}},
	)
	cfg := fakeModelConfig(model.URL) + "\n" + peers.EverythingCopies(n, "OTTER_IDLE_TEST", dir)
	running := func() []string {
		var on []string
		for i := 1; i <= n; i++ {
			if len(markedProcesses(t, "OTTER_IDLE_TEST="+dir+"-"+testpeer.CopyName(i))) > 0 {
				on = append(on, testpeer.CopyName(i))
			}
		}
		return on
	}

	// One `otter mcp list` in the pane's home pins every server.
	home := filepath.Join(dir, "home")
	cfgDir := filepath.Join(home, ".config", "otter")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	list := exec.Command(testpeer.Otter(t), "mcp", "list")
	list.Env = testpeer.HomeEnv(home)
	if out, err := list.CombinedOutput(); err != nil || strings.Count(string(out), " connected ") != n {
		t.Fatalf("otter mcp list: %v\n%s", err, out)
	}

	p := startTmux(t, dir, cfg, 120, 40)
	p.waitFor("fake/fake-model", fmt.Sprintf("0/%d servers", n), fmt.Sprintf("%d idle", n))
	if on := running(); len(on) != 0 {
		t.Errorf("servers running in a TUI nobody used: %v", on)
	}
	p.keys("/mcp", "Enter")
	s := p.waitFor("MCP servers", fmt.Sprintf("0/%d connected · %d idle", n, n), "s01", "s12", "known")
	if strings.Count(s, " idle ") < n-1 { // the rows; the selected one's line says why
		t.Errorf("/mcp does not show every server idle:\n%s", s)
	}
	p.waitFor("not started yet: otter knows its", "enter/s start")
	p.keys("Escape")
	p.waitGone("enter/s start")

	// The model calls s07's echo: s07 starts, alone.
	p.keys("say it through s07", "Enter")
	for i := 0; ; i++ {
		scr := p.capture()
		if strings.Contains(scr, "The server said it.") {
			break
		}
		if strings.Contains(scr, "Allow mcp__s07__echo?") {
			p.keys("Enter") // allow once
		}
		if i > 600 {
			t.Fatalf("the model's call never finished:\n%s", scr)
		}
		time.Sleep(100 * time.Millisecond) // polling the pane, as waitFor does
	}
	if res := model.Requests()[1].LastToolResults(); len(res) != 1 || !strings.Contains(res[0].Text, "Echo: from idle") {
		t.Errorf("the echo's result sent to the model: %+v", res)
	}
	if on := running(); len(on) != 1 || on[0] != "s07" {
		t.Errorf("servers running after the call: %v, want s07 alone", on)
	}
	p.keys("/mcp", "Enter")
	p.waitFor(fmt.Sprintf("1/%d connected · %d idle", n, n-1))
	// Enter on an idle server (s01, selected first) starts it.
	p.keys("Enter")
	p.waitFor(fmt.Sprintf("2/%d connected · %d idle", n, n-2), "start s01: done")
	p.keys("Escape")
	p.waitGone("start s01: done")

	p.keys("C-c")
	p.waitFor("press ctrl+c again to quit")
	p.keys("C-c")
	p.waitExit()
	for _, name := range running() {
		t.Errorf("server %s outlived otter", name)
	}
}
