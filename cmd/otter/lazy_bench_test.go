package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
)

// BenchmarkLazy12 times `otter -p hi` with 12 servers otter knows (the
// reference everything server under Node, pinned by one `otter mcp list`)
// against the same with no server configured, runs alternating, in the
// same process; then the peak memory of each run's process tree (otter and
// every server it started: the sum of each process's peak resident set,
// sampled while it runs), and the same run with [mcp] lazy = false, every
// server started as before lazy start.
//
//	lazy-12: otter=… baseline=… ratio=…   (median of 10 runs each)
func BenchmarkLazy12(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("the process tree's memory is read from /proc")
	}
	const n = 12
	marker := fmt.Sprintf("bench-%d-%d", os.Getpid(), time.Now().UnixNano())
	srv := llmtest.New(b, llmtest.OpenAI)
	srv.Respond = func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{"Hello."}} }
	known := lazyHome(b, srv, n, marker)
	none := lazyHome(b, srv, 0, marker)
	eager := lazyHome(b, srv, n, marker)
	cfg := filepath.Join(eager.Dir, ".config", "otter", "config.toml")
	text, err := os.ReadFile(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(cfg, append([]byte("[mcp]\nlazy = false\n\n"), text...), 0o600); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []testpeer.Cmd{known, eager} {
		if r := c.Run(b, ctx, "mcp", "list"); r.Code != 0 {
			b.Fatalf("otter mcp list: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
	}
	// otter itself carries the marker too: its tree is otter and its servers.
	for _, c := range []*testpeer.Cmd{&known, &none, &eager} {
		c.Env = append(c.Env, "OTTER_LAZY_MARK="+marker+"-otter")
	}
	run := func(c testpeer.Cmd) time.Duration {
		t0 := time.Now()
		if r := c.Run(b, ctx, "-p", "hi"); r.Code != 0 || r.Stdout != "Hello.\n" {
			b.Fatalf("otter -p hi: exit %d, %q\n%s", r.Code, r.Stdout, r.Stderr)
		}
		return time.Since(t0)
	}
	// peak runs c once while sampling its tree's memory.
	peak := func(c testpeer.Cmd) (int64, time.Duration) {
		stop := sampleTree(b, "OTTER_LAZY_MARK="+marker+"-")
		d := run(c)
		return stop(), d
	}
	for range 2 { // page cache, first-run costs
		run(known)
		run(none)
	}
	for b.Loop() {
		var tk, tn []time.Duration
		for i := range 10 {
			if i%2 == 0 {
				tk, tn = append(tk, run(known)), append(tn, run(none))
			} else {
				tn, tk = append(tn, run(none)), append(tk, run(known))
			}
		}
		o, base := median(tk), median(tn)
		var mk, mn, me int64
		var te time.Duration
		for range 3 {
			k, _ := peak(known)
			z, _ := peak(none)
			e, d := peak(eager)
			mk, mn, me, te = max(mk, k), max(mn, z), max(me, e), max(te, d)
		}
		fmt.Printf("lazy-12: otter=%s baseline=%s ratio=%.2f (otter -p hi with 12 known servers vs none, median of 10; "+
			"peak memory of the process tree %s vs %s; with [mcp] lazy = false, every server started: %s, %s)\n",
			o.Round(time.Millisecond), base.Round(time.Millisecond), float64(o)/float64(base),
			mib(mk), mib(mn), te.Round(10*time.Millisecond), mib(me))
	}
}

func mib(kb int64) string { return fmt.Sprintf("%.0f MiB", float64(kb)/1024) }

// sampleTree samples, every few milliseconds until the returned stop is
// called, the processes whose environment holds a variable starting with
// prefix, and returns the sum of each one's peak resident set (VmHWM) in
// KiB: the tree's peak memory, as an upper bound (their peaks need not
// coincide).
func sampleTree(tb testing.TB, prefix string) (stop func() int64) {
	peaks := map[string]int64{}
	var mu sync.Mutex
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			entries, err := os.ReadDir("/proc")
			if err != nil {
				tb.Error(err)
				return
			}
			for _, e := range entries {
				pid := e.Name()
				if pid[0] < '0' || pid[0] > '9' {
					continue
				}
				env, err := os.ReadFile(filepath.Join("/proc", pid, "environ"))
				if err != nil || !bytes.Contains(env, []byte("\x00"+prefix)) && !bytes.HasPrefix(env, []byte(prefix)) {
					continue
				}
				if kb := vmHWM(pid); kb > 0 {
					mu.Lock()
					peaks[pid] = max(peaks[pid], kb)
					mu.Unlock()
				}
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() int64 {
		close(done)
		<-finished
		var sum int64
		for _, kb := range peaks {
			sum += kb
		}
		return sum
	}
}

// vmHWM is a process's peak resident set in KiB; 0 if it is gone.
func vmHWM(pid string) int64 {
	f, err := os.Open(filepath.Join("/proc", pid, "status"))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}
