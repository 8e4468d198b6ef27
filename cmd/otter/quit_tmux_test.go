package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/otter-sh/otter/internal/testpeer"
)

// tmuxPane is a program run as the process of a tmux pane, the way a
// person starts otter: `tmux new-session -d -x 100 -y 30 otter`, nothing
// between tmux and the program.
type tmuxPane struct {
	tb   testing.TB
	tmux string
	sock string
	name string
	pid  int // the program's: the pane's own process
}

// freshHome is the environment of a person who never ran otter: a new
// home with nothing in it, no API key.
func freshHome(tb testing.TB) []string {
	home := filepath.Join(tb.TempDir(), "home")
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"} {
		env = append(env, v+"="+filepath.Join(home, strings.ToLower(v)))
	}
	return env
}

// startPane starts argv as the process of a new 100×30 tmux pane (a tmux
// server of its own, started with env, so that the pane's process has it
// and nothing else) in dir.
func startPane(tb testing.TB, name string, env []string, dir string, argv ...string) *tmuxPane {
	tb.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		tb.Fatal("tmux is not installed: run `make test-deps` (scripts/install-system-deps.sh) or `apt-get install -y tmux`")
	}
	p := &tmuxPane{tb: tb, tmux: tmux, sock: filepath.Join(tb.TempDir(), "tmux.sock"), name: name}
	start := exec.Command(tmux, append([]string{"-S", p.sock, "-f", "/dev/null", "new-session", "-d", "-s", name, "-x", "100", "-y", "30", "-c", dir}, argv...)...)
	start.Env = env
	if out, err := start.CombinedOutput(); err != nil {
		tb.Fatalf("tmux new-session %v: %v\n%s", argv, err, out)
	}
	tb.Cleanup(func() { _ = exec.Command(tmux, "-S", p.sock, "kill-server").Run() })
	p.pid, err = strconv.Atoi(strings.TrimSpace(p.tm("display-message", "-p", "-t", name, "#{pane_pid}")))
	if err != nil {
		tb.Fatalf("the pane's pid: %v", err)
	}
	// The pane's process must be the program itself, not a shell that
	// runs it: what is measured is the program's own end. tmux runs the
	// command through its shell, which execs it (a single command): on a
	// busy machine the shell may still be there a moment.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", p.pid))
		if err == nil && exe == argv[0] {
			break
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the pane's process %d is %q (%v), not %s", p.pid, exe, err, argv[0])
		}
	}
	return p
}

func (p *tmuxPane) tm(args ...string) string {
	p.tb.Helper()
	out, err := exec.Command(p.tmux, append([]string{"-S", p.sock}, args...)...).CombinedOutput()
	if err != nil {
		p.tb.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// waitFor waits until the pane shows want.
func (p *tmuxPane) waitFor(want string) {
	p.tb.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := p.tm("capture-pane", "-p", "-t", p.name)
		if strings.Contains(s, want) {
			return
		}
		if time.Now().After(deadline) {
			p.tb.Fatalf("the pane never showed %q; it shows:\n%s", want, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitEnded returns how long after since the pane's process ended: exited,
// whether or not its parent has reaped it yet (polled every 10 ms).
//
// kill -0 succeeds on a zombie, and the zombie of a pane's process can
// outlive it by seconds: tmux (3.3) exits with its last pane without
// reaping that pane's process, which then waits for PID 1 to reap it —
// the floor's `head` as much as otter; on the machine the issue was
// measured on, PID 1 reaped orphans every 1.2–1.9 s. What otter decides is
// when it exits.
func (p *tmuxPane) waitEnded(since time.Time) time.Duration {
	p.tb.Helper()
	for {
		if processEnded(p.pid) {
			return time.Since(since)
		}
		if time.Since(since) > 30*time.Second {
			p.tb.Fatalf("process %d still runs 30 s later", p.pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processEnded says whether process pid has exited: gone, or a zombie.
func processEnded(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH)
	}
	// pid (comm) state …: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(stat, ')')
	fields := strings.Fields(string(stat[i+1:]))
	return len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X")
}

// keyboard is a tmux control-mode client (tmux -C) of a pane's server,
// started before anything is timed: keys sent through it reach the pane
// the way a person's keys come from a terminal that is already running.
// `tmux send-keys` starts a tmux process for each command, and on a busy
// machine that start is most of what is timed: at load 12 on 2 cores, 50 to
// 600 ms passed between running `tmux send-keys … Enter` and otter reading
// the Enter, while otter took 7 to 66 ms from the key to its exit.
type keyboard struct {
	p  *tmuxPane
	in io.WriteCloser
}

// keyboard attaches a control-mode client to the pane's session.
func (p *tmuxPane) keyboard() *keyboard {
	p.tb.Helper()
	c := exec.Command(p.tmux, "-S", p.sock, "-C", "attach-session", "-t", p.name)
	in, err := c.StdinPipe()
	if err != nil {
		p.tb.Fatal(err)
	}
	c.Stdout = io.Discard // what the pane shows, as %output lines
	if err := c.Start(); err != nil {
		p.tb.Fatalf("tmux -C attach-session: %v", err)
	}
	// It exits when its stdin closes, or with the session (the pane's
	// process ended).
	p.tb.Cleanup(func() { _ = in.Close(); _ = c.Wait() })
	return &keyboard{p: p, in: in}
}

// send sends keys (tmux key names, or text) to the pane, without waiting
// for tmux to have done it.
func (k *keyboard) send(keys ...string) {
	k.p.tb.Helper()
	if _, err := fmt.Fprintf(k.in, "send-keys -t %s %s\n", k.p.name, strings.Join(keys, " ")); err != nil {
		k.p.tb.Fatalf("tmux -C: %v", err)
	}
}

// end ends the pane's process as a person does and returns how long after
// the signal or the last key the process had ended: SIGTERM when keys is
// nil; otherwise it types /quit, waits until the pane shows typed, and
// sends keys.
func (p *tmuxPane) end(typed string, keys []string) time.Duration {
	p.tb.Helper()
	if keys == nil {
		sent := time.Now()
		if err := syscall.Kill(p.pid, syscall.SIGTERM); err != nil {
			p.tb.Fatal(err)
		}
		return p.waitEnded(sent)
	}
	kb := p.keyboard()
	kb.send("/quit")
	p.waitFor(typed)
	sent := time.Now()
	kb.send(keys...)
	return p.waitEnded(sent)
}

// TestQuitEndsTheProcessAtOnce starts otter exactly as the report did —
// the process of a `tmux new-session -d -x 100 -y 30` pane, a fresh home
// with no config — and ends it with SIGTERM, with /quit Enter, and with
// /quit Enter Esc (a key right behind the Enter), timing until the process
// itself has exited (/proc/PID/stat, every 10 ms; see waitEnded for why not
// kill -0).
//
// A quit must take ≤ 0.3 s, and on a busy machine the time from the signal
// or the key to the process's end holds more than otter's own: the key's
// way through tmux, the signal's delivery, the scheduler, the polling.
// Those are measured the same way, in turn with otter, on a pane whose
// process ends at once — `head -n 1`, which SIGTERM ends and which exits
// when Enter completes its line — and the best of three otter runs may take
// at most 0.3 s more than the best of three head runs: a wait on a timer
// (Bubble Tea's 0.5 s for its input reader, which an Esc behind the Enter
// made otter wait; a server's stop grace) shows in every run, a busy
// scheduler not in all three. Keys go through a tmux client started
// beforehand (see keyboard), not a tmux process started as they are timed.
func TestQuitEndsTheProcessAtOnce(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	t.Parallel()
	bin := testpeer.Otter(t)
	head, err := exec.LookPath("head")
	if err != nil {
		t.Fatal(err)
	}
	const runs = 3
	const allowed = 300 * time.Millisecond
	for _, how := range []struct {
		name string
		keys []string // nil: SIGTERM
	}{
		{"SIGTERM", nil},
		{"/quit Enter", []string{"Enter"}},
		{"/quit Enter Esc", []string{"Enter", "Escape"}},
	} {
		var otterTook, floor []time.Duration
		for i := range runs {
			work := t.TempDir()
			p := startPane(t, fmt.Sprintf("quit%d", i), freshHome(t), work, bin)
			p.waitFor("/help")
			otterTook = append(otterTook, p.end("› /quit", how.keys))

			s := startPane(t, fmt.Sprintf("floor%d", i), freshHome(t), work, head, "-n", "1")
			floor = append(floor, s.end("/quit", how.keys))
		}
		best, bestFloor := slices.Min(otterTook), slices.Min(floor)
		t.Logf("%s: otter gone after %v; head after %v", how.name, otterTook, floor)
		if best-bestFloor > allowed {
			t.Errorf("%s: otter's process ended %v after it at best, %v later than head's (%v): more than %v; all runs: %v",
				how.name, best.Round(time.Millisecond), (best - bestFloor).Round(time.Millisecond), bestFloor.Round(time.Millisecond), allowed, otterTook)
		}
	}
}

// TestIdleTUISleeps: otter's TUI with the prompt shown and nobody typing
// sleeps. Over 5 s its threads may switch context at most 100 times (the
// issue's target is 200 in 10 s; otter makes about 25 now). Before, Bubble
// Tea's renderer woke 60 times a second to look for a frame to draw and
// the input's drawn cursor blinked twice a second: ~1,700 in 5 s. Then a
// key typed after the idle spell still shows: the renderer wakes up.
func TestIdleTUISleeps(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	t.Parallel()
	bin := testpeer.Otter(t)
	p := startPane(t, "idle", freshHome(t), t.TempDir(), bin)
	p.waitFor("/help")
	// The first frames' work done, the renderer asleep (idleAfter).
	time.Sleep(time.Second)
	const limit = 100
	var counts []int
	for range 3 { // a busy machine may wake it now and then: the best of three
		before := contextSwitches(t, p.pid)
		time.Sleep(5 * time.Second)
		counts = append(counts, contextSwitches(t, p.pid)-before)
		if counts[len(counts)-1] <= limit {
			break
		}
	}
	t.Logf("context switches of an idle otter in 5 s: %v", counts)
	if best := slices.Min(counts); best > limit {
		t.Errorf("an idle otter switched context %d times in 5 s at best (runs: %v), more than %d: something wakes it", best, counts, limit)
	}
	p.tm("send-keys", "-t", p.name, "otters")
	p.waitFor("› otters")
}

// BenchmarkTUIIdleWakeups counts the context switches of all of otter's
// threads over 10 s of an idle TUI (no config: the prompt shown, nobody
// typing), started as a person starts it in tmux, against the baseline: a
// Bubble Tea program with a static view (the test binary, see
// runIdleBaseline) started the same way, measured over the same 10 s.
//
//	tui-idle-wakeups: otter=… baseline=… ratio=…   (context switches in 10 s)
func BenchmarkTUIIdleWakeups(b *testing.B) {
	bin := testpeer.Otter(b)
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		work := b.TempDir()
		o := startPane(b, "idle", freshHome(b), work, bin)
		base := startPane(b, "baseline", append(freshHome(b), envIdleBaseline+"=1"), work, self)
		o.waitFor("/help")
		base.waitFor("baseline ready")
		// Let both settle: the first frames' work and timers done.
		time.Sleep(2 * time.Second)
		o0, b0 := contextSwitches(b, o.pid), contextSwitches(b, base.pid)
		time.Sleep(10 * time.Second)
		ow, bw := contextSwitches(b, o.pid)-o0, contextSwitches(b, base.pid)-b0
		ratio := float64(ow) / float64(max(bw, 1))
		b.ReportMetric(float64(ow), "otter-switches")
		b.ReportMetric(float64(bw), "baseline-switches")
		b.ReportMetric(ratio, "ratio")
		fmt.Printf("tui-idle-wakeups: otter=%d baseline=%d ratio=%.2f (context switches of all threads in 10 s idle)\n", ow, bw, ratio)
	}
}

// contextSwitches sums the voluntary and involuntary context switches of
// every thread of process pid.
func contextSwitches(tb testing.TB, pid int) int {
	tb.Helper()
	files, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	if err != nil || len(files) == 0 {
		tb.Fatalf("the threads of %d: %v", pid, err)
	}
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // a thread that just ended
		}
		for _, line := range strings.Split(string(data), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if ok && (k == "voluntary_ctxt_switches" || k == "nonvoluntary_ctxt_switches") {
				c, _ := strconv.Atoi(strings.TrimSpace(v))
				n += c
			}
		}
	}
	return n
}

// envIdleBaseline makes the test binary the idle benchmark's baseline.
const envIdleBaseline = "OTTER_IDLE_BASELINE"

// idleBaseline is a Bubble Tea program whose view never changes.
type idleBaseline struct{}

func (idleBaseline) Init() tea.Cmd { return nil }
func (idleBaseline) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok && k.String() == "ctrl+c" {
		return idleBaseline{}, tea.Quit
	}
	return idleBaseline{}, nil
}
func (idleBaseline) View() tea.View {
	v := tea.NewView("baseline ready")
	v.AltScreen = true
	return v
}

// runIdleBaseline runs idleBaseline with Bubble Tea's defaults.
func runIdleBaseline() int {
	if _, err := tea.NewProgram(idleBaseline{}).Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
