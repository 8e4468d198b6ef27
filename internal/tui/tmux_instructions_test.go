package tui

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// TestProjectInTheTUI is issue 25's "done when" in the real binary in tmux:
// `otter -c --model M "hello"` in an empty data directory starts a new
// conversation and says so; the project's instruction files wait for trust
// (the trust prompt lists them) while the user's are sent; M is in the
// status line and the request; a `!echo` line's output, @notes.txt's text
// and @pic.png as an image go with the next message; once trusted the
// user's AGENTS.md, the root's AGENTS.md and sub/'s CLAUDE.md are sent in
// that order; `!sleep 100` then Esc leaves no process of its group; a
// 50 MB `!` output keeps otter's memory under twice what it was idle; and
// `otter "hello"` in a trusted project answers at once.
func TestProjectInTheTUI(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the memory check reads /proc")
	}
	dir := t.TempDir()
	home, work := filepath.Join(dir, "home"), filepath.Join(dir, "work")
	sub := filepath.Join(work, "sub")
	var pic bytes.Buffer
	if err := png.Encode(&pic, image.NewRGBA(image.Rect(0, 0, 3, 3))); err != nil {
		t.Fatal(err)
	}
	pgidFile := filepath.Join(dir, "pgid")
	files := map[string][]byte{
		filepath.Join(home, ".config", "otter", "AGENTS.md"): []byte("USER-RULE: answer in English.\n"),
		filepath.Join(work, ".git", "HEAD"):                  []byte("ref: refs/heads/main\n"),
		filepath.Join(work, "AGENTS.md"):                     []byte("ROOT-RULE: run make test.\n"),
		filepath.Join(sub, "CLAUDE.md"):                      []byte("SUB-RULE: the sub package.\n"),
		filepath.Join(sub, "notes.txt"):                      []byte("NOTES-CONTENT: buy milk\n"),
		filepath.Join(sub, "pic.png"):                        pic.Bytes(),
	}
	for p, data := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	model := llmtest.New(t, llmtest.OpenAI)
	n := 0
	model.Respond = func(llmtest.Request) llmtest.Reply {
		n++
		return llmtest.Reply{Text: []string{fmt.Sprintf("Answer number %d.", n)}}
	}
	p := startTmuxAs(t, "otter-project", dir, fakeModelConfig(model.URL), 100, 40,
		"--cwd", sub, "-c", "--model", "chosen-model", "hello")

	// -c with nothing saved; the trust prompt names the instruction files.
	s := p.waitFor("Trust this directory?", "instruction files")
	flat := strings.Join(strings.Fields(s), "")
	for _, f := range []string{filepath.Join(work, "AGENTS.md"), filepath.Join(sub, "CLAUDE.md")} {
		if !strings.Contains(flat, strings.ReplaceAll(f, " ", "")) {
			t.Errorf("the trust prompt does not list %s:\n%s", f, s)
		}
	}
	p.keys("Escape")
	p.waitFor("is not trusted", "No saved conversation in", "to continue", "fake/chosen-model")
	p.keys("Enter") // "hello" waited in the input
	p.waitFor("Answer number 1.")
	req := model.Requests()[0]
	if req.Model != "chosen-model" {
		t.Errorf("the request's model is %q, want chosen-model", req.Model)
	}
	if !strings.Contains(req.System, "USER-RULE") || strings.Contains(req.System, "ROOT-RULE") || strings.Contains(req.System, "SUB-RULE") {
		t.Errorf("untrusted: want the user's AGENTS.md only:\n%s", req.System)
	}
	if last := req.Messages[len(req.Messages)-1]; last.Text != "hello" {
		t.Errorf("the first message is %q, want hello", last.Text)
	}

	// A shell line, then a message with a file and an image.
	p.keys("!echo hi-from-the-shell", "Enter")
	p.waitFor("exit 0", "go to the model with your next message")
	p.keys("summarise @notes.txt and @pic.png", "Enter")
	p.waitFor("Answer number 2.")
	last := model.Requests()[1].Messages
	msg := last[len(last)-1]
	for _, want := range []string{"hi-from-the-shell", "$ echo hi-from-the-shell", "NOTES-CONTENT: buy milk"} {
		if !strings.Contains(msg.Text, want) {
			t.Errorf("the message after the shell line lacks %q:\n%s", want, msg.Text)
		}
	}
	if msg.Images != 1 {
		t.Errorf("@pic.png: %d images, want 1", msg.Images)
	}

	// Trusted, the project's files are sent, outer first.
	p.keys("/trust", "Enter")
	p.waitFor("Trust this directory?")
	p.keys("y")
	p.waitFor("trusted ")
	p.keys("again", "Enter")
	p.waitFor("Answer number 3.")
	sys := model.Requests()[2].System
	if !inOrderIn(sys, "USER-RULE", "ROOT-RULE", "SUB-RULE") {
		t.Errorf("trusted: want the user's, the root's and sub's files in that order:\n%s", sys)
	}

	// !sleep then Esc: nothing of its process group is left.
	p.keys("!echo $$ > "+pgidFile+"; sleep 100; echo never", "Enter")
	pgid := 0
	deadline := time.Now().Add(30 * time.Second)
	for pgid == 0 && time.Now().Before(deadline) {
		data, _ := os.ReadFile(pgidFile)
		pgid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		time.Sleep(50 * time.Millisecond)
	}
	if pgid == 0 {
		t.Fatal("the shell line never started")
	}
	p.keys("Escape")
	p.waitFor("stopped")
	deadline = time.Now().Add(10 * time.Second)
	for syscall.Kill(-pgid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d of the stopped line still has processes", pgid)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// 50 MB of output: otter's memory stays under twice its idle size.
	pid := otterPID(t, home)
	idle := procKB(t, pid, "VmRSS")
	p.keys("!yes 0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklm | head -c 50000000", "Enter")
	p.waitFor("the whole output", "exit 0")
	peak, after := procKB(t, pid, "VmHWM"), procKB(t, pid, "VmRSS")
	t.Logf("otter memory: idle %d kB, after 50 MB of ! output %d kB, peak %d kB", idle, after, peak)
	if after > 2*idle {
		t.Errorf("otter grew from %d kB idle to %d kB after a 50 MB ! output (over 2×)", idle, after)
	}

	// `otter "hello"` in the now trusted project answers at once.
	p.keys("C-c")
	p.keys("C-c")
	deadline = time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(p.exitFile); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("otter did not exit after ctrl+c twice")
		}
		time.Sleep(100 * time.Millisecond)
	}
	q := startTmuxAs(t, "otter-hello", dir, fakeModelConfig(model.URL), 100, 40, "--cwd", sub, "hello")
	q.waitFor("Answer number 4.")
	if sys := model.Requests()[3].System; !inOrderIn(sys, "USER-RULE", "ROOT-RULE", "SUB-RULE") {
		t.Errorf("otter \"hello\" in the trusted project:\n%s", sys)
	}
}

// inOrderIn reports whether every string of want is in s, in that order.
func inOrderIn(s string, want ...string) bool {
	for _, w := range want {
		i := strings.Index(s, w)
		if i < 0 {
			return false
		}
		s = s[i+len(w):]
	}
	return true
}

// otterPID finds the otter process whose HOME is home.
func otterPID(t *testing.T, home string) int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || filepath.Base(exe) != "otter" {
			continue
		}
		if env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ")); err == nil && bytes.Contains(env, []byte("\x00HOME="+home+"\x00")) {
			return pid
		}
	}
	t.Fatalf("no otter process runs with HOME=%s", home)
	return 0
}

// procKB reads a kB field (VmRSS, VmHWM) of /proc/PID/status.
func procKB(t *testing.T, pid int, field string) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return kb
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
