package main

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/testpeer"
)

// The front ends reach servers and sessions only through internal/app:
// neither they nor anything they import links in the MCP client manager
// or the session database (app builds those through app.Parts, which this
// command passes), and the agent does not read the config file. The server
// of `otter mcp serve` (internal/serve) is the headless front end's alone:
// the core and the TUI do not link it in. go list answers for the packages
// as built, tests left out.
func TestFrontEndsReachServersAndSessionsOnlyThroughApp(t *testing.T) {
	const mod = "github.com/otter-sh/otter/"
	for _, tc := range []struct {
		pkg    string
		forbid []string
	}{
		{"internal/tui", []string{"internal/mcphost", "internal/session", "internal/serve"}},
		{"internal/cli", []string{"internal/mcphost", "internal/session"}},
		{"internal/app", []string{"internal/mcphost", "internal/session", "internal/serve"}},
		{"internal/agent", []string{"internal/config"}},
	} {
		out, err := exec.Command("go", "list", "-deps", mod+tc.pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", tc.pkg, err, out)
		}
		deps := map[string]bool{}
		for _, p := range strings.Fields(string(out)) {
			deps[strings.TrimPrefix(p, mod)] = true
		}
		if !deps["internal/ask"] && tc.pkg != "internal/agent" {
			t.Fatalf("go list -deps %s lists no internal/ask; is this the otter module?\n%s", tc.pkg, out)
		}
		for _, f := range tc.forbid {
			if deps[f] {
				t.Errorf("%s depends on %s", tc.pkg, f)
			}
		}
	}
}

// otterImports lists each of the module's packages below internal (and
// assets, cmd/otter and cmd/otter-sandbox) with the module's packages it
// imports, named as the docs name them: "app", "llm/llmtest", "assets",
// "cmd/otter". go list
// answers for the packages as built, tests left out.
func otterImports(t *testing.T) (dirs map[string]string, imports map[string][]string) {
	t.Helper()
	const mod = "github.com/otter-sh/otter/"
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .Imports \" \"}}", mod+"internal/...", mod+"assets", mod+"cmd/otter", mod+"cmd/otter-sandbox").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	short := func(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, mod), "internal/") }
	dirs, imports = map[string]string{}, map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			t.Fatalf("go list line %q", line)
		}
		pkg := short(f[0])
		dirs[pkg] = f[1]
		imports[pkg] = []string{}
		for _, imp := range strings.Fields(f[2]) {
			if strings.HasPrefix(imp, mod) {
				imports[pkg] = append(imports[pkg], short(imp))
			}
		}
	}
	if len(imports["app"]) == 0 || len(imports["cli"]) == 0 {
		t.Fatalf("go list found no imports of app or cli: is this the otter module?\n%s", out)
	}
	return dirs, imports
}

// A package comment that says "it imports A, B and C of otter's packages"
// names exactly the module's packages it imports, so that the comment a
// reader trusts cannot drift from the code. The packages below must say
// it in that form; others may.
func TestPackageCommentsNameTheirImports(t *testing.T) {
	mustSay := []string{"agent", "app", "cli", "config", "mcphost", "oauth", "record", "serve", "servers", "tui", "webdata"}
	sentenceRE := regexp.MustCompile(`(?s)\bimports (?:only )?([a-z/, ]+?) of otter's packages`)
	nameRE := regexp.MustCompile(`^[a-z][a-z/]*$`)
	dirs, imports := otterImports(t)
	said := map[string]bool{}
	for pkg, dir := range dirs {
		doc := packageComment(t, dir)
		m := sentenceRE.FindStringSubmatch(strings.Join(strings.Fields(doc), " "))
		if m == nil {
			continue
		}
		said[pkg] = true
		var stated []string
		for _, part := range strings.Split(strings.ReplaceAll(m[1], " and ", ", "), ",") {
			name := strings.TrimSpace(part)
			if !nameRE.MatchString(name) {
				t.Errorf("%s's package comment: %q is not a package name in %q", pkg, name, m[0])
				continue
			}
			stated = append(stated, name)
		}
		slices.Sort(stated)
		real := slices.Clone(imports[pkg])
		slices.Sort(real)
		if !slices.Equal(stated, real) {
			t.Errorf("%s's package comment says it imports %v of otter's packages; go list says %v", pkg, stated, real)
		}
	}
	for _, pkg := range mustSay {
		if !said[pkg] {
			t.Errorf("%s's package comment does not say \"it imports … of otter's packages\"", pkg)
		}
	}
}

// packageComment is the package comment of the Go package in dir (tests
// left out).
func packageComment(t *testing.T, dir string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var doc strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if file.Doc != nil {
			doc.WriteString(file.Doc.Text())
		}
	}
	return doc.String()
}

// testHelpers are imported by tests only; the package map leaves them out.
var testHelpers = map[string]bool{"testpeer": true, "llm/llmtest": true, "oauth/oauthtest": true, "registry/registrytest": true}

// The package map of docs/architecture.md lists every package, each above
// the packages it imports.
func TestArchitectureMapListsEveryPackage(t *testing.T) {
	root, err := testpeer.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(text), "```\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("docs/architecture.md has no package map (a ``` block)")
	}
	place := map[string]int{}
	for _, line := range strings.Split(block, "\n") {
		if line == "" || line[0] == ' ' {
			continue // a description's next line
		}
		pkg := strings.TrimPrefix(strings.Fields(line)[0], "internal/")
		place[pkg] = len(place)
	}
	_, imports := otterImports(t)
	for pkg, imps := range imports {
		if testHelpers[pkg] {
			continue
		}
		at, ok := place[pkg]
		if !ok {
			t.Errorf("the package map lacks %s", pkg)
			continue
		}
		for _, imp := range imps {
			if p, ok := place[imp]; ok && p <= at {
				t.Errorf("the package map lists %s above %s, which imports it", imp, pkg)
			}
		}
	}
	for pkg := range place {
		if _, ok := imports[pkg]; !ok {
			t.Errorf("the package map lists %s, which go list does not know", pkg)
		}
	}
}
