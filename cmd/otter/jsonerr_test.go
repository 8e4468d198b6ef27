package main

import (
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/testpeer"
)

// TestFlagErrorsComeOutAsJSON runs the real binary with wrong flags and
// JSON output asked for: the error comes out on stdout as JSON (-p's
// result object, or a command's {"is_error", "error"}), the same words as
// the stderr line, with exit status 2. Before, `-c -r X`, `--fork-session`
// alone, `--max-turns -1`, `--output-format json2`, a flag that does not
// parse and an unknown flag left stdout empty, while errors found later
// (no provider) gave JSON. Text output gets no JSON.
func TestFlagErrorsComeOutAsJSON(t *testing.T) {
	t.Parallel()
	bin := testpeer.Otter(t)
	home, env := otterHome(t)
	for _, tc := range []struct {
		args   []string
		prompt bool // -p's result object, else {"is_error","error"}
		want   string
	}{
		{[]string{"-c", "-r", "X", "-p", "hi", "--output-format", "json"}, true, "give --continue or --resume, not both"},
		{[]string{"--fork-session", "-p", "hi", "--output-format", "json"}, true, "--fork-session needs --continue or --resume"},
		{[]string{"--max-turns", "-1", "-p", "hi", "--output-format", "json"}, true, "--max-turns -1: give a positive number"},
		{[]string{"-p", "hi", "--output-format", "json2"}, true, `--output-format "json2": use text, json or stream-json`},
		{[]string{"--max-turns", "abc", "-p", "hi", "--output-format=stream-json"}, true, `invalid argument "abc" for "--max-turns" flag`},
		{[]string{"sessions", "list", "--json", "--bogus"}, false, "unknown flag: --bogus"},
		{[]string{"sessions", "show", "--json", "--markdown", "x"}, false, "[json markdown] were all set"},
		{[]string{"mcp", "list", "--json", "--cwd", home + "/missing"}, false, "no such directory"},
	} {
		stdout, stderr, err := runIn(bin, home, env, tc.args...)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("otter %s: %v, want exit status 2", strings.Join(tc.args, " "), err)
			continue
		}
		var got struct {
			Type    string `json:"type"`
			IsError bool   `json:"is_error"`
			Error   string `json:"error"`
		}
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Errorf("otter %s: stdout is not JSON (%v): %q; stderr %q", strings.Join(tc.args, " "), err, stdout, stderr)
			continue
		}
		said := strings.TrimSpace(strings.TrimPrefix(stderr, "otter: "))
		if !got.IsError || got.Error != said || !strings.Contains(got.Error, tc.want) || (got.Type == "result") != tc.prompt {
			t.Errorf("otter %s: stdout %s; want is_error and the stderr line %q", strings.Join(tc.args, " "), stdout, said)
		}
	}
	if out, _, err := runIn(bin, home, env, "--max-turns", "-1", "-p", "hi"); err == nil || len(out) != 0 {
		t.Errorf("text output: %v, stdout %q; want an error and nothing on stdout", err, out)
	}
}
