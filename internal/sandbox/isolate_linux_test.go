package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/testpeer"
)

// envIsolationProbe makes the test binary, exec'd by the launcher in its
// namespace, try the ways out it is given in the variables below and
// print a line for each: "what: ok …" or "what: refused (…)".
const (
	envIsolationProbe = "OTTER_SANDBOX_ISOLATION_PROBE"
	envProbeTargets   = "OTTER_SANDBOX_PROBE_TARGETS" // what=network!address, comma-separated
)

func isolationProbe() int {
	for _, t := range strings.Split(os.Getenv(envProbeTargets), ",") {
		what, rest, _ := strings.Cut(t, "=")
		network, addr, _ := strings.Cut(rest, "!")
		c, err := net.DialTimeout(network, addr, 5*time.Second)
		if err != nil {
			fmt.Printf("%s: refused (%v)\n", what, err)
			continue
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		fmt.Printf("%s: ok %s\n", what, strings.TrimSpace(line))
	}
	status, _ := os.ReadFile("/proc/self/status")
	for l := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(l, "CapAmb:"); ok {
			fmt.Printf("CapAmb: %s\n", strings.TrimSpace(v))
		}
	}
	return 0
}

// greeter accepts on ln and writes greeting to each connection, counting
// them.
func greeter(t *testing.T, ln net.Listener, greeting string) *atomic.Int32 {
	t.Helper()
	var n atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			fmt.Fprintln(c, greeting)
			c.Close()
		}
	}()
	return &n
}

// A program the launcher runs isolated, allowed only the proxy's port,
// reaches otter's end of that port (the listener handed over) and nothing
// else: not the same port on another address of this machine — where
// Landlock's port rule alone would let it through —, not this machine's
// abstract Unix sockets; and it keeps no capability of its namespace.
func TestIsolatedProgramReachesOnlyTheHandedOverPort(t *testing.T) {
	if err := Available(); err != nil {
		t.Fatalf("this machine's kernel must have Landlock for this test: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := CanIsolate(self); err != nil {
		t.Fatalf("this machine must allow user namespaces for this test: %v", err)
	}
	// What the program must not reach: a listener on every address of
	// this machine, on the port it is allowed, and an abstract socket.
	outside, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer outside.Close()
	port := outside.Addr().(*net.TCPAddr).Port
	reachedOutside := greeter(t, outside, "outside")
	abstract, err := net.Listen("unix", fmt.Sprintf("@otter-isolation-test-%d", os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	defer abstract.Close()
	reachedAbstract := greeter(t, abstract, "abstract")

	targets := []string{
		fmt.Sprintf("proxy=tcp!127.0.0.1:%d", port),
		fmt.Sprintf("other address=tcp!127.0.0.2:%d", port),
		"abstract=unix!" + abstract.Addr().String(),
	}
	if ip := testpeer.ExternalIPv4(); ip != "" {
		targets = append(targets, fmt.Sprintf("external=tcp!%s:%d", ip, port))
	}
	p := Policy{Read: []string{"/"}, ProxyPort: port, Isolated: true}
	exe, argv, err := Command(self, p, self, self, []string{"-test.run=^$"})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, argv[1:]...)
	cmd.Env = append(os.Environ(), envIsolationProbe+"=1", envProbeTargets+"="+strings.Join(targets, ","))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	iso := startIsolated(t, cmd, p)
	ln, err := iso.Listener(time.Minute)
	if err != nil {
		cmd.Wait()
		t.Fatalf("%v\n%s", err, out.String())
	}
	defer ln.Close()
	reachedProxy := greeter(t, ln, "otter's proxy")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Logf("the isolated program:\n%s", out.String())
	lines := map[string]string{}
	for l := range strings.Lines(out.String()) {
		what, result, _ := strings.Cut(strings.TrimSpace(l), ": ")
		lines[what] = result
	}
	if lines["proxy"] != "ok otter's proxy" || reachedProxy.Load() != 1 {
		t.Errorf("proxy: %q (%d connections), want ok otter's proxy:\n%s", lines["proxy"], reachedProxy.Load(), out.String())
	}
	for _, l := range targets[1:] {
		what, _, _ := strings.Cut(l, "=")
		if !strings.HasPrefix(lines[what], "refused") {
			t.Errorf("%s: %q, want refused:\n%s", what, lines[what], out.String())
		}
	}
	if n := reachedOutside.Load() + reachedAbstract.Load(); n != 0 {
		t.Errorf("the isolated program reached this machine's listeners %d times", n)
	}
	if got := strings.Fields(lines["CapAmb"]); len(got) != 1 || strings.Trim(got[0], "0") != "" {
		t.Errorf("the program kept ambient capabilities: %q", lines["CapAmb"])
	}
}

// A launcher that fails before it hands the port over (here: a port
// that cannot be) ends the wait at once with an error that says so, not
// at the timeout, and exits 126 having said why.
func TestIsolationHandOverEndsWithTheLauncher(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := CanIsolate(self); err != nil {
		t.Fatalf("this machine must allow user namespaces for this test: %v", err)
	}
	p := Policy{Read: []string{"/"}, ProxyPort: 70000, Isolated: true}
	exe, argv, err := Command(self, p, "/bin/true", "true", nil)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, argv[1:]...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	iso := startIsolated(t, cmd, p)
	start := time.Now()
	ln, err := iso.Listener(time.Minute)
	if err == nil {
		ln.Close()
		t.Fatal("a listener was handed over for port 70000")
	}
	if !strings.Contains(err.Error(), "ended without handing over") || time.Since(start) > 30*time.Second {
		t.Errorf("after %v: %v", time.Since(start), err)
	}
	var exit *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &exit) || exit.ExitCode() != 126 {
		t.Errorf("the launcher: %v, want exit status 126", err)
	}
	if !strings.Contains(stderr.String(), "listening for the proxy in its network namespace") {
		t.Errorf("the launcher's stderr does not say why: %q", stderr.String())
	}
}

// The same, for a user who is not root (the test runs as root in CI):
// the launcher needs the capability of its namespace that Isolate gives
// such a user, and drops it.
func TestIsolationForAUserWhoIsNotRoot(t *testing.T) {
	if os.Getuid() != 0 {
		t.Log("not root: the tests above ran as a user who is not root")
		TestIsolatedProgramReachesOnlyTheHandedOverPort(t)
		return
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The test binary must be readable by that user: a copy in a folder
	// it may enter.
	dir, err := os.MkdirTemp("", "otter-isolation-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := dir + "/sandbox.test"
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestIsolatedProgramReachesOnlyTheHandedOverPort$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "TMPDIR="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestIsolatedProgramReachesOnlyTheHandedOverPort") {
		t.Errorf("as uid 65534: %v\n%s", err, out)
	}
}

// startIsolated starts cmd isolated by p, its hand-over closed at the
// test's end.
func startIsolated(t *testing.T, cmd *exec.Cmd, p Policy) *Isolation {
	t.Helper()
	iso, err := Isolate(cmd, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { iso.Close() })
	err = cmd.Start()
	iso.Started()
	if err != nil {
		t.Fatal(err)
	}
	return iso
}
