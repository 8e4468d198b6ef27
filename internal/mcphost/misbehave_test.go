package mcphost

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/render"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/toolname"
)

// One server that never answers initialize must not hold up the others, nor
// the caller; closing the manager ends it at once.
func TestSlowServerDoesNotBlockOthers(t *testing.T) {
	stuck := stdioServer(t, "stuck", "noinit")
	h := newHarness(t, configOf(stuck, stdioServer(t, "good", "normal"), stdioServer(t, "grandchild", "grandchild")), servers.Options{})
	h.m.Start(context.Background()) // returns at once
	h.waitState("good", servers.StateConnected)
	h.waitState("grandchild", servers.StateConnected)
	if st, _ := h.m.Status("stuck"); st.State != servers.StatePending {
		t.Fatalf("stuck: %s %s", st.State, st.Error)
	}
	if got := h.callText("good", "echo", `{"text":"ok"}`); got != "ok" {
		t.Errorf("echo = %q", got)
	}
	// stuck, good, grandchild and its sleep; stuck starts concurrently and
	// may record its pid after the others are connected.
	if got := waitPids(t, 4); len(got) != 4 {
		t.Errorf("recorded pids: %v, want 4", got)
	}
	h.m.Close()
	h.m.Close() // idempotent
	assertNoProcessLeft(t)
}

func TestExitsAtStart(t *testing.T) {
	h := newHarness(t, configOf(stdioServer(t, "exit", "exit")), servers.Options{})
	h.m.Start(context.Background())
	st := h.waitState("exit", servers.StateFailed)
	for _, want := range []string{"exited with status 3 before answering initialize", `"fatal: MY_API_KEY is not set"`} {
		if !strings.Contains(st.Error, want) {
			t.Errorf("error %q lacks %q", st.Error, want)
		}
	}
	if len(st.StderrTail) != 2 || st.StderrTail[0] != "starting up" {
		t.Errorf("stderr tail = %q", st.StderrTail)
	}
}

// A server that never answers initialize fails at its startup timeout, and
// what it started (npx and uvx run the real server as a grandchild) is
// stopped with it.
func TestNeverAnswersInitialize(t *testing.T) {
	for _, tc := range []struct {
		mode  string
		delay string
		procs int
	}{
		{mode: "noinit", procs: 1},
		{mode: "grandchild", delay: "1h", procs: 2},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			srv := stdioServer(t, "stuck", tc.mode)
			if tc.delay != "" {
				srv.Env[envDelay] = tc.delay
			}
			srv.StartupTimeout = dur(2 * time.Second)
			h := newHarness(t, configOf(srv), servers.Options{})
			h.m.Start(context.Background())
			st := h.waitState("stuck", servers.StateFailed)
			if !strings.Contains(st.Error, "no answer to initialize within 2s (startup_timeout)") {
				t.Errorf("error = %q", st.Error)
			}
			if n := len(pids(t)); n != tc.procs {
				t.Errorf("%d processes recorded, want %d", n, tc.procs)
			}
			assertNoProcessLeft(t) // before Close: the startup timeout stopped them
		})
	}
}

func TestDiesMidCallThenReconnects(t *testing.T) {
	h := newHarness(t, configOf(stdioServer(t, "crashy", "normal")), servers.Options{})
	h.m.Start(context.Background())
	first := h.waitState("crashy", servers.StateConnected)
	_, err := h.call(context.Background(), "crashy", "die", `{}`)
	if err == nil || !strings.Contains(err.Error(), `MCP server "crashy"`) || !strings.Contains(err.Error(), "exited with status 7") ||
		!strings.Contains(err.Error(), "crashing on purpose") {
		t.Fatalf("call of a dying tool returned %v; want the server, its exit status and its last stderr line", err)
	}
	st := h.wait("crashy", "a reconnect", func(st servers.Status) bool {
		return st.State == servers.StateConnected && st.ConnectedAt.After(first.ConnectedAt)
	})
	if !strings.Contains(st.Error, "reconnected after: the server process exited with status 7") ||
		!strings.Contains(st.Error, "crashing on purpose") {
		t.Errorf("reason after reconnect = %q", st.Error)
	}
	if got := h.callText("crashy", "echo", `{"text":"back"}`); got != "back" {
		t.Errorf("echo after reconnect = %q", got)
	}
	pending := h.eventsOf(func(e servers.Event) bool {
		sc, ok := e.(servers.StateChanged)
		return ok && sc.Status.State == servers.StatePending && sc.Status.Attempts == 1
	})
	if len(pending) == 0 || !strings.Contains(pending[0].(servers.StateChanged).Status.Error, "reconnecting (attempt 1 of 5)") {
		t.Errorf("no reconnecting event: %+v", pending)
	}
}

// A crash's cause is rarely on the last stderr line (node ends with its
// version, a Go panic with goroutine frames): the caller of a call the crash
// cut short gets the server, the exit status and the last lines of stderr,
// never just the pipe error the SDK saw.
func TestDiesMidCallErrorQuotesStderrTail(t *testing.T) {
	h := newHarness(t, configOf(stdioServer(t, "crashy", "normal")), servers.Options{})
	h.m.Start(context.Background())
	h.waitState("crashy", servers.StateConnected)
	_, err := h.call(context.Background(), "crashy", "die",
		`{"status":3,"stderr":["handling tools/call","Error: ENOENT: no such file or directory, open '/data/db.sqlite'","    at Object.openSync (node:fs:573:18)","","Node.js v22.11.0"]}`)
	if err == nil {
		t.Fatal("call of a tool whose server exits mid-call succeeded")
	}
	msg := err.Error()
	for _, want := range []string{
		`MCP server "crashy"`,
		"die",
		"exited with status 3",
		`"Error: ENOENT: no such file or directory, open '/data/db.sqlite'"`,
		`"Node.js v22.11.0"`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("call error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, `""`) {
		t.Errorf("call error quotes an empty stderr line:\n%s", msg)
	}
	if i, j := strings.Index(msg, "ENOENT"), strings.Index(msg, "Node.js"); i > j {
		t.Errorf("stderr lines out of order:\n%s", msg)
	}
}

func TestReconnectGivesUpAfterMaxAttempts(t *testing.T) {
	h, st := crashForGood(t, 2)
	if !strings.Contains(st.Error, "2 reconnect attempts failed") || !strings.Contains(st.Error, "exited with status 3") {
		t.Errorf("error = %q", st.Error)
	}
	if st.Attempts != 2 {
		t.Errorf("a server that gave up reconnecting has Attempts = %d, want 2: the front ends word the retry from it", st.Attempts)
	}
	if len(h.set.Entries()) != 0 {
		t.Errorf("a failed server's tools are still offered: %v", entryNames(h.set))
	}
	// An explicit reconnect tries again (and fails the same way).
	if err := h.m.Reconnect(context.Background(), "crashy"); err == nil || !strings.Contains(err.Error(), "exited with status 3") {
		t.Errorf("Reconnect = %v", err)
	}
}

func TestNeverAnswersACall(t *testing.T) {
	srv := stdioServer(t, "hang", "normal")
	srv.Timeout = dur(2 * time.Second)
	h := newHarness(t, configOf(srv), servers.Options{})
	h.m.Start(context.Background())
	h.waitState("hang", servers.StateConnected)
	_, err := h.call(context.Background(), "hang", "hang", `{}`)
	if err == nil || !strings.Contains(err.Error(), "did not answer within 2s") {
		t.Fatalf("hung call returned %v", err)
	}
	if got := h.callText("hang", "echo", `{"text":"alive"}`); got != "alive" {
		t.Errorf("echo after a hung call = %q", got)
	}
	if st, _ := h.m.Status("hang"); st.Errors != 1 || st.State != servers.StateConnected {
		t.Errorf("status: %+v", st)
	}
}

func TestNonJSONOnStdout(t *testing.T) {
	h := newHarness(t, configOf(stdioServer(t, "noisy", "noisy")), servers.Options{})
	h.m.Start(context.Background())
	h.waitState("noisy", servers.StateConnected)
	for i := range 3 {
		if got := h.callText("noisy", "echo", `{"text":"x"}`); got != "x" {
			t.Fatalf("echo %d = %q", i, got)
		}
	}
	st, _ := h.m.Status("noisy")
	tail := strings.Join(st.StderrTail, "\n")
	for _, want := range []string{"stdout (not JSON-RPC, ignored): Server starting on stdio...", "stdout (not JSON-RPC, ignored): debug: echo called",
		"stdout (not JSON-RPC, ignored): {not json", "stdout (not JSON-RPC, ignored): [stray"} {
		if !strings.Contains(tail, want) {
			t.Errorf("stderr tail lacks %q:\n%s", want, tail)
		}
	}
}

func TestFloodsStderr(t *testing.T) {
	h := newHarness(t, configOf(stdioServer(t, "flood", "flood")), servers.Options{})
	h.m.Start(context.Background())
	h.waitState("flood", servers.StateConnected)
	for range 20 {
		h.callText("flood", "echo", `{"text":"x"}`)
	}
	st, _ := h.m.Status("flood")
	if len(st.StderrTail) != stderrLines || !strings.HasPrefix(st.StderrTail[len(st.StderrTail)-1], "flood ") {
		t.Errorf("stderr tail: %d lines, last %q", len(st.StderrTail), st.StderrTail[len(st.StderrTail)-1])
	}
}

func TestLists2000AwkwardTools(t *testing.T) {
	h := newHarness(t, configOf(stdioServer(t, "many", "many")), servers.Options{})
	h.m.Start(context.Background())
	st := h.waitState("many", servers.StateConnected)
	if st.Tools != 2002+15 || len(st.NotOffered) != 0 { // and the usual fifteen
		t.Errorf("tools = %d, not offered %v; want 2017, every one offered", st.Tools, st.NotOffered)
	}
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	entries := h.set.Entries()
	for _, e := range entries {
		if !valid.MatchString(e.Name) {
			t.Errorf("qualified name %q is not valid for a model", e.Name)
		}
	}
	if len(entries) != st.Tools || len(h.set.Collisions()) != 0 || h.set.ServerToolCounts()["many"] != st.Tools {
		t.Errorf("%d entries (%d collisions) of %d tools: want every tool offered", len(entries), len(h.set.Collisions()), st.Tools)
	}
	// a.b and a/b are both offered, a/b under a name with a short hash.
	for name, qualified := range map[string]string{"a.b": "mcp__many__a_b", "a/b": "mcp__many__a_b_"} {
		var got string
		for _, e := range entries {
			if e.Info.Name == name {
				got = e.Name
			}
		}
		if !strings.HasPrefix(got, qualified) {
			t.Errorf("%s is offered as %q, want %s…", name, got, qualified)
		}
		if res, err := h.set.Call(context.Background(), got, nil); err != nil || render.Model(res) != name {
			t.Errorf("call of %s = %v, %v", got, res, err)
		}
	}
	// A tool with an awkward name can be called.
	name := "tool 1000 with spaces"
	res, err := h.set.Call(context.Background(), toolname.Qualified("many", name), nil)
	if err != nil || render.Model(res) != name {
		t.Errorf("call of %q = %v, %v", name, res, err)
	}
}

func TestBadTransportConfig(t *testing.T) {
	h := newHarness(t, configOf(
		config.Server{Name: "nourl", Transport: "http"},
		config.Server{Name: "weird", Transport: "carrier-pigeon", URL: "http://127.0.0.1:1/"},
		config.Server{Name: "refused", Transport: "http", URL: "http://127.0.0.1:1/mcp", StartupTimeout: dur(liveness)},
	), servers.Options{})
	h.m.Start(context.Background())
	if err := h.m.WaitSettled(context.Background()); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"nourl":   "no url configured",
		"weird":   `unknown transport "carrier-pigeon"`,
		"refused": "connection refused",
	} {
		st, _ := h.m.Status(name)
		if st.State != servers.StateFailed || !strings.Contains(st.Error, want) {
			t.Errorf("%s: %s %q, want failed with %q", name, st.State, st.Error, want)
		}
	}
}

// A server that stops answering (here: it SIGSTOPs itself) fails its health
// check and is replaced by a fresh process.
func TestHealthCheckReconnects(t *testing.T) {
	srv := stdioServer(t, "frozen", "normal")
	srv.Timeout = dur(time.Second) // health checks wait while a call is in flight
	cfg := configOf(srv)
	cfg.HealthCheckInterval = dur(200 * time.Millisecond)
	h := newHarness(t, cfg, servers.Options{})
	h.m.Start(context.Background())
	first := h.waitState("frozen", servers.StateConnected)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.call(ctx, "frozen", "freeze", `{}`)
	st := h.wait("frozen", "a reconnect", func(st servers.Status) bool {
		return st.State == servers.StateConnected && st.ConnectedAt.After(first.ConnectedAt)
	})
	if !strings.Contains(st.Error, "health check failed") {
		t.Errorf("reason = %q", st.Error)
	}
	if got := h.callText("frozen", "echo", `{"text":"fresh"}`); got != "fresh" {
		t.Errorf("echo = %q", got)
	}
	if n := len(pids(t)); n < 2 {
		t.Errorf("%d server processes started, want a second one", n)
	}
}

// When a server crashes, what it started goes with it.
func TestCrashTakesGrandchildren(t *testing.T) {
	h := newHarness(t, configOf(stdioServer(t, "crashy", "grandchild")), servers.Options{})
	h.m.Start(context.Background())
	first := h.waitState("crashy", servers.StateConnected)
	before := pids(t)
	h.call(context.Background(), "crashy", "die", `{}`)
	h.wait("crashy", "a reconnect", func(st servers.Status) bool {
		return st.State == servers.StateConnected && st.ConnectedAt.After(first.ConnectedAt)
	})
	if len(before) != 2 {
		t.Fatalf("pids before the crash: %v", before)
	}
	assertGone(t, before) // before Close
}

// A server killed by a signal otter did not send is reported with the
// signal's name and as not otter's doing. (Before: "was killed by killed".)
func TestKilledServerNamesTheSignal(t *testing.T) {
	h := newHarness(t, configOf(stdioServer(t, "victim", "normal")), servers.Options{})
	h.m.Start(context.Background())
	h.waitState("victim", servers.StateConnected)
	ps := pids(t)
	if len(ps) != 1 {
		t.Fatalf("pids: %v", ps)
	}
	if err := syscall.Kill(ps[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	want := "was killed by SIGKILL (killed), sent by something other than otter"
	h.wait("victim", "the signal named", func(st servers.Status) bool { return strings.Contains(st.Error, want) })
	if got := signalDescription(syscall.SIGTERM, true); got != "was stopped by otter with SIGTERM" {
		t.Errorf("otter's own stop: %q", got)
	}
}

// A call made while its server reconnects waits for the new connection
// (within the call's timeout) and runs there. (Before, it failed at once:
// "pending … reconnecting (attempt 1 of 5)".)
func TestCallWaitsForAReconnect(t *testing.T) {
	mc := configOf(stdioServer(t, "crashy", "normal"))
	mc.ReconnectDelay = config.Duration{Duration: 300 * time.Millisecond}
	h := newHarness(t, mc, servers.Options{})
	h.m.Start(context.Background())
	h.waitState("crashy", servers.StateConnected)
	h.call(context.Background(), "crashy", "die", `{}`)
	h.waitState("crashy", servers.StatePending)
	if got := h.callText("crashy", "echo", `{"text":"waited"}`); got != "waited" {
		t.Errorf("echo during the reconnect = %q", got)
	}
}

// The stderr tail is kept across reconnects, but a failure quotes only what
// the process that failed wrote: a server that fails the same way on each
// attempt has its line quoted once, not once per attempt.
func TestFailedAttemptsQuoteEachStderrLineOnce(t *testing.T) {
	h, st := crashForGood(t, 3)
	for _, line := range []string{`"starting up"`, `"fatal: MY_API_KEY is not set"`} {
		if n := strings.Count(st.Error, line); n != 1 {
			t.Errorf("status error quotes %s %d times, want once:\n%s", line, n, st.Error)
		}
	}
	err := h.m.Reconnect(context.Background(), "crashy")
	if err == nil || strings.Count(err.Error(), `"fatal: MY_API_KEY is not set"`) != 1 || strings.Contains(err.Error(), "crashing on purpose") {
		t.Errorf("Reconnect = %v; want the stderr of the process that failed, each line once", err)
	}
}

// crashForGood connects the server "crashy", makes it crash mid-call and
// exit at each start from then on, and returns once it failed after
// attempts reconnect attempts.
func crashForGood(t *testing.T, attempts int) (*harness, servers.Status) {
	t.Helper()
	srv := stdioServer(t, "crashy", "normal")
	broken := filepath.Join(t.TempDir(), "broken")
	srv.Env[envExitIf] = broken
	cfg := configOf(srv)
	cfg.MaxReconnectAttempts = attempts
	h := newHarness(t, cfg, servers.Options{})
	h.m.Start(context.Background())
	h.waitState("crashy", servers.StateConnected)
	// From now on the server cannot start again.
	if err := os.WriteFile(broken, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h.call(context.Background(), "crashy", "die", `{}`)
	return h, h.waitState("crashy", servers.StateFailed)
}
