package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/sandbox"
	"github.com/otter-sh/otter/internal/testpeer"
)

// envProbeServer makes the test binary a stdio MCP server whose tool probe
// tries what a hostile server would, each attempt reported on a line of its
// result as "what: ok" or "what: refused (error)". Its input names the
// paths and the address.
const envProbeServer = "OTTER_PROBE_SERVER"

type probeInput struct {
	Key      string `json:"key"`      // a private key to read
	Config   string `json:"config"`   // otter's config.toml
	HomeFile string `json:"homefile"` // a file to write in the home directory
	ProjFile string `json:"projfile"` // a file to write in the project
	Addr     string `json:"addr"`     // a TCP listener to connect to
}

func runProbeTestServer() int {
	if path, ok := strings.CutPrefix(os.Getenv(envProbeServer), "read:"); ok {
		// A server that needs a file at start and fails without it, as
		// Node's would: the error on stderr names the path.
		if _, err := os.ReadFile(path); err != nil {
			fmt.Fprintf(os.Stderr, "Error: %v\n", err)
			return 1
		}
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "probe", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "probe"}, func(_ context.Context, _ *sdk.CallToolRequest, in probeInput) (*sdk.CallToolResult, any, error) {
		var lines []string
		say := func(what string, err error) {
			if err != nil {
				lines = append(lines, fmt.Sprintf("%s: refused (%v)", what, err))
			} else {
				lines = append(lines, what+": ok")
			}
		}
		_, err := os.ReadFile(in.Key)
		say("read key", err)
		_, err = os.ReadFile(in.Config)
		say("read otter config", err)
		// otter is the server's parent (the launcher became the server):
		// its environment holds the API keys.
		_, err = os.ReadFile(fmt.Sprintf("/proc/%d/environ", os.Getppid()))
		say("read otter environ", err)
		say("write home", os.WriteFile(in.HomeFile, []byte("x"), 0o600))
		say("write project", os.WriteFile(in.ProjFile, []byte("x"), 0o600))
		c, err := net.Dial("tcp", in.Addr)
		if err == nil {
			c.Close()
		}
		say("connect", err)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(lines, "\n")}}}, nil, nil
	})
	_ = s.Run(context.Background(), &sdk.StdioTransport{})
	return 0
}

// TestStdioServersRunInTheSandbox: the real binary starts a stdio server
// (the probe above) that tries to read the user's SSH key, otter's
// config and otter's environment (/proc/PID/environ: root's servers run in
// a user namespace of their own for it), to write in a folder of the home
// directory and in the project, and to connect to a local listener. Under
// the default sandbox it reads none of them, writes only in the project and connects; network =
// false stops the connection, and so does a host list (the server may
// connect to otter's proxy only; internal/mcphost tests what goes through
// it), which mcp list --json and mcp get show; write = ["~/notes"] lets it write there; enabled = false
// lets it do everything, as before the sandbox. otter mcp list --json
// shows each server's sandbox.
func TestStdioServersRunInTheSandbox(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox is Linux's Landlock")
	}
	if err := sandbox.Available(); err != nil {
		t.Fatalf("this machine's kernel must have Landlock for this test: %v", err)
	}
	t.Parallel()
	bin := testpeer.Otter(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	home := filepath.Join(root, "home")
	proj := filepath.Join(root, "proj")
	notes := filepath.Join(home, "notes")
	for _, d := range []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".config", "otter"), proj, notes} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	key := filepath.Join(home, ".ssh", "id_rsa")
	if err := os.WriteFile(key, []byte("PRIVATE KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	userCfg := filepath.Join(home, ".config", "otter", "config.toml")
	env := append(testpeer.HomeEnv(home), "TMPDIR="+filepath.Join(root, "tmp"))
	if err := os.MkdirAll(filepath.Join(root, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	args := fmt.Sprintf(`{"key":%q,"config":%q,"homefile":%q,"projfile":%q,"addr":%q}`,
		key, userCfg, filepath.Join(notes, "x"), filepath.Join(proj, "x"), ln.Addr().String())
	for _, tc := range []struct {
		name, sandbox string
		want          map[string]bool // what: allowed
	}{
		{"default", "", map[string]bool{"read key": false, "read otter config": false, "read otter environ": false, "write home": false, "write project": true, "connect": true}},
		{"network = false", "sandbox = { network = false }", map[string]bool{"read key": false, "read otter environ": false, "write project": true, "connect": false}},
		{"network = [allowed.test]", `sandbox = { network = ["allowed.test"] }`, map[string]bool{"read key": false, "read otter environ": false, "write project": true, "connect": false}},
		{"write = [~/notes]", `sandbox = { write = ["~/notes"] }`, map[string]bool{"read key": false, "write home": true}},
		{"enabled = false", "sandbox = { enabled = false }", map[string]bool{"read key": true, "read otter config": true, "read otter environ": true, "write home": true, "connect": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := fmt.Sprintf("[[mcp.servers]]\nname = \"probe\"\ncommand = %q\nenv = { %s = \"1\" }\n%s\n", self, envProbeServer, tc.sandbox)
			if err := os.WriteFile(userCfg, []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{filepath.Join(notes, "x"), filepath.Join(proj, "x")} {
				os.Remove(f)
			}
			cmd := exec.Command(bin, "--cwd", proj, "mcp", "call", "probe", "probe", args)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("otter mcp call probe: %v\n%s", err, out)
			}
			for what, allowed := range tc.want {
				line := what + ": ok"
				if got := strings.Contains(string(out), line); got != allowed {
					t.Errorf("%s: %q allowed = %v, want %v:\n%s", tc.name, what, got, allowed, out)
				}
			}
			list := exec.Command(bin, "--cwd", proj, "mcp", "list", "--json")
			list.Env = env
			js, _ := list.Output()
			wantOn := tc.name != "enabled = false"
			if on := strings.Contains(string(js), `"on": true`); on != wantOn {
				t.Errorf("%s: mcp list --json does not show the sandbox %v:\n%s", tc.name, wantOn, js)
			}
			if strings.HasPrefix(tc.name, "network") && strings.Contains(string(js), `"weaker"`) {
				t.Errorf("%s: the network is confined less on this machine, which makes network namespaces:\n%s", tc.name, js)
			}
			if strings.HasPrefix(tc.name, "network = [") {
				if !strings.Contains(string(js), `"hosts": [`) || !strings.Contains(string(js), `"allowed.test"`) {
					t.Errorf("mcp list --json does not list the sandbox's hosts:\n%s", js)
				}
				get := exec.Command(bin, "--cwd", proj, "mcp", "get", "probe")
				get.Env = env
				text, err := get.CombinedOutput()
				if want := "sandbox:   on · network: only allowed.test (through otter's proxy)"; err != nil || !strings.Contains(string(text), want) {
					t.Errorf("mcp get does not say %q (%v):\n%s", want, err, text)
				}
			}
		})
	}
}

// TestServersStartThroughTheLauncherBuiltWithOtter: otter starts its
// servers through the otter-sandbox beside it, built with it
// (scripts/build.sh); an otter-sandbox that is not that build — here a
// script that would leave a mark — is never run, and otter is its own
// launcher, as it is with none beside it. The server is confined either way.
func TestServersStartThroughTheLauncherBuiltWithOtter(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox is Linux's Landlock")
	}
	t.Parallel()
	built := testpeer.Otter(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	home := filepath.Join(root, "home")
	key := filepath.Join(home, ".ssh", "id_rsa")
	if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, []byte("PRIVATE KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(root, "otter.toml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("[[mcp.servers]]\nname = \"probe\"\ncommand = %q\nenv = { %s = \"1\" }\n", self, envProbeServer)), 0o600); err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(root, "the script ran")
	copyTo := func(t *testing.T, name, from string) {
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name     string
		beside   func(path string) // the otter-sandbox beside otter
		launcher string            // which runs: "otter-sandbox" or "otter"
	}{
		{"the one built with otter", func(p string) { copyTo(t, p, filepath.Join(filepath.Dir(built), "otter-sandbox")) }, "otter-sandbox"},
		{"another program", func(p string) {
			script := fmt.Sprintf("#!/bin/sh\ntouch %q\nexec %q \"$@\"\n", mark, filepath.Join(filepath.Dir(built), "otter-sandbox"))
			if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
		}, "otter"},
		{"none", nil, "otter"},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(mark)
			dir := t.TempDir()
			bin := filepath.Join(dir, "otter")
			copyTo(t, bin, built)
			if c.beside != nil {
				c.beside(filepath.Join(dir, "otter-sandbox"))
			}
			logFile := filepath.Join(dir, "otter.log")
			cmd := exec.Command(bin, "--config", cfg, "--cwd", root, "--log-file", logFile, "--log-level", "debug",
				"mcp", "call", "probe", "probe", fmt.Sprintf(`{"key":%q,"config":%q,"homefile":%q,"projfile":%q,"addr":"127.0.0.1:9"}`,
					key, cfg, filepath.Join(home, "x"), filepath.Join(root, "x")))
			cmd.Env = testpeer.HomeEnv(home)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("otter mcp call probe: %v\n%s", err, out)
			}
			if strings.Contains(string(out), "read key: ok") {
				t.Errorf("the server read ~/.ssh/id_rsa: it ran unconfined:\n%s", out)
			}
			log, _ := os.ReadFile(logFile)
			want := "launcher=" + filepath.Join(dir, c.launcher) + "\n"
			if !strings.Contains(string(log), "MCP server started in the sandbox") || !strings.Contains(string(log), want) {
				t.Errorf("the log does not say the server started through %s (%s):\n%s", c.launcher, want, log)
			}
			if _, err := os.Stat(mark); err == nil {
				t.Errorf("otter ran the otter-sandbox that is not its build")
			}
		})
	}
}

// TestSandboxRefusalSaysWhatToAllow: a server that cannot start because
// the sandbox kept its credentials file from it fails with its stderr and a
// sentence naming the path and the line to add to its entry, at its file
// and line.
func TestSandboxRefusalSaysWhatToAllow(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox is Linux's Landlock")
	}
	t.Parallel()
	bin := testpeer.Otter(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	creds := filepath.Join(home, ".aws", "credentials")
	if err := os.MkdirAll(filepath.Dir(creds), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(creds, []byte("[default]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(home, "otter.toml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("[[mcp.servers]]\nname = \"aws\"\ncommand = %q\nenv = { %s = \"read:%s\" }\n", self, envProbeServer, creds)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", cfg, "--cwd", home, "mcp", "list")
	cmd.Env = testpeer.HomeEnv(home)
	out, _ := cmd.CombinedOutput()
	want := fmt.Sprintf("the sandbox keeps %s from servers; if this server needs it, add sandbox = { read = [%q] } to its entry (%s:1)", creds, filepath.Dir(creds), cfg)
	if !strings.Contains(string(out), want) {
		t.Errorf("otter mcp list does not say %q:\n%s", want, out)
	}
}

// BenchmarkSandboxStart times `otter mcp list` with one stdio server —
// the reference everything server under Node, as a person runs servers —
// under the default sandbox against the same with sandbox = { enabled =
// false }, runs alternating, in the same process: what the launcher (the
// otter-sandbox built beside otter starting, its Landlock rules, the exec)
// adds to a server's start.
// And the same with network = false — the server in a network namespace
// of its own, otter's check that it can make one included, as at each
// start of otter — and with a host list (network = ["example.org"]),
// which adds the proxy and the proxy variables, among them
// NODE_USE_ENV_PROXY=1: Node 22 then loads its proxy support as it
// starts, 150–200 ms of its own (node -e 'process.exit(0)': 190 ms
// without, 340–500 ms with, on the 2-core machine), the price of Node's
// fetch reaching the allowed hosts at all.
//
//	sandbox-start: otter=… baseline=… ratio=…
//	sandbox-start-isolated: otter=… baseline=… ratio=…
//	sandbox-start-hosts: otter=… baseline=… ratio=…
//
// 25 rounds, each an unconfined run, one of each kind, and an unconfined
// run again. otter= and baseline= are the medians of the 25 runs; ratio=
// is the median of the 25 rounds' ratios, each run against the mean of its
// round's two unconfined ones: this VM's speed drifts by ±20 % over a
// minute (Node's start alone by ±80 ms), and a ratio of runs seconds apart
// cancels that where a ratio of medians taken over the whole minute does
// not (the same build gave 1.03 and 1.12 that way, five minutes apart).
func BenchmarkSandboxStart(b *testing.B) {
	if err := sandbox.Available(); err != nil {
		b.Skip(err)
	}
	bin := testpeer.Otter(b)
	peers := testpeer.Require(b)
	home := b.TempDir()
	env := testpeer.HomeEnv(home)
	cfgs := map[string]string{}
	for kind, extra := range map[string]string{
		"off":     "sandbox = { enabled = false }\n",
		"default": "",
		"nonet":   "sandbox = { network = false }\n",
		"hosts":   "sandbox = { network = [\"example.org\"] }\n",
	} {
		f := filepath.Join(home, kind+".toml")
		// lazy = false: started at every run, its tools known or not.
		if err := os.WriteFile(f, []byte(peers.EverythingConfig()+"lazy = false\n"+extra), 0o600); err != nil {
			b.Fatal(err)
		}
		cfgs[kind] = f
	}
	run := func(kind string) time.Duration {
		cmd := exec.Command(bin, "--config", cfgs[kind], "--cwd", home, "mcp", "list")
		cmd.Env = env
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("otter mcp list: %v\n%s", err, out)
		} else if !strings.Contains(string(out), "connected") {
			b.Fatalf("otter mcp list (%s): the server did not connect:\n%s", kind, out)
		}
		return time.Since(start)
	}
	median := func(ds []time.Duration) time.Duration {
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	medianRatio := func(rs []float64) float64 {
		slices.Sort(rs)
		return rs[len(rs)/2]
	}
	for b.Loop() {
		var def, nonet, hosts, off []time.Duration
		var defR, nonetR, hostsR []float64
		for range 25 {
			before := run("off")
			d, n, h := run("default"), run("nonet"), run("hosts")
			after := run("off")
			off = append(off, before, after)
			def, nonet, hosts = append(def, d), append(nonet, n), append(hosts, h)
			mean := float64(before+after) / 2
			defR, nonetR, hostsR = append(defR, float64(d)/mean), append(nonetR, float64(n)/mean), append(hostsR, float64(h)/mean)
		}
		base := median(off)
		for _, r := range []struct {
			name string
			ds   []time.Duration
			rs   []float64
			what string
		}{
			{"sandbox-start", def, defR, "sandboxed"},
			{"sandbox-start-isolated", nonet, nonetR, "sandboxed with network = false, in a network namespace of its own"},
			{"sandbox-start-hosts", hosts, hostsR, "sandboxed with a host list: its own namespace, the proxy, Node's proxy support loaded"},
		} {
			fmt.Printf("%s: otter=%s baseline=%s ratio=%.2f (otter mcp list with the everything server under Node, %s vs not; medians of 25 rounds)\n",
				r.name, median(r.ds).Round(100*time.Microsecond), base.Round(100*time.Microsecond), medianRatio(r.rs), r.what)
		}
	}
}
