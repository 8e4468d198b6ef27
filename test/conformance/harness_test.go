// Package conformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance) against the real otter binary, and
// end-to-end checks of `otter mcp` against the official reference server.
//
// TestMain builds otter once. The peers (Node 22, the suite, the reference
// server) come from .cache/testdeps, installed by
// `bash scripts/install-test-deps.sh` (`make test` runs it); a test that
// needs a missing peer fails and says so.
//
// Helpers for other test files of this package (auth_test.go,
// server_test.go) — keep their signatures stable:
//
//	requirePeers(t)                                  fail unless otter built and the peers exist
//	runClientScenario(t, name, extraEnv...)          run a client scenario with adapter.sh → scenarioResult
//	runServerScenario(t, name, serverURL, extraEnv...) run a server scenario against serverURL → scenarioResult
//	checkBaseline(t, name, res)                      fail per baseline.txt (unexpected failure, or stale entry)
//	listScenarios(t) (client, server []string)       the scenarios `conformance list` knows
//	isolatedEnv(t)                                   env with fresh XDG dirs, for running otter
//	runOtter(t, ctx, env, stdin, args...)            run the built binary → testpeer.Outcome{Stdout, Stderr, Code}
package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/testpeer"
)

// Paths found by TestMain.
var (
	moduleRoot    string // the directory holding go.mod
	otterBin      string // the otter binary built for these tests
	nodeBin       string // Node 22
	conformanceJS string // the suite's entry point
	everythingJS  string // the reference server's entry point
	adapterScript string // test/conformance/adapter.sh
	setupErr      error  // why the above are not all usable
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "otter-conformance-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance: create a temp dir:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	setupErr = setup(tmp)
	return m.Run()
}

// setup finds the module root and the peers, and builds otter.
func setup(tmp string) error {
	peers, peersErr := testpeer.Locate()
	if peers.Root == "" {
		return peersErr
	}
	moduleRoot = peers.Root
	adapterScript = filepath.Join(moduleRoot, "test", "conformance", "adapter.sh")
	nodeBin, conformanceJS, everythingJS = peers.Node, peers.Conformance, peers.Everything

	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	otterBin = filepath.Join(tmp, "otter")
	build := exec.Command(goBin, "build", "-o", otterBin, "./cmd/otter")
	build.Dir = moduleRoot
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build otter: %v\n%s", err, out)
	}
	return peersErr
}

// requirePeers fails the test (never skips it) when otter could not be
// built or a peer is missing.
func requirePeers(t testing.TB) {
	t.Helper()
	if setupErr != nil {
		t.Fatal(setupErr)
	}
}

// isolatedEnv returns the environment for running otter and the suite:
// fresh XDG directories (so the developer's own config and tokens never
// leak in), Node 22 first on PATH, and OTTER_BIN for adapter.sh.
func isolatedEnv(t testing.TB) []string {
	t.Helper()
	home := t.TempDir()
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return strings.HasPrefix(k, "XDG_") || k == "PATH" || k == "OTTER_BIN" || k == "BROWSER" || strings.HasPrefix(k, "MCP_CONFORMANCE")
	})
	return append(env,
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_DATA_HOME="+filepath.Join(home, "data"),
		"XDG_STATE_HOME="+filepath.Join(home, "state"),
		"XDG_CACHE_HOME="+filepath.Join(home, "cache"),
		"PATH="+filepath.Dir(nodeBin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"OTTER_BIN="+otterBin,
	)
}

// check is one entry of the suite's checks.json.
type check struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Description  string `json:"description"`
	Status       string `json:"status"` // SUCCESS, FAILURE, WARNING, INFO, SKIPPED
	ErrorMessage string `json:"errorMessage"`
}

// scenarioResult is the outcome of one conformance run.
type scenarioResult struct {
	Passed bool
	// Checks are the suite's checks (from checks.json).
	Checks []check
	// Output is what the suite printed.
	Output string
	// ClientStdout and ClientStderr are what the client under test
	// (adapter.sh → otter) printed, for client scenarios.
	ClientStdout, ClientStderr string
	// ExitCode is the suite's exit status.
	ExitCode int
}

// Failures describes the failed checks, for test messages.
func (r scenarioResult) Failures() string {
	var b strings.Builder
	for _, c := range r.Checks {
		if c.Status == "FAILURE" {
			fmt.Fprintf(&b, "  %s: %s %s\n", c.ID, c.Description, c.ErrorMessage)
		}
	}
	if b.Len() == 0 {
		fmt.Fprintf(&b, "  (no failed check; the suite exited %d with %d checks)\n", r.ExitCode, len(r.Checks))
	}
	return b.String()
}

// Describe is everything a person needs to see why a scenario failed.
func (r scenarioResult) Describe() string {
	return fmt.Sprintf("failed checks:\n%s--- suite output ---\n%s\n--- client stdout ---\n%s\n--- client stderr ---\n%s",
		r.Failures(), tail(r.Output, 4000), tail(r.ClientStdout, 2000), tail(r.ClientStderr, 4000))
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// suiteTimeout bounds one run of the suite: generous, for loaded machines.
const suiteTimeout = 3 * time.Minute

// runClientScenario runs `conformance client --scenario name` with
// adapter.sh (which runs otter) as the client. extraEnv ("K=V") is added to
// the environment of the suite and so of adapter.sh and otter.
func runClientScenario(t *testing.T, name string, extraEnv ...string) scenarioResult {
	t.Helper()
	requirePeers(t)
	return runSuite(t, append(isolatedEnv(t), extraEnv...),
		"client", "--command", adapterScript, "--scenario", name, "--timeout", "90000")
}

// runServerScenario runs `conformance server --scenario name` against the
// MCP server at serverURL (e.g. `otter mcp serve --http`, started by the
// caller).
func runServerScenario(t *testing.T, name, serverURL string, extraEnv ...string) scenarioResult {
	t.Helper()
	requirePeers(t)
	return runSuite(t, append(isolatedEnv(t), extraEnv...),
		"server", "--url", serverURL, "--scenario", name)
}

func runSuite(t *testing.T, env []string, args ...string) scenarioResult {
	t.Helper()
	outDir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), suiteTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, append([]string{conformanceJS}, append(args, "--output-dir", outDir)...)...)
	cmd.Env = append(env, "NO_COLOR=1", "FORCE_COLOR=0")
	cmd.Dir = t.TempDir()
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	res := scenarioResult{Output: out.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	case err != nil:
		t.Fatalf("run the conformance suite %v: %v\n%s", args, err, res.Output)
	}
	if ctx.Err() != nil {
		t.Fatalf("the conformance suite %v did not finish within %s\n%s", args, suiteTimeout, res.Output)
	}
	// Results land in outDir/<scenario>-<time>/ (a scenario "auth/x" in
	// outDir/auth/x-<time>/).
	files, _ := filepath.Glob(filepath.Join(outDir, "*", "checks.json"))
	nested, _ := filepath.Glob(filepath.Join(outDir, "*", "*", "checks.json"))
	files = append(files, nested...)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cs []check
		if err := json.Unmarshal(data, &cs); err != nil {
			t.Fatalf("read %s: %v", f, err)
		}
		res.Checks = append(res.Checks, cs...)
		dir := filepath.Dir(f)
		if b, err := os.ReadFile(filepath.Join(dir, "stdout.txt")); err == nil {
			res.ClientStdout += string(b)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "stderr.txt")); err == nil {
			res.ClientStderr += string(b)
		}
	}
	succeeded := slices.ContainsFunc(res.Checks, func(c check) bool { return c.Status == "SUCCESS" })
	failed := slices.ContainsFunc(res.Checks, func(c check) bool { return c.Status == "FAILURE" })
	res.Passed = res.ExitCode == 0 && succeeded && !failed
	return res
}

var (
	baselineOnce sync.Once
	baseline     map[string]string
	baselineErr  error
)

// loadBaseline reads baseline.txt: one expected failure per line,
// "scenario  # reason". Blank lines and lines starting with # are comments.
func loadBaseline(t testing.TB) map[string]string {
	t.Helper()
	baselineOnce.Do(func() {
		path := filepath.Join(moduleRoot, "test", "conformance", "baseline.txt")
		data, err := os.ReadFile(path)
		if err != nil {
			baselineErr = err
			return
		}
		baseline = map[string]string{}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			name, reason, _ := strings.Cut(line, "#")
			name, reason = strings.TrimSpace(name), strings.TrimSpace(reason)
			if reason == "" || strings.ContainsAny(name, " \t") {
				baselineErr = fmt.Errorf("%s:%d: write each expected failure as `scenario  # reason`", path, n)
				return
			}
			if _, dup := baseline[name]; dup {
				baselineErr = fmt.Errorf("%s:%d: %s is listed twice", path, n, name)
				return
			}
			baseline[name] = reason
		}
	})
	if baselineErr != nil {
		t.Fatal(baselineErr)
	}
	return baseline
}

// checkBaseline fails the test when a scenario that is not in baseline.txt
// failed, or when one that is listed there passed (remove it: the baseline
// only shrinks).
func checkBaseline(t *testing.T, name string, res scenarioResult) {
	t.Helper()
	reason, expected := loadBaseline(t)[name]
	switch {
	case !res.Passed && !expected:
		t.Errorf("conformance scenario %s failed:\n%s", name, res.Describe())
	case res.Passed && expected:
		t.Errorf("conformance scenario %s passes now: remove it from test/conformance/baseline.txt (it was listed because: %s)", name, reason)
	case !res.Passed:
		t.Logf("expected failure (baseline.txt: %s):\n%s", reason, res.Failures())
	}
}

var (
	listOnce               sync.Once
	clientNames, servNames []string
	listErr                error
)

// listScenarios returns the client and server scenarios the suite knows
// (`conformance list`).
func listScenarios(t testing.TB) (client, server []string) {
	t.Helper()
	requirePeers(t)
	listOnce.Do(func() {
		out, err := exec.Command(nodeBin, conformanceJS, "list").CombinedOutput()
		if err != nil {
			listErr = fmt.Errorf("conformance list: %v\n%s", err, out)
			return
		}
		var section *[]string
		for _, line := range strings.Split(string(out), "\n") {
			switch {
			case strings.HasPrefix(line, "Client scenarios"):
				section = &clientNames
			case strings.HasPrefix(line, "Server scenarios"):
				section = &servNames
			case section != nil && strings.HasPrefix(strings.TrimSpace(line), "- "):
				f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "- "))
				if len(f) > 0 {
					*section = append(*section, f[0])
				}
			}
		}
		if len(clientNames) == 0 || len(servNames) == 0 {
			listErr = fmt.Errorf("could not read the scenarios from `conformance list`:\n%s", out)
		}
	})
	if listErr != nil {
		t.Fatal(listErr)
	}
	return clientNames, servNames
}

// runOtter runs the built otter binary with env (see isolatedEnv) and
// stdin, and returns its output and exit status.
func runOtter(t *testing.T, ctx context.Context, env []string, stdin string, args ...string) testpeer.Outcome {
	t.Helper()
	requirePeers(t)
	return testpeer.Cmd{Path: otterBin, Env: env, Stdin: stdin}.Run(t, ctx, args...)
}
