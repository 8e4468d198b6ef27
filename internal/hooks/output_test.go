package hooks

import (
	"context"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// spillNamed returns the file a cut output's note names, failing when the
// note is missing.
func spillNamed(t *testing.T, text string) string {
	t.Helper()
	m := regexp.MustCompile(`\[output truncated: showing \d+ of \d+ characters; the full output is in (\S+)\]$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no note naming the whole output at the end of %.200q … %q", text, text[max(len(text)-200, 0):])
	}
	return m[1]
}

// A hook's long stderr (exit 2) and long stdout (context) are cut to
// Env.MaxOutputChars, each with the note a cut tool result ends with,
// naming the file that holds the whole; a JSON answer cut short is not
// read, and the user is told where it is.
func TestLongHookOutputIsCutAndSpilled(t *testing.T) {
	dir, spill := t.TempDir(), t.TempDir()
	env := Env{ProjectDir: dir, MaxOutputChars: 1000, SpillDir: spill}
	loud := script(t, dir, "loud.sh", `cat >/dev/null; { printf 'start '; head -c 1000000 /dev/zero | tr '\0' e; echo ' end'; } >&2; exit 2`)
	s := mustSet(t, Config{PreToolUse: {{Hooks: []Command{{Command: loud}}}}})
	out := s.Run(context.Background(), PreToolUse, Input{ToolName: "x"}, env)
	if !out.Block || !strings.HasPrefix(out.Reason, "start eee") || len(out.Reason) > 1000+300 {
		t.Fatalf("exit 2 with 1 MB of stderr: block %v, a reason of %d bytes, want the first 1000 characters", out.Block, len(out.Reason))
	}
	if !strings.Contains(out.Reason, "showing 1000 of 1000011 characters") {
		t.Errorf("the note does not say how long stderr was: %q", out.Reason[1000:])
	}
	if whole, err := os.ReadFile(spillNamed(t, out.Reason)); err != nil || len(whole) != 1000011 || !strings.HasSuffix(string(whole), "e end\n") {
		t.Errorf("the spill file holds %d bytes (%v), want the whole stderr", len(whole), err)
	}

	chatty := script(t, dir, "chatty.sh", `cat >/dev/null; seq 1 100000`)
	s = mustSet(t, Config{UserPromptSubmit: {{Hooks: []Command{{Command: chatty}}}}})
	out = s.Run(context.Background(), UserPromptSubmit, Input{Prompt: "hi"}, env)
	if len(out.Context) != 1 || !strings.HasPrefix(out.Context[0], "1\n2\n3\n") || len(out.Context[0]) > 1000+300 {
		t.Fatalf("context %d entries, first of %d bytes; want one, cut to 1000 characters", len(out.Context), len(out.Context[0]))
	}
	if whole, err := os.ReadFile(spillNamed(t, out.Context[0])); err != nil || !strings.HasSuffix(string(whole), "\n99999\n100000\n") {
		t.Errorf("the spill file does not hold the whole stdout (%v)", err)
	}

	bigJSON := script(t, dir, "big.sh", `cat >/dev/null; printf '{"decision":"block","reason":"'; head -c 5000 /dev/zero | tr '\0' r; echo '"}'`)
	s = mustSet(t, Config{PreToolUse: {{Hooks: []Command{{Command: bigJSON}}}}})
	out = s.Run(context.Background(), PreToolUse, Input{ToolName: "x"}, env)
	if out.Block || len(out.Failures) != 1 || !strings.Contains(out.Failures[0].String(), "printed a JSON answer longer than otter reads, so it was not read: [output truncated: showing 1000 of 5033 characters; the full output is in "+spill) {
		t.Errorf("a JSON answer cut short: %+v", out)
	}
}

// A hook that prints 32 MiB on each stream does not grow otter's heap by
// anything like it: what is kept is the cap, the rest goes to the spill
// file.
func TestHookOutputDoesNotGrowMemory(t *testing.T) {
	dir, spill := t.TempDir(), t.TempDir()
	flood := script(t, dir, "flood.sh", `cat >/dev/null; head -c 33554432 /dev/zero | tr '\0' a; head -c 33554432 /dev/zero | tr '\0' b >&2`)
	s := mustSet(t, Config{PreToolUse: {{Hooks: []Command{{Command: flood}}}}})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out := s.Run(context.Background(), PreToolUse, Input{ToolName: "x"}, Env{ProjectDir: dir, SpillDir: spill})
	runtime.ReadMemStats(&after)
	if grown := (after.TotalAlloc - before.TotalAlloc) >> 20; grown > 16 {
		t.Errorf("running a hook that printed 32 MiB on stdout and on stderr allocated %d MiB", grown)
	}
	if out.Ran != 1 || len(out.Failures) != 0 || out.Block {
		t.Errorf("outcome %+v", out)
	}
}
