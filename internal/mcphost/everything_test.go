package mcphost

import (
	"context"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/testpeer"
)

// everything locates Node 22 and the official reference server installed by
// scripts/install-test-deps.sh.
func everything(t *testing.T) (node, index string) {
	p := testpeer.Require(t)
	return p.Node, p.Everything
}

func checkEverything(t *testing.T, h *harness, name string) {
	t.Helper()
	st := h.waitState(name, servers.StateConnected)
	if st.Tools == 0 || st.Prompts == 0 || st.Resources == 0 {
		t.Errorf("%s: tools %d prompts %d resources %d", name, st.Tools, st.Prompts, st.Resources)
	}
	if !slices.Contains(entryNames(h.set), "mcp__"+name+"__get-sum") {
		t.Fatalf("%s: get-sum not offered; tools: %v", name, entryNames(h.set))
	}
	if got := h.callText(name, "get-sum", `{"a":2,"b":3}`); got != "The sum of 2 and 3 is 5." {
		t.Errorf("%s: get-sum = %q", name, got)
	}
}

func TestReferenceServerStdio(t *testing.T) {
	node, index := everything(t)
	srv := config.Server{Name: "everything", Command: node, Args: []string{index, "stdio"}, StartupTimeout: dur(liveness)}
	h := newHarness(t, configOf(srv), servers.Options{})
	h.m.Start(context.Background())
	checkEverything(t, h, "everything")
}

func TestReferenceServerStreamableHTTP(t *testing.T) {
	node, index := everything(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(node, index, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	cmd.SysProcAttr = sysProcAttr() // its own group, killed with the test (Linux)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(liveness)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reference server never listened on %s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	h := newHarness(t, configOf(remote("everything", "http", "http://"+addr+"/mcp")), servers.Options{})
	h.m.Start(context.Background())
	checkEverything(t, h, "everything")
}
