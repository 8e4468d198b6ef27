package shellline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "here.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, line string
		max        int
		want       []string // in Output
		status     string
		spilled    bool
	}{
		{name: "output and exit 0", line: "echo hi", want: []string{"hi\n"}, status: "exit 0"},
		{name: "stderr interleaved, exit status", line: "echo out; echo err >&2; exit 3", want: []string{"out\nerr\n"}, status: "exit 3"},
		{name: "in the working directory", line: "ls", want: []string{"here.txt"}, status: "exit 0"},
		{name: "capped with both ends and the spill named", line: "seq 1 20000", max: 1000,
			want: []string{"1\n2\n", "20000\n", "bytes cut", "the whole output is in "}, status: "exit 0", spilled: true},
		{name: "killed by a signal", line: "kill -SEGV $$", status: "killed by SIGSEGV"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			spill := t.TempDir()
			res, err := Run(context.Background(), c.line, Options{Shell: "/bin/sh", Dir: dir, MaxBytes: c.max, SpillDir: spill})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(res.Output, w) {
					t.Errorf("output does not hold %q:\n%s", w, res.Output)
				}
			}
			if res.Status() != c.status {
				t.Errorf("status %q, want %q", res.Status(), c.status)
			}
			if (res.Spill != "") != c.spilled {
				t.Fatalf("spill %q, want spilled=%v", res.Spill, c.spilled)
			}
			if c.spilled {
				whole, err := os.ReadFile(res.Spill)
				if err != nil {
					t.Fatal(err)
				}
				if int64(len(whole)) != res.Bytes || !strings.HasPrefix(string(whole), "1\n2\n") || !strings.HasSuffix(string(whole), "19999\n20000\n") {
					t.Errorf("the spill file holds %d bytes (want %d) or not the whole output", len(whole), res.Bytes)
				}
				if len(res.Output) > c.max+200 {
					t.Errorf("output is %d bytes, over the cap %d", len(res.Output), c.max)
				}
			}
		})
	}
}

// TestStopKillsTheProcessGroup stops a line whose shell started children
// (a pipeline and a background job) and checks that no process of its group
// is left.
func TestStopKillsTheProcessGroup(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result, 1)
	go func() {
		res, err := Run(ctx, "echo $$ > "+pidFile+"; sleep 100 & sleep 100 | cat", Options{Shell: "/bin/sh"})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	var pgid int
	deadline := time.Now().Add(10 * time.Second)
	for pgid == 0 && time.Now().Before(deadline) {
		data, _ := os.ReadFile(pidFile)
		pgid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		time.Sleep(20 * time.Millisecond)
	}
	if pgid == 0 {
		t.Fatal("the line never started")
	}
	// The two sleeps of the line run in its process group.
	for deadline := time.Now().Add(10 * time.Second); countInGroup(pgid, "sleep") < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the line's sleeps never started in process group %d", pgid)
		}
	}
	cancel()
	select {
	case res := <-done:
		if !res.Stopped || res.Status() != "stopped" {
			t.Errorf("result %+v, want stopped", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the context was canceled")
	}
	// kill(-pgid, 0) fails with ESRCH once no process of the group is left.
	deadline = time.Now().Add(5 * time.Second)
	for syscall.Kill(-pgid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still has processes", pgid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestOnOutputStreamsWithinTheCap(t *testing.T) {
	t.Parallel()
	var views []string
	res, err := Run(context.Background(), "echo first; sleep 0.3; echo second; head -c 500000 /dev/zero | tr '\\0' x", Options{
		Shell: "/bin/sh", MaxBytes: 4000, SpillDir: t.TempDir(), Interval: 50 * time.Millisecond,
		OnOutput: func(v string) { views = append(views, v) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(views) < 2 || !strings.HasPrefix(views[0], "first\n") || strings.Contains(views[0], "second") {
		t.Errorf("output did not stream before the line ended: %q", views)
	}
	for _, v := range views {
		if len(v) > 4000+200 {
			t.Fatalf("a view of %d bytes, over the cap", len(v))
		}
	}
	if views[len(views)-1] != res.Output {
		t.Errorf("the last view is not the final output")
	}
	if res.Bytes != int64(len("first\nsecond\n")+500000) {
		t.Errorf("Bytes = %d", res.Bytes)
	}
}

// TestEndStopsBackgroundChildren: a line that leaves children running in
// the background (sleep &) ends with them: once Run returns, none of them
// runs, and Run did not wait for them. The children are found by a marker
// argument in /proc (a zombie waiting for init has no command line).
func TestEndStopsBackgroundChildren(t *testing.T) {
	t.Parallel()
	marker := fmt.Sprintf("%d.%d", 300+os.Getpid()%1000, time.Now().UnixNano()%1000000)
	start := time.Now()
	res, err := Run(context.Background(), "for i in $(seq 20); do sleep "+marker+" & done; echo started", Options{Shell: "/bin/sh"})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	running := func() (pids []string) {
		dir, _ := os.ReadDir("/proc")
		for _, e := range dir {
			cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if slices.Contains(strings.Split(string(cmdline), "\x00"), marker) {
				pids = append(pids, e.Name())
			}
		}
		return pids
	}
	t.Cleanup(func() {
		for _, p := range running() {
			pid, _ := strconv.Atoi(p)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if res.Output != "started\n" || res.Status() != "exit 0" || res.Stopped {
		t.Errorf("result %+v, want the line's own output and exit 0", res)
	}
	if took > KillGrace+time.Second {
		t.Errorf("Run took %s: it waited on the background children", took)
	}
	if pids := running(); len(pids) > 0 {
		t.Fatalf("%d of the line's background children outlived it: %v", len(pids), pids)
	}
}

// countInGroup counts the processes named comm in process group pgid
// (from /proc).
func countInGroup(pgid int, comm string) int {
	dirs, _ := os.ReadDir("/proc")
	n := 0
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces, so split
		// after its closing parenthesis.
		s := string(stat)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open {
			continue
		}
		f := strings.Fields(s[close+1:])
		if len(f) > 2 && s[open+1:close] == comm && f[2] == strconv.Itoa(pgid) {
			n++
		}
	}
	return n
}

// A line started in the background is read while it runs: Since gives
// what came after what was read before, and the result once it is over.
// Wrap starts another program in the shell's place (the sandbox launcher,
// in otter): here env, which then execs the shell with a variable set.
func TestStartReadsAsItGoes(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "go")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	wrapped := false
	r, err := Start(`echo "first $MARK"; read x < `+fifo+`; echo second`, Options{Shell: "/bin/sh",
		Wrap: func(path string, argv []string) (string, []string, error) {
			wrapped = true
			return "/usr/bin/env", append([]string{"env", "MARK=wrapped", path}, argv[1:]...), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if !wrapped {
		t.Fatal("Wrap was not called")
	}
	var text string
	var off int64
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(text, "first wrapped\n") {
		if time.Now().After(deadline) {
			t.Fatalf("the first line never came: %q", text)
		}
		var more string
		more, off = r.Since(off)
		text += more
		time.Sleep(5 * time.Millisecond)
	}
	if _, over := r.Result(); over {
		t.Fatal("the line is over before it was let go on")
	}
	if err := os.WriteFile(fifo, []byte("go\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := r.Wait(context.Background())
	if rest, _ := r.Since(off); rest != "second\n" {
		t.Errorf("Since after the first read = %q, want only the second line", rest)
	}
	if res.Status() != "exit 0" || !strings.Contains(res.Output, "first wrapped\nsecond\n") {
		t.Errorf("result %q: %q", res.Status(), res.Output)
	}
}
