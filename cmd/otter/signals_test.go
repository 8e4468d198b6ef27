package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
)

// The test binary doubles as a stdio MCP server: with envSigServer set,
// TestMain starts a `sleep` child (a grandchild of otter, in the server's
// process group) and serves one tool on stdin/stdout.
const envSigServer = "OTTER_SIGTEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(envSigServer) != "" {
		os.Exit(runSignalTestServer())
	}
	if os.Getenv(envSessionServer) != "" {
		os.Exit(runSessionTestServer())
	}
	if os.Getenv(envMarkServer) != "" {
		os.Exit(runMarkTestServer())
	}
	if os.Getenv(envHugeServer) != "" {
		os.Exit(runHugeTestServer())
	}
	if os.Getenv(envProbeServer) != "" {
		os.Exit(runProbeTestServer())
	}
	if os.Getenv(envPinsServer) != "" {
		os.Exit(runPinsTestServer())
	}
	if os.Getenv(envIdleBaseline) != "" {
		os.Exit(runIdleBaseline())
	}
	os.Exit(testpeer.Run(m))
}

func runSignalTestServer() int {
	sleep := exec.Command("sleep", "300")
	if err := sleep.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "starting sleep:", err)
		return 1
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "sigtest", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "noop"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil, nil
	})
	_ = s.Run(context.Background(), &sdk.StdioTransport{})
	return 0
}

// TestSignalsEndTheTUI sends SIGINT 30 times, SIGTERM 30 times, SIGHUP and
// SIGQUIT 10 times each to the real otter TUI in tmux, each to its own
// otter with a stdio server that has a child of its own. Each otter must
// exit by itself through its cleanup within 2 s of the signal, leaving no
// process behind — the server's child included — with the status shells
// expect of a process a signal ended (130, 143, 129, 131), and the
// terminal in the modes it had (stty -a once otter has gone). Runs go in
// parallel batches.
//
// Before, Bubble Tea's own signal handler and otter's both caught SIGINT and
// SIGTERM: Bubble Tea's blocked sending its quit message to a program that
// had already stopped on the cancelled context, and otter hung with every
// server running; SIGHUP killed otter outright, skipping the process-group
// cleanup, so the server's child lived on. Then otter exited 0 on SIGINT
// and SIGTERM, which a shell's caller takes for success. SIGQUIT still
// got Go's own handling: a goroutine dump on the screen, exit status 2,
// the terminal left raw (-icanon -echo) and the server's child running.
func TestSignalsEndTheTUI(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the process-leak check reads /proc")
	}
	t.Parallel()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal("tmux is not installed: run `make test-deps` (scripts/install-system-deps.sh) or `apt-get install -y tmux`")
	}
	dir := t.TempDir()
	bin := testpeer.Otter(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	cfgDir := filepath.Join(home, ".config", "otter")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The run's marker reaches the server (and its child) through its env
	// table: otter passes a server no other variable of its own.
	cfg := fmt.Sprintf("[[mcp.servers]]\nname = \"sig\"\ncommand = %q\nenv = { %s = \"1\", OTTER_SIGTEST_RUN = \"${OTTER_SIGTEST_RUN}\" }\n", self, envSigServer)
	if err := os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}

	sock := filepath.Join(dir, "tmux.sock")
	tm := func(args ...string) (string, error) {
		out, err := exec.Command(tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("tmux %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return string(out), nil
	}
	if _, err := tm("new-session", "-d", "-s", "sig", "-x", "100", "-y", "30", "sleep 100000"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", sock, "kill-server").Run() })
	if _, err := tm("set-option", "-g", "remain-on-exit", "on"); err != nil {
		t.Fatal(err)
	}

	// run starts one otter in its own window, waits until its server and
	// the server's child run, sends sig and returns what went wrong.
	run := func(n int, sig syscall.Signal) error {
		marker := fmt.Sprintf("OTTER_SIGTEST_RUN=%s/%d", dir, n)
		win := fmt.Sprintf("run%d", n)
		script := filepath.Join(dir, win+".sh")
		// The shell records how otter ended: tmux fills in a dead pane's
		// exit status only once its SIGCHLD handler has reaped the
		// process, which on a loaded machine can come too late to read.
		statusFile := filepath.Join(dir, win+".status")
		// And the terminal's modes once otter has gone, first.
		sttyFile := filepath.Join(dir, win+".stty")
		text := fmt.Sprintf("#!/bin/sh\ncd %q || exit 99\nunset ANTHROPIC_API_KEY OPENAI_API_KEY\nexport %s HOME=%q XDG_CONFIG_HOME=%q XDG_STATE_HOME=%q XDG_DATA_HOME=%q XDG_CACHE_HOME=%q TERM=xterm-256color\n%q\nstatus=$?\nstty -a > %q\necho $status > %q\n",
			home, marker, home, filepath.Join(home, ".config"), filepath.Join(home, ".local/state"),
			filepath.Join(home, ".local/share"), filepath.Join(home, ".cache"), bin, sttyFile, statusFile)
		if err := os.WriteFile(script, []byte(text), 0o755); err != nil {
			return err
		}
		if _, err := tm("new-window", "-d", "-t", "sig", "-n", win, script); err != nil {
			return err
		}
		target := "sig:" + win
		pane := func() (dead string, err error) {
			out, err := tm("display-message", "-p", "-t", target, "#{pane_dead}")
			return strings.TrimSpace(out), err
		}
		ready := time.Now().Add(60 * time.Second)
		for {
			screen, err := tm("capture-pane", "-p", "-t", target)
			if err != nil {
				return err
			}
			running, err := testpeer.MarkedProcesses(marker)
			if err != nil {
				return err
			}
			if strings.Contains(screen, "1/1 servers") && len(running) >= 3 { // otter, server, sleep
				break
			}
			if time.Now().After(ready) {
				return fmt.Errorf("otter never showed its server connected; screen:\n%s", screen)
			}
			time.Sleep(50 * time.Millisecond)
		}
		pidText, err := tm("display-message", "-p", "-t", target, "#{pane_pid}")
		if err != nil {
			return err
		}
		// otter is the pane's shell's only child.
		shell := strings.TrimSpace(pidText)
		children, err := os.ReadFile(filepath.Join("/proc", shell, "task", shell, "children"))
		if err != nil {
			return fmt.Errorf("children of the pane's shell %s: %w", shell, err)
		}
		var pid int
		if _, err := fmt.Sscan(string(children), &pid); err != nil {
			return fmt.Errorf("otter's pid among %q: %w", children, err)
		}
		sent := time.Now()
		if err := syscall.Kill(pid, sig); err != nil {
			return fmt.Errorf("kill -%s %d: %w", sig, pid, err)
		}
		// Wait past the 2 s allowed, to tell a slow exit from a hang.
		for time.Since(sent) < 10*time.Second {
			dead, err := pane()
			if err != nil {
				return err
			}
			left, err := testpeer.MarkedProcesses(marker)
			if err != nil {
				return err
			}
			if dead == "1" && len(left) == 0 {
				took := time.Since(sent)
				out, err := os.ReadFile(statusFile)
				if err != nil {
					return fmt.Errorf("%s: how otter ended was not recorded: %w", sig, err)
				}
				var status int
				if _, err := fmt.Sscan(string(out), &status); err != nil {
					return fmt.Errorf("%s: exit status %q: %w", sig, out, err)
				}
				modes, err := os.ReadFile(sttyFile)
				if err != nil {
					return fmt.Errorf("%s: the terminal's modes after otter were not recorded: %w", sig, err)
				}
				switch {
				case status != 128+int(sig):
					return fmt.Errorf("%s: otter exited with status %d, want %d as shells expect", sig, status, 128+int(sig))
				case took > 2*time.Second:
					return fmt.Errorf("%s: otter and its servers took %s to exit, more than 2s", sig, took.Round(time.Millisecond))
				case !saneTerminal(string(modes)):
					return fmt.Errorf("%s: otter left the terminal raw:\n%s", sig, modes)
				}
				_, err = tm("kill-window", "-t", target)
				return err
			}
			time.Sleep(20 * time.Millisecond)
		}
		dead, _ := pane()
		screen, _ := tm("capture-pane", "-p", "-t", target)
		left, _ := testpeer.MarkedProcesses(marker) // read a moment ago
		return fmt.Errorf("%s: 10s after the signal otter exited=%s and these processes remain: %v; screen:\n%s",
			sig, dead, left, screen)
	}

	var sigs []syscall.Signal
	for range 30 {
		sigs = append(sigs, syscall.SIGINT, syscall.SIGTERM)
	}
	for range 10 {
		sigs = append(sigs, syscall.SIGHUP, syscall.SIGQUIT)
	}
	const batch = 10
	failures := map[syscall.Signal]int{}
	var mu sync.Mutex
	for start := 0; start < len(sigs); start += batch {
		var wg sync.WaitGroup
		for n := start; n < min(start+batch, len(sigs)); n++ {
			wg.Go(func() {
				if err := run(n, sigs[n]); err != nil {
					mu.Lock()
					defer mu.Unlock()
					failures[sigs[n]]++
					if failures[sigs[n]] <= 2 { // the first ones say enough
						t.Errorf("run %d: %v", n, err)
					}
				}
			})
		}
		wg.Wait()
	}
	if len(failures) > 0 {
		t.Errorf("failed runs by signal: %v", failures)
	}
}

// saneTerminal says whether stty -a's output shows a terminal in the
// modes a shell expects (line editing and echo on), not left raw.
func saneTerminal(stty string) bool {
	words := strings.Fields(stty)
	return slices.Contains(words, "icanon") && slices.Contains(words, "echo") && slices.Contains(words, "isig")
}

// TestClosedStdoutEndsOtterThroughItsCleanup: when the reader of otter's
// stdout goes away (`otter -p … --output-format stream-json | head -1`,
// `otter mcp tools | head -1`), otter stops as it does on SIGTERM — its
// stdio server's process group, the server's own child included, is
// stopped — and exits 141 as a process SIGPIPE ended, 10 runs out of 10.
// (Before, the Go runtime's SIGPIPE killed otter at its next write with no
// cleanup: it exited 141 and the server's child lived on, 10/10.)
func TestClosedStdoutEndsOtterThroughItsCleanup(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the process-leak check reads /proc")
	}
	bin := testpeer.Otter(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	var failures []string
	for n := range 10 {
		model := llmtest.New(t, llmtest.OpenAI,
			llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "mcp__sig__noop", Args: "{}"}}},
			llmtest.Reply{Text: strings.Split(strings.Repeat("many words of an answer ", 200), " ")})
		cfg := promptConfig(t, model, fmt.Sprintf("[[mcp.servers]]\nname = \"sig\"\ncommand = %q\nenv = { %s = \"1\", OTTER_SIGTEST_RUN = \"${OTTER_SIGTEST_RUN}\" }\n", self, envSigServer))
		for _, args := range []string{"-p hi --output-format stream-json --allow-tools mcp__sig__noop", "mcp tools"} {
			marker := fmt.Sprintf("OTTER_SIGTEST_RUN=%s/pipe%d-%s", dir, n, strings.Fields(args)[0])
			script := fmt.Sprintf("%q --cwd %q --config %q %s | head -1 >/dev/null; echo ${PIPESTATUS[0]}", bin, dir, cfg, args)
			cmd := exec.Command("bash", "-c", script)
			cmd.Env = append(os.Environ(), marker, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
				"XDG_STATE_HOME="+filepath.Join(home, ".local/state"), "XDG_DATA_HOME="+filepath.Join(home, ".local/share"),
				"XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: %v", script, err)
			}
			var left []string
			for wait := time.Now(); time.Since(wait) < 5*time.Second; time.Sleep(50 * time.Millisecond) {
				if left, err = testpeer.MarkedProcesses(marker); err != nil {
					t.Fatal(err)
				} else if len(left) == 0 {
					break
				}
			}
			status := strings.TrimSpace(string(out))
			if len(left) > 0 || (status != "141" && status != "0") {
				failures = append(failures, fmt.Sprintf("run %d, otter %s | head -1: exit %s, processes left %v", n, args, status, left))
				for _, p := range left {
					if pid, err := strconv.Atoi(p); err == nil {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			}
		}
	}
	if len(failures) > 0 {
		t.Errorf("%d of 20 runs left processes or exited wrongly:\n%s", len(failures), strings.Join(failures, "\n"))
	}
}

// TestSignalEndsOtterStuckInASystemCall: a signal always ends otter, even
// when its cleanup cannot run. `otter --config FIFO` blocks in open(2)
// until something writes to the FIFO, which nothing does; SIGTERM then
// cancels a context nobody looks at. otter must exit anyway once endGrace
// has passed, with 143 as a process SIGTERM ended; and a second SIGTERM
// ends it at once, without waiting for endGrace. (Before, otter ignored
// SIGTERM, SIGINT and SIGHUP there and ran until killed.)
func TestSignalEndsOtterStuckInASystemCall(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("whether otter is blocked is read in /proc")
	}
	t.Parallel()
	bin := testpeer.Otter(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "config.toml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	for _, twice := range []bool{false, true} {
		cmd := exec.Command(bin, "--cwd", dir, "--config", fifo, "-p", "hi")
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
			"XDG_STATE_HOME="+filepath.Join(home, ".local/state"), "XDG_DATA_HOME="+filepath.Join(home, ".local/share"),
			"XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		// Blocked opening the FIFO: wait_for_partner is where open(2) of
		// a FIFO sleeps until the other end is opened.
		blocked := time.Now().Add(60 * time.Second)
		for !blockedOpeningFIFO(cmd.Process.Pid) {
			if time.Now().After(blocked) {
				t.Fatalf("otter never blocked opening its config FIFO; stderr:\n%s", stderr.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
		sent := time.Now()
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if twice {
			// Seen by otter before the second: it has started to stop.
			time.Sleep(100 * time.Millisecond)
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
		}
		var err error
		select {
		case err = <-exited:
		case <-time.After(endGrace + 20*time.Second):
			t.Fatalf("twice=%v: otter was still running %s after SIGTERM; stderr:\n%s", twice, time.Since(sent).Round(time.Millisecond), stderr.String())
		}
		took := time.Since(sent)
		t.Logf("twice=%v: exited %v after SIGTERM: %v; stderr: %s", twice, took.Round(time.Millisecond), err, strings.TrimSpace(stderr.String()))
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 143 {
			t.Errorf("twice=%v: otter ended with %v, want exit status 143", twice, err)
		}
		if !strings.Contains(stderr.String(), "exited without finishing the cleanup") {
			t.Errorf("twice=%v: stderr does not say that the cleanup was cut short:\n%s", twice, stderr.String())
		}
		switch {
		case !twice && took < endGrace:
			t.Errorf("otter exited %v after SIGTERM, before endGrace (%v): the cleanup was not given its time", took, endGrace)
		case twice && took >= endGrace:
			t.Errorf("after a second SIGTERM otter exited only %v after the first: it waited for endGrace (%v)", took, endGrace)
		}
	}
}

// blockedOpeningFIFO says whether a thread of process pid sleeps in
// open(2) of a FIFO.
func blockedOpeningFIFO(pid int) bool {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", pid))
	for _, w := range tasks {
		if b, err := os.ReadFile(w); err == nil && (string(b) == "wait_for_partner" || string(b) == "fifo_open") {
			return true
		}
	}
	return false
}
