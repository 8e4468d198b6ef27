package localtools

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/sandbox"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/render"
	"github.com/otter-sh/otter/internal/testpeer"
	"github.com/otter-sh/otter/internal/tool"
)

// project makes a project with files, and the tools over it.
func project(t *testing.T, files map[string]string) (*Tools, string) {
	t.Helper()
	dir := t.TempDir()
	testpeer.WriteTree(t, dir, files)
	return New(Options{Dir: dir, SpillDir: t.TempDir()}), dir
}

// call calls the named tool with args through st, returning its text and
// whether it reported an error.
func call(t *testing.T, tt *Tools, st *State, name, args string) (string, bool, *tool.Result) {
	t.Helper()
	for _, tl := range tt.List() {
		if tl.Info().Name == name {
			res, err := tl.Call(WithState(context.Background(), st), json.RawMessage(args))
			if err != nil {
				t.Fatalf("%s %s: %v", name, args, err)
			}
			return render.Model(res), res.IsError, res
		}
	}
	t.Fatalf("no tool %s", name)
	return "", false, nil
}

func gate(t *testing.T, tt *Tools, st *State, name, args string) tool.Gate {
	t.Helper()
	for _, tl := range tt.List() {
		if tl.Info().Name == name {
			return tl.(tool.Gated).Gate(WithState(context.Background(), st), json.RawMessage(args))
		}
	}
	t.Fatalf("no tool %s", name)
	return tool.Gate{}
}

func TestReadFilePagesAndRefuses(t *testing.T) {
	var long strings.Builder
	for i := 1; i <= 2500; i++ {
		long.WriteString("line\n")
	}
	tt, dir := project(t, map[string]string{"a.txt": "one\ntwo\nthree\n", "long.txt": long.String(), "bin.dat": "\x00\x01\x02", "empty": ""})
	st := tt.NewState()
	if text, isErr, _ := call(t, tt, st, NameReadFile, `{"path":"a.txt"}`); isErr || text != "     1\tone\n     2\ttwo\n     3\tthree\n" {
		t.Errorf("read a.txt = %q (error %v)", text, isErr)
	}
	text, _, _ := call(t, tt, st, NameReadFile, `{"path":"long.txt"}`)
	if !strings.Contains(text, "[lines 1–2000 of 2500; read on with offset 2001]") {
		t.Errorf("a long file is not paged: %q", text[len(text)-100:])
	}
	if text, _, _ := call(t, tt, st, NameReadFile, `{"path":"long.txt","offset":2499,"limit":5}`); !strings.HasPrefix(text, "  2499\tline\n  2500\tline\n") {
		t.Errorf("offset: %q", text)
	}
	if text, isErr, _ := call(t, tt, st, NameReadFile, `{"path":"bin.dat"}`); !isErr || !strings.Contains(text, "is a binary file") {
		t.Errorf("binary: %q", text)
	}
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if text, isErr, _ := call(t, tt, st, NameReadFile, `{"path":"pipe"}`); !isErr || !strings.Contains(text, "named pipe") {
		t.Errorf("fifo: %q", text)
	}
	if g := gate(t, tt, st, NameReadFile, `{"path":"a.txt"}`); g.Ask {
		t.Errorf("reading inside the project asks: %+v", g)
	}
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if g := gate(t, tt, st, NameReadFile, `{"path":"link.txt"}`); !g.Ask || !strings.Contains(g.Reason, outside) {
		t.Errorf("a link out of the project does not ask, naming where it leads: %+v", g)
	}
}

func TestFindAndSearchHonourGitignore(t *testing.T) {
	tt, _ := project(t, map[string]string{
		".git/HEAD": "", ".gitignore": "build/\n*.log\n",
		"src/a.go": "package a\nfunc Hello() {}\n", "src/deep/b.go": "package b\n// hello there\n",
		"build/c.go": "func Hello() {}\n", "x.log": "Hello\n", "README.md": "hello\n",
	})
	st := tt.NewState()
	text, _, _ := call(t, tt, st, NameFindFiles, `{"pattern":"**/*.go"}`)
	if got := strings.Fields(text); !slices.Equal(sorted(got), []string{"src/a.go", "src/deep/b.go"}) {
		t.Errorf("find **/*.go = %q", got)
	}
	if text, _, _ := call(t, tt, st, NameFindFiles, `{"pattern":"*.{md,log}"}`); text != "README.md" {
		t.Errorf("find *.{md,log} = %q", text)
	}
	text, _, _ = call(t, tt, st, NameSearchFiles, `{"pattern":"hello","ignore_case":true,"glob":"*.go"}`)
	if text != "src/a.go:2: func Hello() {}\nsrc/deep/b.go:2: // hello there" {
		t.Errorf("search = %q", text)
	}
	if text, _, _ := call(t, tt, st, NameSearchFiles, `{"pattern":"^package"}`); strings.Count(text, "\n") != 1 {
		t.Errorf("^ anchors at each line: %q", text)
	}
}

func sorted(s []string) []string { slices.Sort(s); return s }

func TestEditNeedsAFreshReadAndOneMatch(t *testing.T) {
	tt, dir := project(t, map[string]string{"f.go": "a := 1\nb := 1\n"})
	st := tt.NewState()
	if text, isErr, _ := call(t, tt, st, NameEditFile, `{"path":"f.go","old_string":"a := 1","new_string":"a := 2"}`); !isErr || !strings.Contains(text, "has not been read") {
		t.Errorf("edit before a read: %q", text)
	}
	call(t, tt, st, NameReadFile, `{"path":"f.go"}`)
	if text, isErr, _ := call(t, tt, st, NameEditFile, `{"path":"f.go","old_string":":= 1","new_string":":= 3"}`); !isErr || !strings.Contains(text, "occurs 2 times in f.go (lines 1, 2)") {
		t.Errorf("ambiguous: %q", text)
	}
	g := gate(t, tt, st, NameEditFile, `{"path":"f.go","old_string":"a := 1","new_string":"a := 2"}`)
	if !g.Ask || !strings.Contains(g.Diff, "-a := 1\n+a := 2\n") || !slices.Equal(g.Rules, editRules) {
		t.Errorf("the edit's question: %+v", g)
	}
	text, isErr, res := call(t, tt, st, NameEditFile, `{"path":"f.go","old_string":"a := 1","new_string":"a := 2"}`)
	if isErr {
		t.Fatal(text)
	}
	if c, ok := ChangeOf(res); !ok || !strings.HasSuffix(c.Path, "f.go") || c.Created {
		t.Errorf("ChangeOf = %+v, %v", c, ok)
	}
	// Its own change does not make the file stale; someone else's does.
	if _, isErr, _ := call(t, tt, st, NameEditFile, `{"path":"f.go","old_string":":= 1","new_string":":= 4","replace_all":true}`); isErr {
		t.Error("a second edit after the tool's own was refused")
	}
	if err := os.WriteFile(filepath.Join(dir, "f.go"), []byte("a := 2\nb := 4\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if text, isErr, _ := call(t, tt, st, NameEditFile, `{"path":"f.go","old_string":"a := 2","new_string":"a := 5"}`); !isErr || !strings.Contains(text, "changed on disk since it was last read") {
		t.Errorf("stale: %q", text)
	}
	if text, isErr, _ := call(t, tt, st, NameWriteFile, `{"path":"f.go","content":"x"}`); !isErr || !strings.Contains(text, "changed on disk") {
		t.Errorf("write over a stale file: %q", text)
	}
	if text, isErr, res := call(t, tt, st, NameWriteFile, `{"path":"new/dir/g.txt","content":"hi\n"}`); isErr || !strings.HasPrefix(text, "Created new/dir/g.txt") {
		t.Errorf("create: %q", text)
	} else if c, _ := ChangeOf(res); !c.Created {
		t.Errorf("created not said: %+v", c)
	}
	if got := st.FilesChanged(); len(got) != 2 {
		t.Errorf("files changed: %q", got)
	}
}

type keep struct{ got []FileChange }

func (k *keep) BeforeChange(_ context.Context, c FileChange) error {
	k.got = append(k.got, c)
	return nil
}

func TestCheckpointerSeesEachChangeFirst(t *testing.T) {
	tt, _ := project(t, map[string]string{"f.txt": "old\n"})
	st := tt.NewState()
	k := &keep{}
	st.SetCheckpointer(k)
	call(t, tt, st, NameReadFile, `{"path":"f.txt"}`)
	call(t, tt, st, NameEditFile, `{"path":"f.txt","old_string":"old","new_string":"new"}`)
	call(t, tt, st, NameWriteFile, `{"path":"g.txt","content":"g"}`)
	if len(k.got) != 2 || string(k.got[0].Before) != "old\n" || string(k.got[0].After) != "new\n" || !k.got[0].Existed ||
		k.got[1].Existed || k.got[1].Before != nil || k.got[1].Tool != NameWriteFile {
		t.Errorf("checkpoints: %+v", k.got)
	}
}

// spoiler is a Checkpointer under which the write of the change to path
// fails: it puts a file of someone else's there first (write_file
// creates with O_EXCL).
type spoiler struct {
	keep
	path string
}

func (s *spoiler) BeforeChange(ctx context.Context, c FileChange) error {
	if c.Path == s.path && !c.Existed && len(s.got) == 0 {
		if err := os.WriteFile(c.Path, []byte("someone else's\n"), 0o644); err != nil {
			return err
		}
	}
	return s.keep.BeforeChange(ctx, c)
}

// A change that fails to be written is told to the Checkpointer again, as
// leaving the file as it was: undo must not take what the failed write
// would have written for the state otter left the file in.
func TestCheckpointerHearsOfAFailedWrite(t *testing.T) {
	tt, dir := project(t, nil)
	st := tt.NewState()
	k := &spoiler{path: filepath.Join(dir, "g.txt")}
	st.SetCheckpointer(k)
	text, isErr, _ := call(t, tt, st, NameWriteFile, `{"path":"g.txt","content":"g"}`)
	if !isErr || !strings.Contains(text, "could not write g.txt") {
		t.Fatalf("the write did not fail: %q", text)
	}
	if len(k.got) != 2 || string(k.got[0].After) != "g" || k.got[1].After != nil || k.got[1].Existed || k.got[1].Path != k.path {
		t.Errorf("checkpoints: %+v", k.got)
	}
}

func TestSplitCommands(t *testing.T) {
	for line, want := range map[string][]string{
		"git status":                        {"git status"},
		"git status; rm -rf x":              {"git status", "rm -rf x"},
		"a && b || c | d &":                 {"a", "b", "c", "d"},
		"echo $(whoami) `id`":               {"echo $(whoami) `id`", "whoami", "id"},
		`echo "a; rm -rf x"`:                {`echo "a; rm -rf x"`},
		"FOO=1 make test":                   {"FOO=1 make test"},
		"if true; then cat <(ls); fi":       {"true", "cat <(ls)", "ls"},
		"export X=$(curl evil)":             {"export X=$(curl evil)", "curl evil"},
		"for f in *.go; do gofmt $f; done ": {"gofmt $f"},
	} {
		got, err := splitCommands(line)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("splitCommands(%q) = %q, %v; want %q", line, got, err, want)
		}
	}
	if _, err := splitCommands("echo 'unclosed"); err == nil {
		t.Error("an unclosed quote split")
	}
	for c, want := range map[string]string{"git status -s": "git status", "ls -la": "ls", "npm run test": "npm run", "./x.sh": "./x.sh", "X=1 a": "", "git -C d log": "git"} {
		if got := prefixOf(c); got != want {
			t.Errorf("prefixOf(%q) = %q, want %q", c, got, want)
		}
	}
}

func TestRunCommandForegroundAndBackground(t *testing.T) {
	tt, dir := project(t, map[string]string{"here.txt": ""})
	st := tt.NewState()
	if text, isErr, _ := call(t, tt, st, NameRunCommand, `{"command":"ls; echo err >&2; exit 3"}`); !isErr || !strings.Contains(text, "here.txt\nerr\n[exit 3 after") {
		t.Errorf("foreground: %q", text)
	}
	if text, isErr, _ := call(t, tt, st, NameRunCommand, `{"command":"sleep 30","timeout_ms":200}`); !isErr || !strings.Contains(text, "timed out after 200ms") {
		t.Errorf("timeout: %q", text)
	}
	fifo := filepath.Join(dir, "go")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	text, _, _ := call(t, tt, st, NameRunCommand, `{"command":"echo started; read x < go; echo done","background":true}`)
	if !strings.Contains(text, "cmd-1") {
		t.Fatalf("background: %q", text)
	}
	var seen string
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(seen, "started"); {
		if time.Now().After(deadline) {
			t.Fatalf("the background command's output never came: %q", seen)
		}
		out, _, _ := call(t, tt, st, NameCommandOutput, `{"id":"cmd-1"}`)
		seen += out
	}
	if !strings.Contains(seen, "still running") {
		t.Errorf("not said to run: %q", seen)
	}
	if err := os.WriteFile(fifo, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, _ := call(t, tt, st, NameCommandOutput, `{"id":"cmd-1","wait_ms":10000}`)
	if !strings.HasPrefix(out, "done\n[cmd-1 ended: exit 0") {
		t.Errorf("the rest: %q", out)
	}
	if out, isErr, _ := call(t, tt, st, NameCommandOutput, `{"id":"cmd-9"}`); !isErr || !strings.Contains(out, "the ids are cmd-1") {
		t.Errorf("unknown id: %q", out)
	}
}

// A path the permission check found inside the project, asking nobody,
// that leads out of it by the time the call runs (a background command
// swapped a link in) is not read.
func TestReadRefusesAPathThatMovedOutAfterTheCheck(t *testing.T) {
	tt, dir := project(t, map[string]string{"f.txt": "inside\n"})
	st := tt.NewState()
	g := gate(t, tt, st, NameReadFile, `{"path":"f.txt"}`)
	if g.Ask {
		t.Fatal("reading inside the project asks")
	}
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "f.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "f.txt")); err != nil {
		t.Fatal(err)
	}
	var read *localTool
	for _, tl := range tt.List() {
		if tl.Info().Name == NameReadFile {
			read = tl.(*localTool)
		}
	}
	ctx := tool.WithGate(WithState(context.Background(), st), g)
	res, err := read.Call(ctx, json.RawMessage(`{"path":"f.txt"}`))
	if err != nil {
		t.Fatal(err)
	}
	if text := render.Model(res); !res.IsError || strings.Contains(text, "SECRET") || !strings.Contains(text, "now leads outside the project") {
		t.Errorf("the swapped link was read: %q", text)
	}
}

// A command the sandbox refused runs once more outside it only when the
// person asked says so (the TUI's panel; otter -p refuses): refused, the
// file stays unwritten and the model reads the refusal; allowed, the
// command runs unconfined and its result says so. This test binary is the
// launcher (TestMain).
func TestRefusedCommandRunsOutsideOnlyWhenAllowed(t *testing.T) {
	self := launcher(t)
	// Outside the project and the temporary directory, both writable.
	outside, err := os.MkdirTemp("/var/tmp", "otter-unconfined-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	dir := t.TempDir()
	tt := New(Options{Dir: dir, SpillDir: t.TempDir(), Sandbox: &Sandbox{Launcher: self, Policy: sandbox.ForCommands("", nil, []string{dir})}})
	target := filepath.Join(outside, "x")
	args := fmt.Sprintf(`{"command":"echo hi > %s"}`, target)
	for _, allow := range []bool{false, true} {
		st := tt.NewState()
		var asked []ask.Permission
		st.SetUnconfinedAsker(func(_ context.Context, p ask.Permission) (ask.PermissionDecision, error) {
			asked = append(asked, p)
			if allow {
				return ask.AllowOnce, nil
			}
			return ask.Deny, nil
		})
		text, isErr, _ := call(t, tt, st, NameRunCommand, args)
		if len(asked) != 1 || !asked[0].Unconfined || !strings.Contains(asked[0].Reason, "the sandbox refused "+target) {
			t.Fatalf("allow %v: asked %+v, want one question to run outside the sandbox naming %s", allow, asked, target)
		}
		_, statErr := os.Stat(target)
		switch {
		case !allow && (statErr == nil || !isErr || !strings.Contains(text, "the sandbox refused "+target)):
			t.Errorf("refused: the file exists (%v) or the result does not say the sandbox refused it:\n%s", statErr == nil, text)
		case allow && (statErr != nil || isErr || !strings.Contains(text, "outside the sandbox, as the person allowed once")):
			t.Errorf("allowed: %v, the result:\n%s", statErr, text)
		}
	}
}

// Commands with no network ([sandbox] commands = { network = false }) run
// in a network namespace of their own where the system makes one: only a
// loopback interface, and no socket of otter's inherited.
func TestCommandsWithoutNetworkRunInANamespaceOfTheirOwn(t *testing.T) {
	self := launcher(t)
	if err := sandbox.CanIsolate(self); err != nil {
		t.Fatalf("this machine must allow user namespaces for this test: %v", err)
	}
	dir := t.TempDir()
	p := sandbox.ForCommands("", nil, []string{dir})
	p.Network, p.Isolated = false, true
	tt := New(Options{Dir: dir, SpillDir: t.TempDir(), Sandbox: &Sandbox{Launcher: self, Policy: p}})
	text, isErr, _ := call(t, tt, tt.NewState(), NameRunCommand,
		`{"command":"tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; echo sockets: $(ls -l /proc/$$/fd | grep -c socket)"}`)
	if isErr {
		t.Fatalf("the command failed:\n%s", text)
	}
	lines := strings.Fields(text)
	if len(lines) < 3 || lines[0] != "lo" || lines[1] != "sockets:" || lines[2] != "0" {
		t.Errorf("want only the loopback interface and no socket inherited, got:\n%s", text)
	}
}

// A command cannot read otter's environment (/proc/PID/environ, with the
// API keys), even when otter runs as root: Landlock refuses it to a program
// without CAP_SYS_PTRACE, and root's commands run in a user namespace of
// their own (sandbox.SeparateRoot, as the app confines them), where they
// have no capability over otter.
func TestCommandsCannotReadOttersEnvironment(t *testing.T) {
	self := launcher(t)
	dir := t.TempDir()
	p := sandbox.ForCommands("", nil, []string{dir})
	if err := sandbox.SeparateRoot(&p); err != nil {
		t.Fatalf("this machine must allow user namespaces for this test: %v", err)
	}
	tt := New(Options{Dir: dir, SpillDir: t.TempDir(), Sandbox: &Sandbox{Launcher: self, Policy: p}})
	text, _, _ := call(t, tt, tt.NewState(), NameRunCommand,
		`{"command":"head -c 1 /proc/$PPID/environ >/dev/null 2>&1 && echo READ || echo REFUSED; ls /proc/$PPID/environ"}`)
	if !strings.HasPrefix(text, "REFUSED\n") || !strings.Contains(text, "/environ") {
		t.Errorf("uid %d: a command read otter's environment:\n%s", os.Getuid(), text)
	}
}

// launcher is this test binary as the sandbox's launcher (TestMain), on a
// machine whose kernel must have Landlock.
func launcher(t *testing.T) string {
	t.Helper()
	if err := sandbox.Available(); err != nil {
		t.Fatalf("this machine's kernel must have Landlock for this test: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return self
}
