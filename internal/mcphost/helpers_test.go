package mcphost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/render"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/toolname"
)

// liveness bounds waits for things that must happen; generous, because a
// loaded 2-core machine running -race is slow. Never a speed assertion.
const liveness = 90 * time.Second

func dur(d time.Duration) config.Duration { return config.Duration{Duration: d} }

// stdioServer is a config entry that runs the test binary as a server of
// the given mode; its pids are recorded in the harness's pid file.
func stdioServer(t *testing.T, name, mode string) config.Server {
	return config.Server{
		Name:      name,
		Transport: config.TransportStdio,
		Command:   os.Args[0],
		Env: map[string]string{
			envMode:    mode,
			envPidFile: pidFile(t),
		},
		StartupTimeout: dur(liveness),
	}
}

var pidFiles sync.Map // *testing.T → path

func pidFile(t *testing.T) string {
	if p, ok := pidFiles.Load(t); ok {
		return p.(string)
	}
	p := filepath.Join(t.TempDir(), "pids")
	pidFiles.Store(t, p)
	t.Cleanup(func() { pidFiles.Delete(t) })
	return p
}

// pids reads the pids the test's servers recorded.
func pids(t *testing.T) []int {
	data, _ := os.ReadFile(pidFile(t))
	var out []int
	for _, f := range strings.Fields(string(data)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// waitPids waits until at least n processes have recorded their pid (a
// server that is still starting may not have written its own yet) and
// returns what is recorded by then.
func waitPids(t *testing.T, n int) []int {
	t.Helper()
	deadline := time.Now().Add(liveness)
	for {
		got := pids(t)
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processGone reports whether pid no longer runs (a zombie waiting for
// init to reap it counts as gone).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// pid (comm) S ...: the state follows the last ')'.
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] == 'Z' || stat[i+2] == 'X'
	}
	return false
}

// assertNoProcessLeft checks every recorded pid is gone.
func assertNoProcessLeft(t *testing.T) {
	t.Helper()
	assertGone(t, pids(t))
}

// assertGone waits for each process to be gone.
func assertGone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(liveness)
	for _, pid := range pids {
		for !processGone(pid) {
			if time.Now().After(deadline) {
				t.Errorf("process %d is still running", pid)
				syscall.Kill(pid, syscall.SIGKILL)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

type harness struct {
	t   *testing.T
	m   *Manager
	set *tool.Set

	mu     sync.Mutex
	events []servers.Event
}

func newHarness(t *testing.T, cfg config.MCP, opts servers.Options) *harness {
	t.Helper()
	h := &harness{t: t, set: tool.NewSet(tool.Options{SpillDir: t.TempDir()})}
	opts.Tools = h.set
	opts.OnEvent = func(e servers.Event) {
		h.mu.Lock()
		h.events = append(h.events, e)
		h.mu.Unlock()
	}
	if cfg.ReconnectDelay.Duration == 0 {
		cfg.ReconnectDelay = dur(20 * time.Millisecond)
	}
	h.m = New(cfg, opts)
	t.Cleanup(func() {
		h.m.Close()
		assertNoProcessLeft(t)
	})
	return h
}

func configOf(s ...config.Server) config.MCP { return config.MCP{Servers: s} }

// wait waits until cond holds for the named server's status.
func (h *harness) wait(name string, what string, cond func(servers.Status) bool) servers.Status {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), liveness)
	defer cancel()
	for {
		ch := h.m.changedChan()
		st, ok := h.m.Status(name)
		if ok && cond(st) {
			return st
		}
		select {
		case <-ch:
		case <-ctx.Done():
			h.t.Fatalf("server %s: gave up waiting for %s; status: %+v", name, what, st)
		}
	}
}

func (h *harness) waitState(name string, state servers.State) servers.Status {
	h.t.Helper()
	return h.wait(name, string(state), func(st servers.Status) bool { return st.State == state })
}

// call calls a tool through the Set, as the agent does.
func (h *harness) call(ctx context.Context, server, name string, args string) (*tool.Result, error) {
	return h.set.Call(ctx, toolname.Qualified(server, name), json.RawMessage(args))
}

func (h *harness) callText(server, name, args string) string {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), liveness)
	defer cancel()
	res, err := h.call(ctx, server, name, args)
	if err != nil {
		h.t.Fatalf("calling %s/%s: %v", server, name, err)
	}
	if res.IsError {
		h.t.Fatalf("calling %s/%s: tool error: %s", server, name, render.Model(res))
	}
	return render.Model(res)
}

func (h *harness) eventsOf(match func(servers.Event) bool) []servers.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []servers.Event
	for _, e := range h.events {
		if match(e) {
			out = append(out, e)
		}
	}
	return out
}

// eliciter answers elicitation requests with a fixed reply and records them.
type eliciter struct {
	reply ask.ElicitReply
	mu    sync.Mutex
	got   []ask.Elicitation
}

func (e *eliciter) Elicit(ctx context.Context, req ask.Elicitation) (ask.ElicitReply, error) {
	e.mu.Lock()
	e.got = append(e.got, req)
	e.mu.Unlock()
	return e.reply, nil
}
