//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"golang.org/x/sys/unix"
)

// BenchmarkFirstFrame measures how long the TUI takes, with no MCP server
// configured, from its start to its first frame on a terminal (the
// input's "/help" hint drawn), against the startup benchmark's baseline
// (a minimal Go program printing a line) started the same way on a
// terminal of its own, in turn.
//
//	first-frame: otter=… baseline=… ratio=…   (median; ratio otter/baseline)
func BenchmarkFirstFrame(b *testing.B) {
	otter, base := benchBinaries(b)
	home := b.TempDir()
	env := []string{"HOME=" + home, "TERM=xterm-256color", "PATH=" + os.Getenv("PATH")}
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"} {
		env = append(env, v+"="+filepath.Join(home, strings.ToLower(v)))
	}
	work := b.TempDir() // no config anywhere: no server, no provider
	otterRun := func() time.Duration { return untilShown(b, exec.Command(otter), env, work, "/help") }
	baseRun := func() time.Duration {
		return untilShown(b, exec.Command(base, "--version"), env, work, "baseline version dev")
	}
	for range 3 { // page cache, first-run costs
		otterRun()
		baseRun()
	}
	var to, tb []time.Duration
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			to = append(to, otterRun())
			tb = append(tb, baseRun())
		} else {
			tb = append(tb, baseRun())
			to = append(to, otterRun())
		}
	}
	o, bl := median(to), median(tb)
	ratio := float64(o) / float64(bl)
	b.ReportMetric(float64(o.Microseconds()), "otter-µs")
	b.ReportMetric(float64(bl.Microseconds()), "baseline-µs")
	b.ReportMetric(ratio, "ratio")
	fmt.Printf("first-frame: otter=%s baseline=%s ratio=%.2f (starts each: %d)\n", o.Round(10*time.Microsecond), bl.Round(10*time.Microsecond), ratio, len(to))
}

// untilShown starts cmd on a new 100×30 terminal and returns the time
// until the terminal shows want; then the process is killed.
func untilShown(b *testing.B, cmd *exec.Cmd, env []string, dir, want string) time.Duration {
	b.Helper()
	master, slave, err := openPTY(30, 100)
	if err != nil {
		b.Fatalf("opening a terminal: %v", err)
	}
	defer master.Close()
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatalf("starting %s: %v", cmd.Path, err)
	}
	slave.Close()
	shown := make(chan time.Duration, 1)
	done := make(chan struct{})
	var seen bytes.Buffer // the reader's until done
	go func() {
		defer close(done)
		buf := make([]byte, 64<<10)
		for {
			n, err := master.Read(buf)
			seen.Write(buf[:n])
			if strings.Contains(ansi.Strip(seen.String()), want) {
				shown <- time.Since(t0)
				return
			}
			if err != nil {
				return
			}
		}
	}()
	var d time.Duration
	var ok bool
	select {
	case d = <-shown:
		ok = true
	case <-done: // it may have been shown just before the end
		select {
		case d = <-shown:
			ok = true
		default:
		}
	case <-time.After(30 * time.Second):
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	master.Close()
	<-done
	if !ok {
		b.Fatalf("%s never showed %q; the terminal showed:\n%s", cmd.Path, want, ansi.Strip(seen.String()))
	}
	return d
}

// openPTY opens a pseudo-terminal of rows×cols: the master end to read
// what a program writes, the slave end to be its terminal.
func openPTY(rows, cols uint16) (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("unlocking the terminal: %w", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("naming the terminal: %w", err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, nil, err
	}
	if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols}); err != nil {
		master.Close()
		slave.Close()
		return nil, nil, fmt.Errorf("sizing the terminal: %w", err)
	}
	return master, slave, nil
}
