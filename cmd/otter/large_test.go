//go:build !race

// Tests that move hundreds of megabytes run without the race detector, which
// makes them five to ten times slower and finds nothing in them: what they
// check is memory and output bounds, and the code paths they cover run
// under -race in the smaller tests of the package. `make test` runs them in
// a race-free pass (scripts/test-without-race.sh); plain `go test` runs them too.

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
	"github.com/otter-sh/otter/internal/toolname"
)

// runMeasured runs cmd to its end and returns its peak resident memory in
// MiB (VmHWM, read from /proc until it exits; the server it starts is not
// counted).
func runMeasured(t *testing.T, cmd *exec.Cmd) (stdout, stderr string, peakMiB int, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(4 * time.Minute)
	for {
		select {
		case err := <-done:
			return out.String(), errb.String(), peakMiB, err
		case <-timeout:
			cmd.Process.Kill()
			t.Fatalf("otter %s did not end within 4 minutes", strings.Join(cmd.Args[1:], " "))
		case <-tick.C:
			b, _ := os.ReadFile(status)
			for line := range strings.SplitSeq(string(b), "\n") {
				if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
					kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
					peakMiB = max(peakMiB, kb>>10)
				}
			}
		}
	}
}

// TestHugeResultsKeepOtterSmall: a go-sdk server's 64 MiB tool result and
// its 40 tools of 1 MiB descriptions, through the real binary. `otter mcp
// call` prints the first MiB of the text after a note naming the file that
// holds the whole answer; `otter mcp tools --json` lists every tool with
// its description cut to 8 KiB; `otter -p` sends the model the note; otter
// stays under 200 MiB resident throughout. Before, the result was kept
// whole in several copies (a 64 MiB one peaked otter at 680 MB; 200 MiB at
// 1,954 MB) and the descriptions whole (250 tools: 2,379 MB and 137 s).
func TestHugeResultsKeepOtterSmall(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the peak resident memory from /proc")
	}
	t.Parallel()
	bin := testpeer.Otter(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const limitMiB = 200
	home, env := otterHome(t)
	srv := llmtest.New(t, llmtest.Anthropic,
		llmtest.Reply{Calls: []llmtest.Call{{ID: "call_big", Name: toolname.Qualified("huge", "big"), Args: `{}`}}},
		llmtest.Reply{Text: []string{"done"}},
	)
	cfg := promptConfig(t, srv, fmt.Sprintf("context_window = 200000\n\n[[mcp.servers]]\nname = \"huge\"\ncommand = %q\nstartup_timeout = \"120s\"\ntimeout = \"120s\"\nenv = { %s = \"64\", OTTER_HUGETEST_TOOLS = \"40\" }\n",
		self, envHugeServer))
	otter := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"--config", cfg}, args...)...)
		cmd.Dir, cmd.Env = home, env
		return cmd
	}
	outputs := filepath.Join(home, "xdg_cache_home", "otter", "outputs")

	stdout, stderr, peak, err := runMeasured(t, otter("mcp", "call", "huge", "big"))
	t.Logf("otter mcp call (64 MiB result): peak %d MiB, %d bytes out", peak, len(stdout))
	if err != nil {
		t.Fatalf("mcp call: %v\n%s", err, stderr)
	}
	if peak > limitMiB {
		t.Errorf("otter mcp call of a 64 MiB result peaked at %d MiB, want under %d", peak, limitMiB)
	}
	note, text, _ := strings.Cut(stdout, "\n")
	if !strings.Contains(note, "the server's answer was 64.0 MiB, more than the 16 MiB otter keeps of one message") ||
		!strings.Contains(note, "the whole answer, as the server sent it (JSON-RPC), is in "+outputs) {
		t.Errorf("the first line is not the note naming the file:\n%.400s", note)
	}
	if !strings.HasPrefix(text, "HEAD xxx") || !strings.Contains(text, "… [cut by otter: 67108874 bytes in all]") || len(stdout) > 2<<20 {
		t.Errorf("printed %d bytes: %.100q … %q", len(stdout), text, stdout[max(len(stdout)-80, 0):])
	}
	if i := strings.Index(note, outputs); i >= 0 {
		path := strings.TrimSuffix(note[i:], "]")
		var whole struct {
			Result struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"result"`
		}
		if b, err := os.ReadFile(path); err != nil || json.Unmarshal(b, &whole) != nil || len(whole.Result.Content) != 1 ||
			!strings.HasSuffix(whole.Result.Content[0].Text, "x TAIL") || len(whole.Result.Content[0].Text) != 64<<20+10 {
			t.Errorf("the file %s does not hold the whole answer (%v)", path, err)
		}
	}

	stdout, stderr, peak, err = runMeasured(t, otter("mcp", "tools", "huge", "--json"))
	t.Logf("otter mcp tools --json (40 × 1 MiB descriptions): peak %d MiB, %d bytes out", peak, len(stdout))
	if err != nil {
		t.Fatalf("mcp tools: %v\n%s", err, stderr)
	}
	var tools []struct{ Name, Description string }
	if err := json.Unmarshal([]byte(stdout), &tools); err != nil || len(tools) != 41 {
		t.Fatalf("mcp tools --json: %d tools (%v), want 41", len(tools), err)
	}
	for _, tl := range tools {
		if tl.Name != "mcp__huge__big" && (len(tl.Description) > 8<<10+64 || !strings.HasSuffix(tl.Description, "… [cut by otter: 1048576 bytes in all]")) {
			t.Errorf("%s's description: %d bytes ending %q, want 8 KiB and the marker", tl.Name, len(tl.Description), tl.Description[max(len(tl.Description)-60, 0):])
			break
		}
	}
	if peak > limitMiB {
		t.Errorf("otter mcp tools --json peaked at %d MiB, want under %d", peak, limitMiB)
	}

	_, stderr, peak, err = runMeasured(t, otter("--allow-tools", "mcp__huge__big", "-p", "get it"))
	t.Logf("otter -p (64 MiB result): peak %d MiB", peak)
	if err != nil {
		t.Fatalf("otter -p: %v\n%s", err, stderr)
	}
	if peak > limitMiB {
		t.Errorf("otter -p with a 64 MiB result peaked at %d MiB, want under %d", peak, limitMiB)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	res := reqs[1].LastToolResults()
	if len(res) != 1 || !strings.HasPrefix(res[0].Text, "[otter: the server's answer was 64.0 MiB") || len(res[0].Text) > 1<<20 {
		t.Errorf("the model was sent %d results: %.300v", len(res), res)
	}
}
