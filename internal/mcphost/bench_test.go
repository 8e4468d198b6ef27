package mcphost

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/toolname"
)

// benchServer is the stdio test server as a config entry, outside a test.
// startConnected starts a manager of cfg's servers into set and waits
// until every one is connected with its tools; it is closed when b ends
// (a benchmark or a test).
func startConnected(b testing.TB, cfg config.MCP, set *tool.Set) *Manager {
	ctx := context.Background()
	m := New(cfg, servers.Options{Tools: set})
	b.Cleanup(func() { m.Close() })
	m.Start(ctx)
	if err := m.WaitSettled(ctx); err != nil {
		b.Fatal(err)
	}
	for _, st := range m.Statuses() {
		if st.State != servers.StateConnected || st.Tools == 0 {
			b.Fatalf("%s: %s with %d tools %s", st.Name, st.State, st.Tools, st.Error)
		}
	}
	return m
}

func benchServer(name, mode string, env ...string) config.Server {
	srv := config.Server{
		Name:           name,
		Transport:      config.TransportStdio,
		Command:        os.Args[0],
		Env:            map[string]string{envMode: mode},
		StartupTimeout: dur(liveness),
	}
	for i := 0; i+1 < len(env); i += 2 {
		srv.Env[env[i]] = env[i+1]
	}
	return srv
}

// rawSession connects the plain go-sdk client to the same stdio server.
func rawSession(b *testing.B, mode string, env ...string) *sdk.ClientSession {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envMode+"="+mode)
	cmd.Env = append(cmd.Env, env...)
	client := sdk.NewClient(&sdk.Implementation{Name: "raw", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	return cs
}

func medianOf(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}

// BenchmarkCallOverhead compares one tool call through the tool the manager
// provides (and through the Set in front of it) over stdio with the raw
// go-sdk client calling the same server program, and with a bare pipe round
// trip to a child process (the physical floor).
func BenchmarkCallOverhead(b *testing.B) {
	ctx := context.Background()
	set := tool.NewSet(tool.Options{})
	// Several server processes per side, used in turn, so that how fast one
	// process happens to be (where the scheduler puts it) does not decide
	// the result.
	const procs = 4
	var cfg config.MCP
	for i := range procs {
		cfg.Servers = append(cfg.Servers, benchServer(fmt.Sprintf("bench%d", i), "normal"))
	}
	m := startConnected(b, cfg, set)
	var raws, own []*sdk.ClientSession
	var names []string
	var tools []tool.Tool
	for i := range procs {
		raw := rawSession(b, "normal")
		defer raw.Close()
		raws = append(raws, raw)
		name := fmt.Sprintf("bench%d", i)
		cs, _ := m.Session(name)
		own = append(own, cs)
		names = append(names, toolname.Qualified(name, "echo"))
		e, ok := set.Lookup(names[i])
		if !ok {
			b.Fatalf("%s not in the set", names[i])
		}
		tools = append(tools, e.Tool)
	}

	cat := exec.Command(os.Args[0])
	cat.Env = append(os.Environ(), envMode+"=cat")
	catIn, _ := cat.StdinPipe()
	catOut, _ := cat.StdoutPipe()
	if err := cat.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { catIn.Close(); cat.Wait() }()
	catR := bufio.NewReader(catOut)

	argsJSON := json.RawMessage(`{"text":"hello"}`)
	argsMap := map[string]any{"text": "hello"}
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}` + "\n")
	check := func(res *tool.Result, err error) {
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
	// Each side uses its server processes in turn.
	var nTool, nSet, nRaw, nOwn int
	toolCall := func() { // the tool the manager hands to the Set
		nTool++
		check(tools[nTool%procs].Call(ctx, argsJSON))
	}
	setCall := func() { // through the Set: argument validation, call records
		nSet++
		check(set.Call(ctx, names[nSet%procs], argsJSON))
	}
	rawCall := func() {
		nRaw++
		check(raws[nRaw%procs].CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: argsMap}))
	}
	pipeCall := func() {
		if _, err := catIn.Write(line); err != nil {
			b.Fatal(err)
		}
		if _, err := catR.ReadSlice('\n'); err != nil && err != io.EOF {
			b.Fatal(err)
		}
	}
	// The sessions otter uses, called directly: isolates otter's layers
	// (timeout, progress token, figures; and the Set's validation) from any
	// difference between server processes.
	ownCall := func() {
		nOwn++
		check(own[nOwn%procs].CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: argsJSON}))
	}
	// Every call is timed on its own and the sides take turns, rotating who
	// goes first; medians keep a neighbour's load on a shared machine from
	// deciding the result. The same-session comparison runs separately: a
	// server process called more often than another answers faster (it
	// stays hot), which would favour whichever side shares it.
	measure := func(sides ...func()) [][]time.Duration {
		times := make([][]time.Duration, len(sides))
		const calls, warmup = 3000, 200
		for i := range calls + warmup {
			for j := range sides {
				k := (i + j) % len(sides)
				start := time.Now()
				sides[k]()
				if i >= warmup {
					times[k] = append(times[k], time.Since(start))
				}
			}
		}
		return times
	}
	times := measure(toolCall, rawCall, pipeCall)
	viaSet := measure(setCall, rawCall)
	same := measure(toolCall, setCall, ownCall)
	o, r, p := medianOf(times[0]), medianOf(times[1]), medianOf(times[2])
	ratio := float64(o) / float64(r)
	os2, r2 := medianOf(viaSet[0]), medianOf(viaSet[1])
	ot, oset, direct := medianOf(same[0]), medianOf(same[1]), medianOf(same[2])
	fmt.Printf("call-overhead: otter=%dns baseline=%dns ratio=%.3f\n", o.Nanoseconds(), r.Nanoseconds(), ratio)
	fmt.Printf("call-overhead-set: otter=%dns baseline=%dns ratio=%.3f\n", os2.Nanoseconds(), r2.Nanoseconds(), float64(os2)/float64(r2))
	fmt.Printf("call-overhead-same-session: otter=%dns otter-set=%dns baseline=%dns ratio=%.3f set-ratio=%.3f\n",
		ot.Nanoseconds(), oset.Nanoseconds(), direct.Nanoseconds(), float64(ot)/float64(direct), float64(oset)/float64(direct))
	// The physical floor: a bare pipe round trip to a child process.
	fmt.Printf("call-vs-pipe-floor: otter=%dns baseline=%dns ratio=%.3f\n", o.Nanoseconds(), p.Nanoseconds(), float64(o)/float64(p))
	b.ReportMetric(float64(o.Nanoseconds()), "otter-ns/call")
	b.ReportMetric(float64(r.Nanoseconds()), "baseline-ns/call")
	b.ReportMetric(ratio, "ratio")
	b.ReportMetric(float64(os2)/float64(r2), "set-ratio")
	b.ReportMetric(float64(ot)/float64(direct), "same-session-ratio")
	b.ReportMetric(float64(p.Nanoseconds()), "pipe-floor-ns")

	b.ResetTimer()
	for b.Loop() {
		toolCall()
	}
}

// BenchmarkStartup10 compares starting 10 servers that each take 300 ms to
// answer initialize, through the manager (start, initialize, first lists,
// tools in the Set), with connecting the raw go-sdk client to one of them.
func BenchmarkStartup10(b *testing.B) {
	ctx := context.Background()
	const delay = "300ms"
	startOtter := func() time.Duration {
		var cfg config.MCP
		for i := range 10 {
			cfg.Servers = append(cfg.Servers, benchServer(fmt.Sprintf("s%d", i), "normal", envDelay, delay))
		}
		set := tool.NewSet(tool.Options{})
		m := New(cfg, servers.Options{Tools: set})
		defer m.Close()
		start := time.Now()
		m.Start(ctx)
		if err := m.WaitSettled(ctx); err != nil {
			b.Fatal(err)
		}
		d := time.Since(start)
		tools := 0
		for _, st := range m.Statuses() {
			if st.State != servers.StateConnected || st.Tools == 0 {
				b.Fatalf("%s: %s with %d tools %s", st.Name, st.State, st.Tools, st.Error)
			}
			tools += st.Tools
		}
		if len(set.Entries()) != tools {
			b.Fatalf("%d tools in the set, want all %d of the servers'", len(set.Entries()), tools)
		}
		return d
	}
	startRaw := func() time.Duration {
		start := time.Now()
		cs := rawSession(b, "normal", envDelay+"="+delay)
		for _, err := range cs.Tools(ctx, nil) {
			if err != nil {
				b.Fatal(err)
			}
		}
		d := time.Since(start)
		cs.Close()
		return d
	}
	// The floor of starting ten at once on this machine: the raw go-sdk
	// client connecting to ten such servers concurrently (on few CPUs,
	// spawning ten processes costs time of its own).
	startRaw10 := func() time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		sessions := make([]*sdk.ClientSession, 10)
		for i := range sessions {
			wg.Go(func() {
				cs := rawSession(b, "normal", envDelay+"="+delay)
				for _, err := range cs.Tools(ctx, nil) {
					if err != nil {
						b.Error(err)
					}
				}
				sessions[i] = cs
			})
		}
		wg.Wait()
		d := time.Since(start)
		for _, cs := range sessions {
			cs.Close()
		}
		return d
	}
	var otterT, rawT, raw10T []time.Duration
	for range 5 {
		otterT = append(otterT, startOtter())
		rawT = append(rawT, startRaw())
		raw10T = append(raw10T, startRaw10())
	}
	o, r, r10 := medianOf(otterT), medianOf(rawT), medianOf(raw10T)
	ratio := float64(o) / float64(r)
	fmt.Printf("startup-10: otter=%s baseline=%s ratio=%.3f\n", o.Round(time.Millisecond), r.Round(time.Millisecond), ratio)
	fmt.Printf("startup-10-vs-raw-10: otter=%s baseline=%s ratio=%.3f (CPUs: %d)\n", o.Round(time.Millisecond), r10.Round(time.Millisecond), float64(o)/float64(r10), runtime.NumCPU())
	b.ReportMetric(float64(o.Milliseconds()), "otter-ms")
	b.ReportMetric(float64(r.Milliseconds()), "baseline-ms")
	b.ReportMetric(ratio, "ratio")
	for b.Loop() {
		startOtter()
	}
}
