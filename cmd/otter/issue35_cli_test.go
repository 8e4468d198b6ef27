package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
)

// processStatus is the exit status of a run of the binary: 0 for no error.
func processStatus(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatalf("otter did not run: %v", err)
	return -1
}

// `otter mcp list` exits 1 when an enabled server did not connect, so
// that a script can tell (it exited 0 with a server failed); it still
// prints the whole list. All connected is 0, and a disabled server does
// not count.
func TestMCPListExitStatus(t *testing.T) {
	t.Parallel()
	bin := testpeer.Otter(t)
	good := fmt.Sprintf("[[mcp.servers]]\nname = \"good\"\nurl = %q\ntransport = \"http\"\n", httpToolServer(t, "good", "echo"))
	broken := "\n[[mcp.servers]]\nname = \"broken\"\ncommand = \"/bin/sh\"\nargs = [\"-c\", \"echo 'cannot open the database' >&2; exit 3\"]\n"
	for _, tc := range []struct {
		name, cfg string
		status    int
	}{
		{"all connected", good, 0},
		{"one failed", good + broken, 1},
		{"the failed one disabled", good + broken + "enabled = false\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home, env := otterHome(t)
			file := filepath.Join(home, "xdg_config_home", "otter", "config.toml")
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(tc.cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"mcp", "list"}, {"mcp", "list", "--json"}} {
				out, errOut, err := runIn(bin, home, env, args...)
				if got := processStatus(t, err); got != tc.status {
					t.Errorf("otter %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), got, tc.status, out, errOut)
				}
				if !strings.Contains(out, "good") || strings.Contains(tc.cfg, "broken") && !strings.Contains(out, "broken") {
					t.Errorf("otter %s: the list is not printed whole:\n%s", strings.Join(args, " "), out)
				}
				if tc.status == 1 && !strings.Contains(errOut, "otter: 1 of the 2 enabled MCP servers did not connect: broken (failed)") {
					t.Errorf("otter %s: stderr does not name the server that failed:\n%s", strings.Join(args, " "), errOut)
				}
				if tc.status == 0 && errOut != "" {
					t.Errorf("otter %s: stderr %q", strings.Join(args, " "), errOut)
				}
			}
		})
	}
	out, _, err := runIn(bin, t.TempDir(), os.Environ(), "mcp", "list", "--help")
	if err != nil || !strings.Contains(out, "1 when one or more failed") {
		t.Errorf("otter mcp list --help does not say the exit status (%v):\n%s", err, out)
	}
}

// `otter mcp import` writes no token it reads into the TOML it prints (or
// writes): secret env values, an Authorization header and well-known
// tokens become ${VAR} references, and stderr lists the variables to set.
func TestMCPImportWritesReferencesForSecrets(t *testing.T) {
	t.Parallel()
	bin := testpeer.Otter(t)
	home, env := otterHome(t)
	const ghToken, bearer, key = "ghp_0123456789abcdefghijABCDEFGHIJ012345", "eyJhbGciOiJIUzI1NiJ9.c2VjcmV0.sig", "sk-proj-0123456789abcdef"
	mcpJSON := `{"mcpServers": {
  "github": {"command": "github-mcp-server", "args": ["stdio"], "env": {"GITHUB_TOKEN": "` + ghToken + `", "GITHUB_HOST": "github.com", "OTHER": "${ALREADY_SET}"}},
  "remote": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ` + bearer + `", "Accept-Language": "en"}},
  "search": {"command": "search-mcp", "args": ["--api-key", "` + key + `", "--verbose"]}
}}`
	file := filepath.Join(home, ".mcp.json")
	if err := os.WriteFile(file, []byte(mcpJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runIn(bin, home, env, "mcp", "import", file)
	if err != nil {
		t.Fatalf("otter mcp import: %v\n%s", err, errOut)
	}
	t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
	for _, secret := range []string{ghToken, bearer, key} {
		if strings.Contains(out, secret) || strings.Contains(errOut, secret) {
			t.Errorf("the token %s is copied:\n%s\n%s", secret, out, errOut)
		}
	}
	for _, want := range []string{`GITHUB_TOKEN = "${GITHUB_TOKEN}"`, `GITHUB_HOST = "github.com"`, `OTHER = "${ALREADY_SET}"`,
		`Authorization = "Bearer ${REMOTE_TOKEN}"`, `Accept-Language = "en"`, `"--api-key", "${SEARCH_API_KEY}", "--verbose"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the TOML lacks %s:\n%s", want, out)
		}
	}
	for _, want := range []string{"set these environment variables (their values are in " + file + ")",
		"GITHUB_TOKEN    server github, env.GITHUB_TOKEN", "REMOTE_TOKEN    server remote, headers.Authorization", "SEARCH_API_KEY  server search, args[1]"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	// What it prints is a config otter reads, the references resolved.
	cfg := filepath.Join(home, "imported.toml")
	if err := os.WriteFile(cfg, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	env = append(env, "GITHUB_TOKEN=x", "REMOTE_TOKEN=y", "SEARCH_API_KEY=z", "ALREADY_SET=w")
	if _, errOut, err := runIn(bin, home, env, "config", "validate", cfg); err != nil {
		t.Errorf("otter config validate on the imported TOML: %v\n%s", err, errOut)
	}
}

// `otter hooks import` of a Claude Code hook with matcher "Bash" keeps it
// and warns on stderr that no otter tool is named Bash, so it never runs.
func TestHooksImportWarnsOfClaudeToolMatchers(t *testing.T) {
	t.Parallel()
	bin := testpeer.Otter(t)
	home, env := otterHome(t)
	settings := `{"hooks": {
  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "check-command.sh"}]},
                 {"matcher": "Edit|mcp__github__.*", "hooks": [{"type": "command", "command": "log.sh"}]},
                 {"matcher": "mcp__github__.*", "hooks": [{"type": "command", "command": "gh.sh"}]}],
  "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "hello.sh"}]}]
}}`
	file := filepath.Join(home, "settings.json")
	if err := os.WriteFile(file, []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runIn(bin, home, env, "hooks", "import", file)
	if err != nil {
		t.Fatalf("otter hooks import: %v\n%s", err, errOut)
	}
	t.Logf("stderr:\n%s", errOut)
	if !strings.Contains(out, `matcher = "Bash"`) {
		t.Errorf("the Bash hook is not kept:\n%s", out)
	}
	want := `hooks import: warning: PreToolUse matcher "Bash" matches no otter tool: none is named Bash (that is a Claude Code tool), so this hook will never run`
	if !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
	if !strings.Contains(errOut, `PreToolUse matcher "Edit|mcp__github__.*": no otter tool is named Edit (that is a Claude Code tool); the hook runs only for the rest of the matcher`) {
		t.Errorf("stderr does not warn of Edit in a mixed matcher:\n%s", errOut)
	}
	if n := strings.Count(errOut, "warning:"); n != 2 {
		t.Errorf("%d warnings, want 2 (none for mcp__github__.* nor SessionStart's startup):\n%s", n, errOut)
	}
}

// Issue 35 point 9: `otter -p "/review:pr 42"` in a clone whose project
// defines /review:pr but is not trusted says that the command is the
// untrusted project's and how trusting it enables it, exits 2, and sends
// nothing to the model (it went as text before). A skill likewise.
func TestPromptRefusesTheUntrustedProjectsCommand(t *testing.T) {
	t.Parallel()
	bin := testpeer.Otter(t)
	home, env := otterHome(t)
	proj := filepath.Join(home, "clone")
	putFile(t, filepath.Join(proj, ".otter", "commands", "review", "pr.md"), "---\ndescription: Review a pull request\n---\nReview pull request #$1.\n", 0o644)
	putFile(t, filepath.Join(proj, ".claude", "skills", "release", "SKILL.md"), "---\nname: release\ndescription: Cut a release.\n---\nSteps.\n", 0o644)
	srv := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"ok"}})
	cfg := promptConfig(t, srv, "")
	for _, tc := range []struct{ prompt, want string }{
		{"/review:pr 42", "/review:pr is a command of the project " + proj + ", which is not trusted; trusting the project enables it: run `otter trust` in " + proj},
		{"/release now", "/release is a skill of the project " + proj + ", which is not trusted"},
	} {
		out, errOut, err := runIn(bin, proj, env, "--config", cfg, "-p", tc.prompt)
		if got := processStatus(t, err); got != 2 {
			t.Errorf("otter -p %q: exit %d, want 2\nstdout:\n%s\nstderr:\n%s", tc.prompt, got, out, errOut)
		}
		if !strings.Contains(errOut, tc.want) {
			t.Errorf("otter -p %q: stderr lacks %q:\n%s", tc.prompt, tc.want, errOut)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the untrusted project's command reached the model (%d requests)", n)
	}
}

// Issue 35 point 10d: a trusted project's skill reaches the model under
// the project's heading, never under "Instructions from the user's
// configuration" (where the user's own system_prompt goes), so the model
// does not take it for something the user chose.
func TestProjectSkillUnderTheProjectsHeading(t *testing.T) {
	t.Parallel()
	bin := testpeer.Otter(t)
	home, env := otterHome(t)
	proj := filepath.Join(home, "clone")
	putFile(t, filepath.Join(proj, ".otter", "skills", "release", "SKILL.md"), "---\nname: release\ndescription: Cut a release.\n---\nSteps.\n", 0o644)
	if out, errOut, err := runIn(bin, proj, env, "trust", "--yes"); err != nil {
		t.Fatalf("otter trust --yes: %v\n%s%s", err, out, errOut)
	}
	srv := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"ok"}})
	cfg := promptConfig(t, srv, "")
	cfgText, _ := os.ReadFile(cfg)
	// The user's own system_prompt, in [agent], which promptConfig writes first.
	fixed := strings.Replace(string(cfgText), "model = \"fake-model\"\n", "model = \"fake-model\"\nsystem_prompt = \"Answer in French.\"\n", 1)
	if err := os.WriteFile(cfg, []byte(fixed), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, err := runIn(bin, proj, env, "--config", cfg, "-p", "hello"); err != nil {
		t.Fatalf("otter -p: %v\n%s%s", err, out, errOut)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the model got %d requests, want 1", len(reqs))
	}
	sys := reqs[0].System
	skill := strings.Index(sys, "- release: Cut a release.")
	heading := strings.Index(sys, "## Skills from the project "+proj)
	user := strings.Index(sys, "# Instructions from the user's configuration")
	if skill < 0 || heading < 0 || heading > skill || user < 0 || user < skill {
		t.Errorf("the project's skill is not under the project's heading, before the user's configuration:\n%s", sys)
	}
}
