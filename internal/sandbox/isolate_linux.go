package sandbox

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A program whose policy lets it reach no host, or only the hosts of a
// list, runs in a network namespace of its own (Policy.Isolated), made
// with a user namespace so that no privilege is needed: a namespace with
// a loopback interface and nothing else. Landlock's TCP rules name ports,
// not addresses, so in otter's own namespace a program allowed the
// proxy's port could connect to that port on any host; in its namespace
// there is no other host. The way out is otter's filtering proxy: the
// launcher, before it confines itself, listens on 127.0.0.1:ProxyPort in
// the namespace and hands that listening socket to otter over a socket
// pair (file descriptor 3), and otter's proxy accepts the program's
// connections on it — a socket belongs to the namespace it was made in,
// wherever it is used — and dials the allowed hosts from otter's
// namespace. No relay process, no file in the file system. A namespace
// also has its own abstract Unix sockets: the program cannot reach the
// desktop's and daemons' ones either.
//
// Where user namespaces are off (a sysctl, an AppArmor policy, a
// container that forbids them) CanIsolate says so and the caller falls
// back to Landlock's port rule and the seccomp filter alone.

// handOverFD is the launcher's end of the socket pair over which it hands
// the proxy's listener to otter.
const handOverFD = 3

// probeArg, after LauncherArg, makes the launcher set its namespace up and
// exit: CanIsolate's check that it can.
const probeArg = "--probe-isolation"

// ErrNoIsolation is wrapped by CanIsolate's error.
var ErrNoIsolation = errors.New("a network namespace of its own is not available")

var isolation struct {
	sync.Mutex
	checked map[string]error // by launcher
}

// CanIsolate reports whether launcher (otter's own executable) can run a
// program in a network namespace of its own here: it starts the launcher
// once so, to set the namespace up and exit (a few milliseconds, once per
// launcher and otter process), and remembers the answer.
func CanIsolate(launcher string) error {
	isolation.Lock()
	defer isolation.Unlock()
	if err, ok := isolation.checked[launcher]; ok {
		return err
	}
	err := probeIsolation(launcher)
	if isolation.checked == nil {
		isolation.checked = map[string]error{}
	}
	isolation.checked[launcher] = err
	return err
}

func probeIsolation(launcher string) error {
	cmd := exec.Command(Launcher(launcher), LauncherArg, probeArg)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	iso, err := Isolate(cmd, Policy{Isolated: true})
	if err != nil {
		return err
	}
	defer iso.Close()
	err = cmd.Start()
	iso.Started()
	if err == nil {
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			err = errors.Join(errors.New("it did not finish in 10 s"), <-done)
		}
	}
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		return fmt.Errorf("%w here (%v): a server with a host list can reach any host on the proxy's port, and one with network = false still reaches this machine's abstract Unix sockets", ErrNoIsolation, err)
	}
	return nil
}

// Isolation is the otter end of a program started in a network namespace
// of its own.
type Isolation struct {
	otterEnd, childEnd *os.File
}

// Isolate sets cmd — the launcher's command for p (Command), not started
// yet — to start in a user namespace of its own and, if p.Isolated, a
// network namespace: as the same user (root keeps its whole range of ids,
// and with it the rights it had on other users' files) and, for a user
// that is not root, with the one capability the launcher needs to bring
// the loopback interface up, which it drops before the exec. Call Started
// once cmd.Start returned, and Close when the program has exited.
func Isolate(cmd *exec.Cmd, p Policy) (*Isolation, error) {
	if len(cmd.ExtraFiles) != 0 {
		return nil, errors.New("sandbox: the launcher's command passes files of its own")
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	a := cmd.SysProcAttr
	a.Cloneflags |= syscall.CLONE_NEWUSER
	uid, gid := os.Getuid(), os.Getgid()
	if uid == 0 {
		all := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		a.UidMappings, a.GidMappings = all, all
		a.GidMappingsEnableSetgroups = true
	} else {
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		a.GidMappingsEnableSetgroups = false // an unprivileged user may not, and need not
	}
	iso := &Isolation{}
	if !p.Isolated {
		return iso, nil
	}
	a.Cloneflags |= syscall.CLONE_NEWNET
	if uid != 0 {
		a.AmbientCaps = append(a.AmbientCaps, unix.CAP_NET_ADMIN)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("a socket pair for the sandbox's launcher: %w", err)
	}
	iso.otterEnd, iso.childEnd = os.NewFile(uintptr(fds[0]), "sandbox-handover"), os.NewFile(uintptr(fds[1]), "sandbox-handover-child")
	cmd.ExtraFiles = []*os.File{iso.childEnd} // handOverFD in the launcher
	return iso, nil
}

// SeparateRoot sets p.OwnUsers when otter runs as root and this system
// makes user namespaces. Root's programs keep CAP_SYS_PTRACE, with which
// they could read otter's memory and environment (/proc/PID/environ, the
// API keys in it) — Landlock refuses that only to a program without the
// capability. In a user namespace of its own the program is still root
// over every user's files (all ids are mapped), but has no capability over
// otter's processes, which belong to the namespace above. The check starts
// true(1) in a user namespace once (a millisecond or two); the error says
// why root's program cannot be kept from otter's processes here.
func SeparateRoot(p *Policy) error {
	if os.Geteuid() != 0 {
		return nil
	}
	if err := userNamespaces(); err != nil {
		return fmt.Errorf("otter runs as root and this system makes no user namespace (%v): what it starts keeps CAP_SYS_PTRACE, with which it can read otter's environment", err)
	}
	p.OwnUsers = true
	return nil
}

var userNamespaces = sync.OnceValue(func() error {
	path, err := exec.LookPath("true")
	if err != nil {
		return err
	}
	cmd := exec.Command(path)
	if _, err := Isolate(cmd, Policy{}); err != nil {
		return err
	}
	return cmd.Run()
})

// Started closes otter's copy of the launcher's end, so that the
// launcher's exit (or its exec) ends the hand-over. Call it after
// cmd.Start, whether it succeeded or not.
func (iso *Isolation) Started() {
	if iso.childEnd != nil {
		iso.childEnd.Close()
	}
}

// Listener waits up to timeout for the listening socket the launcher
// opened in its namespace on 127.0.0.1:ProxyPort: the program's only way
// out, for otter's proxy to serve. An error if the launcher exited or
// failed without handing it over (its stderr says why).
func (iso *Isolation) Listener(timeout time.Duration) (net.Listener, error) {
	if iso.otterEnd == nil {
		return nil, errors.New("the sandbox's launcher was started with no network namespace of its own")
	}
	c, err := net.FileConn(iso.otterEnd)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil, fmt.Errorf("the sandbox's hand-over is a %T", c)
	}
	if err := uc.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := uc.ReadMsgUnix(buf, oob)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("the sandbox's launcher handed over no port for the proxy: %w", err)
	}
	if n == 0 {
		return nil, errors.New("the sandbox's launcher ended without handing over a port for the proxy")
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("the sandbox's launcher's hand-over is malformed: %d messages, %v", len(msgs), err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, fmt.Errorf("the sandbox's launcher's hand-over is malformed: %d descriptors, %v", len(fds), err)
	}
	f := os.NewFile(uintptr(fds[0]), "sandbox-proxy-listener")
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("the sandbox's launcher's hand-over: %w", err)
	}
	return ln, nil
}

// Close releases otter's end of the hand-over.
func (iso *Isolation) Close() error {
	iso.Started()
	if iso.otterEnd == nil {
		return nil
	}
	return iso.otterEnd.Close()
}

// setUpNamespace is the launcher's part, in its new namespace: the
// loopback interface up and, with proxyPort, a listener on
// 127.0.0.1:proxyPort handed to otter; then the capability the user
// namespace gave for it dropped (the program must not keep it).
func setUpNamespace(proxyPort int) error {
	defer unix.Close(handOverFD) // the program does not inherit it
	if err := loopbackUp(); err != nil {
		return fmt.Errorf("bringing up the loopback interface of its network namespace: %w", err)
	}
	if proxyPort > 0 {
		if err := handOver(proxyPort); err != nil {
			return err
		}
	}
	// Harmless if none was raised (otter run by root).
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("dropping the capability of its namespace: %w", err)
	}
	return nil
}

func loopbackUp() error {
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(s)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(s, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(s, unix.SIOCSIFFLAGS, ifr)
}

// handOver listens on 127.0.0.1:port and sends the socket to otter over
// handOverFD.
func handOver(port int) error {
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
	if err != nil {
		return fmt.Errorf("listening for the proxy in its network namespace: %w", err)
	}
	defer ln.Close()
	f, err := ln.File()
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Sendmsg(handOverFD, []byte{'L'}, unix.UnixRights(int(f.Fd())), nil, 0); err != nil {
		return fmt.Errorf("handing the proxy's port over to otter: %w", err)
	}
	return nil
}

// probeMain is the launcher of CanIsolate's check: the namespace set up,
// nothing run.
func probeMain() error { return setUpNamespace(0) }
