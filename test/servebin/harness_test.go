// Package servebin drives the real `otter mcp serve` binary the way an
// operator runs it and a hostile or busy client meets it: many sessions
// and connections, low file limits, stdio edge cases, and several replicas
// sharing limits through a private Redis.
package servebin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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
)

var (
	otterBin string
	buildErr error
)

func TestMain(m *testing.M) {
	tmp, err := os.MkdirTemp("", "otter-servebin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "servebin: create a temp dir:", err)
		os.Exit(1)
	}
	otterBin = filepath.Join(tmp, "otter")
	if bin := os.Getenv("OTTER_SERVEBIN_BINARY"); bin != "" {
		// Run the tests against another build (an older one, to see a
		// test fail before its fix).
		otterBin = bin
		os.Exit(m.Run())
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	build := exec.Command(goBin, "build", "-o", otterBin, "github.com/otter-sh/otter/cmd/otter")
	if out, err := build.CombinedOutput(); err != nil {
		buildErr = fmt.Errorf("build otter: %v\n%s", err, out)
	}
	code := m.Run()
	os.RemoveAll(tmp)
	os.Exit(code)
}

// requireBinary fails the test (never skips it) when otter did not build.
func requireBinary(t testing.TB) {
	t.Helper()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
}

// home is an isolated XDG home with config.toml holding cfg.
type home struct {
	dir string
	env []string
}

func newHome(t testing.TB, cfg string, extraEnv ...string) *home {
	t.Helper()
	dir := t.TempDir()
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return strings.HasPrefix(k, "XDG_") || strings.HasPrefix(k, "OTTER_")
	})
	env = append(env,
		"HOME="+dir,
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"XDG_DATA_HOME="+filepath.Join(dir, "data"),
		"XDG_STATE_HOME="+filepath.Join(dir, "state"),
		"XDG_CACHE_HOME="+filepath.Join(dir, "cache"),
	)
	env = append(env, extraEnv...)
	if err := os.MkdirAll(filepath.Join(dir, "config", "otter"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config", "otter", "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return &home{dir: dir, env: env}
}

// syncBuffer is a bytes.Buffer safe for a process writing while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// logLines are stderr's JSON log lines whose msg contains substr.
func (s *syncBuffer) logLines(substr string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			if msg, _ := m["msg"].(string); strings.Contains(msg, substr) {
				out = append(out, m)
			}
		}
	}
	return out
}

// httpServer is one running `otter mcp serve --http`.
type httpServer struct {
	cmd    *exec.Cmd
	base   string // http://127.0.0.1:PORT
	stderr *syncBuffer
	stdout *syncBuffer
	done   chan struct{}
}

// startHTTP starts `otter mcp serve --http 127.0.0.1:0 args…` in h,
// wrapped by wrap (e.g. prlimit) when given, and waits for its address.
func startHTTP(t testing.TB, h *home, wrap []string, args ...string) *httpServer {
	t.Helper()
	argv := append(slices.Clone(wrap), otterBin, "mcp", "serve", "--http", "127.0.0.1:0")
	argv = append(argv, args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = h.dir
	cmd.Env = h.env
	s := &httpServer{cmd: cmd, stderr: &syncBuffer{}, stdout: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr, cmd.Stdout = s.stderr, s.stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %v: %v", argv, err)
	}
	go func() { _ = cmd.Wait(); close(s.done) }()
	t.Cleanup(func() { s.stop() })
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, l := range s.stderr.logLines("serving MCP over HTTP") {
			if a, _ := l["addr"].(string); a != "" {
				s.base = "http://" + a
				return s
			}
		}
		select {
		case <-s.done:
			t.Fatalf("otter mcp serve exited before listening:\n%s", s.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("otter mcp serve did not report its address in 30 s:\n%s", s.stderr.String())
	return nil
}

// stop ends the server with SIGTERM (SIGKILL after 10 s).
func (s *httpServer) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// kill ends the server with SIGKILL, as a crash would.
func (s *httpServer) kill() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// waitUntil polls cond until it holds, or fails the test after within,
// naming what it waited for.
func waitUntil(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tail is the last n bytes of s, for a failure message.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
