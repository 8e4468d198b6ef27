package localtools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/render"
)

// searchTree writes a project of n source files in nested folders (a
// .git, a .gitignore leaving out a generated folder), each a few KB of
// code-like lines, some holding the needle.
func searchTree(b *testing.B, n int) string {
	b.Helper()
	root := b.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("gen/\n*.tmp\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	var body strings.Builder
	for i := range 60 {
		fmt.Fprintf(&body, "func handler%d(w http.ResponseWriter, r *http.Request) { value := compute(%d, r.URL.Path) }\n", i, i)
	}
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("pkg%02d", i%40), fmt.Sprintf("sub%02d", i/40%25))
		if i%50 == 0 {
			dir = filepath.Join(root, "gen", fmt.Sprintf("g%d", i))
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		text := body.String()
		if i%97 == 0 {
			text += fmt.Sprintf("// needleFunction%d lives here\n", i)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%d.go", i)), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return root
}

// BenchmarkSearchFiles compares search_files over a generated tree of
// 10,000 files (.gitignore honoured) with ripgrep on the same pattern
// (rg -n, which honours it too), in turn, so that the machine's load
// hits both alike: otter's figure is the tool's call, rg's a start of its
// process, as a model's shell tool would run it. Both must find the same
// lines.
//
//	search-files: otter=… baseline=… ratio=…   (median wall time of one search; ratio otter/rg)
func BenchmarkSearchFiles(b *testing.B) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Skip("ripgrep (rg) is not installed: scripts/install-system-deps.sh installs it")
	}
	root := searchTree(b, 10_000)
	t := New(Options{Dir: root})
	st := t.NewState()
	var search *localTool
	for _, tl := range t.List() {
		if tl.Info().Name == NameSearchFiles {
			search = tl.(*localTool)
		}
	}
	const pattern = `needleFunction\d+`
	args := json.RawMessage(fmt.Sprintf(`{"pattern":%q}`, pattern))
	ctx := WithState(context.Background(), st)
	ours := func() (time.Duration, int) {
		t0 := time.Now()
		res, err := search.Call(ctx, args)
		if err != nil || res.IsError {
			b.Fatalf("search_files: %v %v", err, res)
		}
		return time.Since(t0), strings.Count(render.Model(res), "\n") + 1
	}
	theirs := func() (time.Duration, int) {
		t0 := time.Now()
		cmd := exec.Command(rg, "-n", pattern)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("rg: %v", err)
		}
		return time.Since(t0), strings.Count(string(out), "\n")
	}
	for range 3 { // the page cache, first-run costs
		ours()
		theirs()
	}
	var to, tb []time.Duration
	for i := 0; b.Loop(); i++ {
		var a, c time.Duration
		var na, nc int
		if i%2 == 0 {
			a, na = ours()
			c, nc = theirs()
		} else {
			c, nc = theirs()
			a, na = ours()
		}
		if na != nc {
			b.Fatalf("search_files found %d lines, rg %d", na, nc)
		}
		to, tb = append(to, a), append(tb, c)
	}
	slices.Sort(to)
	slices.Sort(tb)
	o, bl := to[len(to)/2], tb[len(tb)/2]
	ratio := float64(o) / float64(bl)
	b.ReportMetric(ratio, "ratio")
	fmt.Printf("search-files: otter=%s baseline=%s ratio=%.2f (searches each: %d)\n", o.Round(100*time.Microsecond), bl.Round(100*time.Microsecond), ratio, len(to))
}
