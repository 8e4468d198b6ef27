package conformance

// The official MCP conformance suite's server scenarios, run against the
// real `otter mcp serve --http 127.0.0.1:0` binary, with the shared
// harness (harness_test.go). Helpers here carry the prefix srv.

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// srvScenarios are the conformance server scenarios that apply to a
// product server (issue 6). They must pass: they are not subject to
// baseline.txt.
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
	requirePeers(t)
	url := srvStartHTTP(t, isolatedEnv(t))
	for _, scenario := range srvScenarios {
		t.Run(scenario, func(t *testing.T) {
			res := runServerScenario(t, scenario, url)
			if !res.Passed {
				t.Fatalf("conformance %s:\n%s", scenario, res.Describe())
			}
			for _, c := range res.Checks {
				if c.Status == "WARNING" {
					t.Errorf("conformance %s warns: %s %s", scenario, c.Description, c.ErrorMessage)
				}
			}
			t.Logf("%s: %d checks passed", scenario, len(res.Checks))
		})
	}
}

// srvStartHTTP starts `otter mcp serve --http 127.0.0.1:0` with env (see
// isolatedEnv) and returns the /mcp URL it reports. The process is
// interrupted (and, failing that, killed) when the test ends.
func srvStartHTTP(t *testing.T, env []string) string {
	t.Helper()
	requirePeers(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, otterBin, "mcp", "serve", "--http", "127.0.0.1:0")
	cmd.Dir = t.TempDir()
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
