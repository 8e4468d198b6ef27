package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/otter-sh/otter/internal/cli"
	"github.com/otter-sh/otter/internal/iostreams"
	"github.com/otter-sh/otter/internal/oauth"
	"github.com/otter-sh/otter/internal/serve"
	"github.com/otter-sh/otter/internal/testpeer"
	"github.com/otter-sh/otter/internal/tool"
)

// The core packages serve every front end: what they say must fit the
// TUI, a shell and a remote MCP client alike, so none of their strings
// names a flag or a subcommand of this command line, nor a slash command
// of the TUI. They return typed errors or states and the front end words
// the hint (cli.Explain for a shell). Every package under internal is
// core but the front ends and the test helpers below.
var notCore = map[string]bool{"tui": true, "cli": true, "testpeer": true, "llm/llmtest": true, "oauth/oauthtest": true, "registry/registrytest": true}

// notYet are the files that still name a flag or command, each waiting
// for a typed error whose hint the front ends word (issue 23). The test
// fails once a file here is clean, so that the list only shrinks.
var notYet = map[string]string{}

// TestCorePackagesNameNoFlagOrCommand reads every string literal of the
// core packages' non-test files and fails on one that holds `--NAME` for a
// flag NAME of otter's command line, "otter CMD" for a subcommand CMD, or,
// in a sentence (a literal with a space), "/CMD" for a slash command CMD
// of the TUI — a bare "/mcp" is an HTTP path, not a hint.
func TestCorePackagesNameNoFlagOrCommand(t *testing.T) {
	streams, _, _, _ := iostreams.Test()
	root := newRootCmd(&cli.Factory{IO: streams})
	flags, cmds := map[string]bool{}, map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) { flags[f.Name] = true })
		}
		for _, sub := range c.Commands() {
			if sub.Parent() == root {
				cmds[sub.Name()] = true
				for _, a := range sub.Aliases {
					cmds[a] = true
				}
			}
			walk(sub)
		}
	}
	walk(root)
	if !flags["oauth-client-id"] || !cmds["mcp"] || !cmds["sessions"] {
		t.Fatalf("the command tree lacks flags or commands the rule is about: flags %v, commands %v", flags, cmds)
	}
	flagRE := regexp.MustCompile(`--([a-z][a-z0-9-]*)`)
	cmdRE := regexp.MustCompile(`\botter ([a-z][a-z-]*)`)
	slashRE := regexp.MustCompile("(?:^|[\\s`'\"(])/([a-z][a-z-]*)(?:$|[^a-z0-9_/.:-])")

	modRoot, err := testpeer.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	slash := tuiSlashCommands(t, filepath.Join(modRoot, "internal", "tui"))
	corePackages := corePackageDirs(t, filepath.Join(modRoot, "internal"))
	checked := 0
	waiting := map[string]bool{}
	report := func(file string, pos token.Position, format string, args ...any) {
		if _, ok := notYet[file]; ok {
			waiting[file] = true
			return
		}
		t.Errorf("%s: "+format, append([]any{pos}, args...)...)
	}
	for _, pkg := range corePackages {
		dir := filepath.Join(modRoot, "internal", filepath.FromSlash(pkg))
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			file, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			rel := pkg + "/" + name
			ast.Inspect(file, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				for _, m := range flagRE.FindAllStringSubmatch(s, -1) {
					if flags[m[1]] {
						report(rel, fset.Position(lit.Pos()), "names the flag --%s: %q", m[1], s)
					}
				}
				for _, m := range cmdRE.FindAllStringSubmatch(s, -1) {
					if cmds[m[1]] {
						report(rel, fset.Position(lit.Pos()), "names the command `otter %s`: %q", m[1], s)
					}
				}
				if strings.ContainsAny(s, " \t\n") {
					for _, m := range slashRE.FindAllStringSubmatch(s, -1) {
						if slash[m[1]] {
							report(rel, fset.Position(lit.Pos()), "names the TUI's command /%s: %q", m[1], s)
						}
					}
				}
				return true
			})
		}
	}
	for file := range notYet {
		if !waiting[file] {
			t.Errorf("%s names no flag or command any more: take it off notYet", file)
		}
	}
	if checked < 50 {
		t.Errorf("read only %d files of the core packages", checked)
	}
}

// corePackageDirs lists the packages under internal (as paths below it)
// that hold Go files, but those of notCore.
func corePackageDirs(t *testing.T, internal string) []string {
	t.Helper()
	var pkgs []string
	err := filepath.WalkDir(internal, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(internal, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.Name() == "testdata" || notCore[rel] {
			return filepath.SkipDir
		}
		if matches, _ := filepath.Glob(filepath.Join(path, "*.go")); len(matches) > 0 {
			pkgs = append(pkgs, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"app", "mcphost", "serve", "webdata"} {
		if !slices.Contains(pkgs, want) {
			t.Fatalf("the core packages %v lack %s", pkgs, want)
		}
	}
	return pkgs
}

// tuiSlashCommands reads the TUI's non-test files for its slash commands:
// the names it lists for completion and those its command switch
// dispatches on (each string literal of a case that starts with "/").
// Only the first word counts ("/mcp" of "/mcp tools").
func tuiSlashCommands(t *testing.T, dir string) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	nameRE := regexp.MustCompile(`^/([a-z][a-z-]*)(?: [a-z]+)?$`)
	cmds := map[string]bool{}
	add := func(e ast.Expr) {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return
		}
		if s, err := strconv.Unquote(lit.Value); err == nil {
			if m := nameRE.FindStringSubmatch(s); m != nil {
				cmds[m[1]] = true
			}
		}
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CaseClause:
				for _, e := range n.List {
					add(e)
				}
			case *ast.ValueSpec:
				if len(n.Names) == 1 && n.Names[0].Name == "slashCommands" {
					for _, v := range n.Values {
						if cl, ok := v.(*ast.CompositeLit); ok {
							for _, e := range cl.Elts {
								add(e)
							}
						}
					}
				}
			}
			return true
		})
	}
	for _, want := range []string{"mcp", "help", "compact", "model", "resume"} {
		if !cmds[want] {
			t.Fatalf("the TUI's slash commands %v lack /%s: has the TUI moved them?", cmds, want)
		}
	}
	return cmds
}

// The hints the core no longer words reach a person at a shell: the real
// binary adds them to the core's typed errors.
func TestShellHintsForCoreErrors(t *testing.T) {
	bin := testpeer.Otter(t)
	home := t.TempDir()
	cmd := exec.Command(bin, "sessions", "show", "nosuch")
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_DATA_HOME="+filepath.Join(home, "data"),
		"XDG_STATE_HOME="+filepath.Join(home, "state"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"))
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), `no such session "nosuch"; `+"`otter sessions list --all` lists them") {
		t.Errorf("otter sessions show nosuch: %v\n%s", err, out)
	}
	if got := explained(fmt.Errorf("call: %w %q", tool.ErrUnknownTool, "x")); !strings.HasSuffix(got, "; `otter mcp tools` lists the tools offered") {
		t.Errorf("an unknown tool's error at a shell: %s", got)
	}
	adhoc := &oauth.LoginRequiredError{Server: "https://h/mcp", Reason: "no token is stored", Adhoc: &oauth.AdhocOAuth{ClientID: "cid", ClientSecretGiven: true}}
	if got := explained(fmt.Errorf("log in: %w", adhoc)); got != "log in: https://h/mcp: no token is stored; run `otter mcp login https://h/mcp --oauth-client-id cid --oauth-client-secret …`" {
		t.Errorf("an ad hoc server's login error at a shell: %s", got)
	}
	if got := explained(serve.CheckAddr("0.0.0.0:8080", false)); !strings.Contains(got, "refusing to serve without API keys on 0.0.0.0:8080") ||
		!strings.HasSuffix(got, "; `otter mcp serve --http 127.0.0.1:8080` serves this machine only") {
		t.Errorf("the refusal of a public address at a shell: %s", got)
	}
}
