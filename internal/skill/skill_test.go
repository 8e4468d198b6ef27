package skill

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fixture(t *testing.T) (user, proj string) {
	user, proj = t.TempDir(), t.TempDir()
	write(t, filepath.Join(user, "pdf-forms", "SKILL.md"), "---\nname: pdf-forms\ndescription: Fill PDF forms.\n---\nUser body")
	write(t, filepath.Join(proj, "pdf-forms", "SKILL.md"), "---\nname: pdf-forms\ndescription: Fill the team's PDF forms.\n---\n# PDF forms\nRead reference/fields.md first.")
	write(t, filepath.Join(proj, "pdf-forms", "reference", "fields.md"), "Field names: a, b, c")
	write(t, filepath.Join(proj, "pdf-forms", "scripts", "fill.py"), "print('x')")
	write(t, filepath.Join(proj, "no-desc", "SKILL.md"), "---\nname: no-desc\n---\nx")
	write(t, filepath.Join(proj, "wrong", "SKILL.md"), "---\nname: other\ndescription: d\n---\nx")
	write(t, filepath.Join(proj, "plain", "SKILL.md"), "no header")
	write(t, filepath.Join(proj, "not-a-skill", "README.md"), "x")
	write(t, filepath.Join(proj, "secret.txt"), "outside")
	return user, proj
}

func TestDiscover(t *testing.T) {
	user, proj := fixture(t)
	skills, problems := Discover([]Root{{Path: user, Scope: User}, {Path: proj, Scope: Project}, {Path: filepath.Join(proj, "missing"), Scope: Project}})
	if len(skills) != 1 || skills[0].Description != "Fill the team's PDF forms." || skills[0].Scope != Project {
		t.Fatalf("skills %+v", skills)
	}
	all := ""
	for _, p := range problems {
		all += p.Error() + "\n"
	}
	for _, want := range []string{
		filepath.Join(proj, "no-desc", "SKILL.md") + ":1: the header has no description",
		filepath.Join(proj, "wrong", "SKILL.md") + `:2: name "other" must be the name of its folder`,
		filepath.Join(proj, "plain", "SKILL.md") + ":1: SKILL.md must start with a YAML header",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack %q:\n%s", want, all)
		}
	}
	if c := Catalog(skills, "/proj"); !strings.Contains(c, "- pdf-forms: Fill the team's PDF forms.") || strings.Contains(c, "Read reference") {
		t.Fatalf("catalog %q", c)
	}
}

func call(t *testing.T, skills []Skill, args string) (string, bool) {
	t.Helper()
	res, err := Tool(func() []Skill { return skills }).Call(context.Background(), json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

func TestToolLoadsAndReadsConfined(t *testing.T) {
	_, proj := fixture(t)
	skills, _ := Discover([]Root{{Path: proj, Scope: Project}})
	text, isErr := call(t, skills, `{"name":"pdf-forms"}`)
	if isErr || !strings.Contains(text, "Read reference/fields.md first.") || !strings.Contains(text, "- reference/fields.md") || !strings.Contains(text, "- scripts/fill.py") {
		t.Fatalf("load: %q", text)
	}
	if text, isErr = call(t, skills, `{"name":"pdf-forms","file":"reference/fields.md"}`); isErr || text != "Field names: a, b, c" {
		t.Fatalf("read: %q", text)
	}
	for _, bad := range []string{"../secret.txt", "/etc/passwd", "reference/../../secret.txt"} {
		if text, isErr = call(t, skills, `{"name":"pdf-forms","file":"`+bad+`"}`); !isErr || !strings.Contains(text, "outside the skill's folder") {
			t.Errorf("%s: %q", bad, text)
		}
	}
	// A symbolic link out of the folder is refused too.
	if err := os.Symlink(filepath.Join(proj, "secret.txt"), filepath.Join(proj, "pdf-forms", "link.txt")); err != nil {
		t.Fatal(err)
	}
	if text, isErr = call(t, skills, `{"name":"pdf-forms","file":"link.txt"}`); !isErr || strings.Contains(text, "outside\n") || text == "outside" {
		t.Fatalf("symlink: %q", text)
	}
	if text, _ = call(t, skills, `{"name":"nope"}`); !strings.Contains(text, `no skill "nope"; the skills are: pdf-forms`) {
		t.Fatalf("%q", text)
	}
	if _, err := skills[0].ReadFile("../x"); !errors.Is(err, ErrOutside) {
		t.Fatal(err)
	}
}

// TestDiscoverConfinesAProjectsSkills: in a project root confined to the
// project, a skill folder linked outside and a SKILL.md linked outside are
// not read, each reported with where it leads; a named pipe called
// SKILL.md, and a bundled file that is a pipe, are refused at once. Before,
// the outside SKILL.md was loaded and a pipe hung otter.
func TestDiscoverConfinesAProjectsSkills(t *testing.T) {
	base := t.TempDir()
	proj, outside := filepath.Join(base, "proj"), filepath.Join(base, "outside")
	skills := filepath.Join(proj, ".otter", "skills")
	write(t, filepath.Join(outside, "away", "SKILL.md"), "---\nname: away\ndescription: Away.\n---\nOUTSIDE-BODY")
	write(t, filepath.Join(outside, "linked.md"), "---\nname: linked\ndescription: Linked.\n---\nOUTSIDE-BODY")
	write(t, filepath.Join(skills, "good", "SKILL.md"), "---\nname: good\ndescription: Good.\n---\nbody")
	if err := os.Symlink(filepath.Join(outside, "away"), filepath.Join(skills, "away")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(skills, "linked"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "linked.md"), filepath.Join(skills, "linked", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(skills, "piped", "SKILL.md"), filepath.Join(skills, "good", "pipe.txt")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	type result struct {
		skills   []Skill
		problems []error
		text     string
		isErr    bool
	}
	done := make(chan result, 1)
	go func() {
		s, p := Discover([]Root{{Path: skills, Scope: Project, Confine: proj}})
		res, err := Tool(func() []Skill { return s }).Call(context.Background(), json.RawMessage(`{"name":"good","file":"pipe.txt"}`))
		if err != nil {
			panic(err)
		}
		done <- result{s, p, res.Content[0].(*mcp.TextContent).Text, res.IsError}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Discover and reading pipe.txt did not return within 5 s")
	}
	if len(r.skills) != 1 || r.skills[0].Name != "good" {
		t.Errorf("skills %+v, want good alone", r.skills)
	}
	var all []string
	for _, p := range r.problems {
		all = append(all, p.Error())
	}
	for _, want := range []string{
		"skill folder " + filepath.Join(skills, "away") + " links to " + filepath.Join(outside, "away") + ", outside the project",
		"skill file " + filepath.Join(skills, "linked", "SKILL.md") + " links to " + filepath.Join(outside, "linked.md") + ", outside the project",
		"skill file " + filepath.Join(skills, "piped", "SKILL.md") + " is a named pipe (FIFO)",
	} {
		if !strings.Contains(strings.Join(all, "\n"), want) {
			t.Errorf("problems do not say %q:\n%s", want, strings.Join(all, "\n"))
		}
	}
	if !r.isErr || !strings.Contains(r.text, "pipe.txt of skill good is a named pipe (FIFO)") {
		t.Errorf("reading the bundled pipe: %q", r.text)
	}
}
