//go:build !race

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
	"github.com/otter-sh/otter/internal/toolname"
)

// TestHookFloodKeepsOtterSmall: through the real binary (otter -p, the fake
// model calling a tool), a PreToolUse hook that prints 500 MB on stdout,
// and one that exits 2 with 100 MB of stderr, leave otter under 200 MiB
// resident; the block reason the model reads is cut to [tools]
// max_output_chars and names the file that holds the whole stderr. Before,
// a hook's output was read whole: in this test 500 MB took otter to 1,545
// MiB, the 100 MB block reason to 1,185 MiB, and the reason went to the
// model whole.
func TestHookFloodKeepsOtterSmall(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the peak resident memory from /proc")
	}
	t.Parallel()
	bin := testpeer.Otter(t)
	const limitMiB, maxChars = 200, 30000
	mark := toolname.Qualified("mark", "mark")
	for _, tc := range []struct {
		name, hook string
		blocks     bool
	}{
		{"500 MB on stdout", `cat >/dev/null; head -c 500000000 /dev/zero | tr '\0' a`, false},
		{"exit 2 with 100 MB on stderr", `cat >/dev/null; head -c 100000000 /dev/zero | tr '\0' b >&2; exit 2`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home, env := otterHome(t)
			// Beside the home, not in it: the mark server runs sandboxed,
			// and the home holds otter's own folders, which it may not
			// touch (a folder holding them is not writable as a whole).
			saw := filepath.Join(t.TempDir(), "saw.txt")
			hook := filepath.Join(home, "flood.sh")
			putFile(t, hook, "#!/bin/bash\n"+tc.hook+"\n", 0o755)
			srv := llmtest.New(t, llmtest.Anthropic,
				llmtest.Reply{Calls: []llmtest.Call{{ID: "m1", Name: mark, Args: `{"text":"ran"}`}}},
				llmtest.Reply{Text: []string{"done"}},
			)
			cfg := promptConfig(t, srv, fmt.Sprintf(`context_window = 200000

[tools]
max_output_chars = %d

[permissions]
%q = "allow"

%s
[[hooks.PreToolUse]]
[[hooks.PreToolUse.hooks]]
type = "command"
command = %q
timeout = 600
`, maxChars, mark, markServerTOML(t, saw), hook))
			cmd := exec.Command(bin, "--config", cfg, "-p", "mark it")
			cmd.Dir, cmd.Env = home, env
			_, stderr, peak, err := runMeasured(t, cmd)
			t.Logf("otter -p with a PreToolUse hook printing %s: peak %d MiB", tc.name, peak)
			if err != nil {
				t.Fatalf("otter -p: %v\n%.2000s", err, stderr)
			}
			if peak > limitMiB {
				t.Errorf("otter peaked at %d MiB, want under %d", peak, limitMiB)
			}
			res, data := markCalled(t, srv, saw, stderr)
			if !tc.blocks {
				if data != "ran\n" || len(res) != 1 || res[0].IsError {
					t.Errorf("the hook passed, so the tool should run: it saw %q, result %+v", data, res)
				}
				return
			}
			if data != "" || len(res) != 1 || !res[0].IsError {
				t.Fatalf("the hook blocked, so the tool should not run: it saw %q, result %.300v", data, res)
			}
			text := res[0].Text
			if strings.Count(text, "b") < maxChars || len(text) > maxChars+1000 {
				t.Errorf("the block reason the model reads is %d bytes, want the first %d characters of stderr and a note", len(text), maxChars)
			}
			outputs := filepath.Join(home, "xdg_cache_home", "otter", "outputs")
			m := regexp.MustCompile(`\[output truncated: showing \d+ of 100000000 characters; the full output is in (` + regexp.QuoteMeta(outputs) + `/\S+)\]`).FindStringSubmatch(text)
			if m == nil {
				t.Fatalf("the block reason does not end with a note naming the file under %s: …%q", outputs, text[max(len(text)-300, 0):])
			}
			if fi, err := os.Stat(m[1]); err != nil || fi.Size() != 100000000 {
				t.Errorf("the spill file %s should hold the whole stderr (%v)", m[1], err)
			}
		})
	}
}
