package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/testpeer"
)

// BenchmarkStartup compares `otter --version` with a minimal Go program
// that prints a version, both built with `go build` the same way and started
// as processes the same way, in turn, so that the machine's load hits both
// alike. What it measures is what every `otter mcp call` in a script and
// every `otter mcp serve` a client spawns pays before doing any work:
// loading the binary and initialising its packages.
//
//	startup: otter=… baseline=… ratio=…   (median wall time of one start; ratio otter/baseline)
func BenchmarkStartup(b *testing.B) {
	otter, base := benchBinaries(b)
	start := func(bin string) time.Duration {
		t0 := time.Now()
		if out, err := exec.Command(bin, "--version").CombinedOutput(); err != nil {
			b.Fatalf("%s --version: %v\n%s", bin, err, out)
		}
		return time.Since(t0)
	}
	for range 5 { // page cache, first-run costs
		start(otter)
		start(base)
	}
	var to, tb []time.Duration
	// With b.Loop the function runs once, so the lines below print once.
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			to = append(to, start(otter))
			tb = append(tb, start(base))
		} else {
			tb = append(tb, start(base))
			to = append(to, start(otter))
		}
	}
	o, bl := median(to), median(tb)
	ratio := float64(o) / float64(bl)
	b.ReportMetric(float64(o.Microseconds()), "otter-µs")
	b.ReportMetric(float64(bl.Microseconds()), "baseline-µs")
	b.ReportMetric(ratio, "ratio")
	fmt.Printf("startup: otter=%s baseline=%s ratio=%.2f (starts each: %d)\n", o.Round(10*time.Microsecond), bl.Round(10*time.Microsecond), ratio, len(to))
}

// benchBinaries builds otter and the baseline, a minimal Go program that
// prints a line ("baseline version dev") and exits, the same way.
func benchBinaries(b *testing.B) (otter, baseline string) {
	b.Helper()
	dir := b.TempDir()
	otter = testpeer.Otter(b)
	src := filepath.Join(dir, "baseline")
	if err := os.MkdirAll(src, 0o755); err != nil {
		b.Fatal(err)
	}
	files := map[string]string{
		"go.mod":  "module baseline\n\ngo 1.26\n",
		"main.go": "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() {\n\tif len(os.Args) > 1 && os.Args[1] == \"--version\" {\n\t\tfmt.Println(\"baseline version dev\")\n\t}\n}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	baseline = filepath.Join(dir, "baseline-bin")
	build := exec.Command("go", "build", "-o", baseline, ".")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build baseline: %v\n%s", err, out)
	}
	return otter, baseline
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
