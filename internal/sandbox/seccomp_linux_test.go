package sandbox

import (
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// call is one system call as the filter sees it.
type call struct {
	arch uint32
	nr   uint32
	args [3]uint64
}

// run runs the filter over c in x/net/bpf's machine, which reads words
// big-endian: each 32-bit word of struct seccomp_data is laid out so that
// it reads as the kernel (little-endian) reads it.
func run(t *testing.T, prog []bpf.Instruction, c call) uint32 {
	t.Helper()
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 64)
	binary.BigEndian.PutUint32(data[offNr:], c.nr)
	binary.BigEndian.PutUint32(data[offArch:], c.arch)
	for i, a := range c.args {
		binary.BigEndian.PutUint32(data[offArg(uint32(i)):], uint32(a))
		binary.BigEndian.PutUint32(data[offArg(uint32(i))+4:], uint32(a>>32))
	}
	out, err := vm.Run(data)
	if err != nil {
		t.Fatal(err)
	}
	return uint32(out)
}

// The filter, on each entry of amd64 and arm64 kernels: Unix sockets
// open; UDP, raw, netlink, packet and Multipath TCP sockets do not; TCP
// only when the program may reach the proxy; io_uring falls back; the
// other system calls pass; a 32-bit program's socketcall cannot open a
// socket; an x32 call and an unknown entry are refused.
func TestSocketFilter(t *testing.T) {
	const (
		stream  = unix.SOCK_STREAM | unix.SOCK_CLOEXEC | unix.SOCK_NONBLOCK
		dgram   = unix.SOCK_DGRAM | unix.SOCK_CLOEXEC
		mptcp   = 262
		sctp    = unix.IPPROTO_SCTP
		openat  = 257
		connect = 42
	)
	for _, goarch := range []string{"amd64", "arm64"} {
		for _, tcp := range []bool{false, true} {
			prog, err := socketFilter(goarch, tcp)
			if err != nil {
				t.Fatal(err)
			}
			for _, ar := range scArches(goarch) {
				for _, tc := range []struct {
					what string
					c    call
					want uint32
				}{
					{"unix stream", call{ar.audit, uint32(ar.socket), [3]uint64{unix.AF_UNIX, stream, 0}}, retAllow},
					{"unix socketpair", call{ar.audit, uint32(ar.socketpair), [3]uint64{unix.AF_UNIX, dgram, 0}}, retAllow},
					{"udp", call{ar.audit, uint32(ar.socket), [3]uint64{unix.AF_INET, dgram, 0}}, retEACCES},
					{"udp6", call{ar.audit, uint32(ar.socket), [3]uint64{unix.AF_INET6, unix.SOCK_DGRAM, unix.IPPROTO_UDP}}, retEACCES},
					{"raw", call{ar.audit, uint32(ar.socket), [3]uint64{unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP}}, retEACCES},
					{"packet", call{ar.audit, uint32(ar.socket), [3]uint64{unix.AF_PACKET, unix.SOCK_RAW, 0}}, retEACCES},
					{"netlink", call{ar.audit, uint32(ar.socket), [3]uint64{unix.AF_NETLINK, unix.SOCK_RAW, 0}}, retEACCES},
					{"inet socketpair", call{ar.audit, uint32(ar.socketpair), [3]uint64{unix.AF_INET, dgram, 0}}, retEACCES},
					{"mptcp", call{ar.audit, uint32(ar.socket), [3]uint64{unix.AF_INET, stream, mptcp}}, retEACCES},
					{"sctp stream", call{ar.audit, uint32(ar.socket), [3]uint64{unix.AF_INET6, unix.SOCK_STREAM, sctp}}, retEACCES},
					// The kernel reads an int: high bits do not make AF_UNIX of AF_INET.
					{"udp, high bits set", call{ar.audit, uint32(ar.socket), [3]uint64{1<<32 | unix.AF_INET, dgram, 0}}, retEACCES},
					{"tcp", call{ar.audit, uint32(ar.socket), [3]uint64{unix.AF_INET, stream, 0}}, map[bool]uint32{true: retAllow, false: retEACCES}[tcp]},
					{"tcp6", call{ar.audit, uint32(ar.socket), [3]uint64{unix.AF_INET6, unix.SOCK_STREAM, unix.IPPROTO_TCP}}, map[bool]uint32{true: retAllow, false: retEACCES}[tcp]},
					{"io_uring_setup", call{ar.audit, uint32(ar.ioUringSet), [3]uint64{8, 0, 0}}, retENOSYS},
					{"openat", call{ar.audit, openat, [3]uint64{unix.AF_INET}}, retAllow},
				} {
					if got := run(t, prog, tc.c); got != tc.want {
						t.Errorf("%s, entry %#x, tcp %v: %s: %#x, want %#x", goarch, ar.audit, tcp, tc.what, got, tc.want)
					}
				}
				if ar.socketcall >= 0 {
					for op, want := range map[uint64]uint32{1: retEACCES, 8: retEACCES, 3: retAllow} { // SYS_SOCKET, SYS_SOCKETPAIR, SYS_CONNECT
						if got := run(t, prog, call{ar.audit, uint32(ar.socketcall), [3]uint64{op}}); got != want {
							t.Errorf("%s, entry %#x: socketcall(%d): %#x, want %#x", goarch, ar.audit, op, got, want)
						}
					}
				}
			}
			if goarch == "amd64" {
				if got := run(t, prog, call{unix.AUDIT_ARCH_X86_64, 0x40000000 | 41, [3]uint64{unix.AF_INET, dgram}}); got != retENOSYS {
					t.Errorf("x32 socket: %#x, want ENOSYS", got)
				}
			}
			if got := run(t, prog, call{unix.AUDIT_ARCH_S390X, connect, [3]uint64{}}); got != retENOSYS {
				t.Errorf("%s: a call through an unknown entry: %#x, want ENOSYS", goarch, got)
			}
		}
	}
	if _, err := socketFilter("riscv64", false); err == nil || !strings.Contains(err.Error(), "amd64 and arm64 only") {
		t.Errorf("an architecture without numbers: %v", err)
	}
}

// The numbers of this machine's own entry are its kernel's.
func TestSocketFilterNumbers(t *testing.T) {
	ars := scArches(runtime.GOARCH)
	if ars == nil {
		t.Skipf("no system call numbers for %s", runtime.GOARCH)
	}
	native := ars[0]
	if native.socket != unix.SYS_SOCKET || native.socketpair != unix.SYS_SOCKETPAIR || native.ioUringSet != unix.SYS_IO_URING_SETUP {
		t.Errorf("%s: socket %d, socketpair %d, io_uring_setup %d; the kernel's are %d, %d, %d", runtime.GOARCH,
			native.socket, native.socketpair, native.ioUringSet, unix.SYS_SOCKET, unix.SYS_SOCKETPAIR, unix.SYS_IO_URING_SETUP)
	}
}

// envFilterProbe makes the test binary load the filter and try each kind
// of socket, printing "kind: ok" or "kind: errno".
const envFilterProbe = "OTTER_SANDBOX_FILTER_PROBE"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == LauncherArg {
		os.Exit(Main(os.Args[2:])) // this binary as otter's launcher
	}
	if os.Getenv(envIsolationProbe) != "" {
		os.Exit(isolationProbe())
	}
	if mode := os.Getenv(envFilterProbe); mode != "" {
		os.Exit(filterProbe(mode == "tcp"))
	}
	os.Exit(m.Run())
}

func filterProbe(tcp bool) int {
	if err := refuseSockets(tcp); err != nil {
		os.Stdout.WriteString("load: " + err.Error() + "\n")
		return 1
	}
	try := func(what string, domain, typ, proto int) {
		fd, err := unix.Socket(domain, typ, proto)
		if err == nil {
			unix.Close(fd)
			os.Stdout.WriteString(what + ": ok\n")
			return
		}
		os.Stdout.WriteString(what + ": " + err.Error() + "\n")
	}
	try("unix", unix.AF_UNIX, unix.SOCK_STREAM, 0)
	try("udp", unix.AF_INET, unix.SOCK_DGRAM, 0)
	try("udp6", unix.AF_INET6, unix.SOCK_DGRAM, 0)
	try("tcp", unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	try("mptcp", unix.AF_INET, unix.SOCK_STREAM, 262)
	try("netlink", unix.AF_NETLINK, unix.SOCK_RAW, 0)
	_, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 8, 0, 0)
	os.Stdout.WriteString("io_uring: " + errno.Error() + "\n")
	// A child inherits the filter (the launcher execs the server).
	out, err := exec.Command("/bin/bash", "-c", "exec 3<>/dev/udp/127.0.0.1/9 && echo child-udp: ok || echo child-udp: refused").CombinedOutput()
	if err != nil && !errors.As(err, new(*exec.ExitError)) {
		os.Stdout.WriteString("child: " + err.Error() + "\n")
	}
	os.Stdout.Write(out)
	return 0
}

// The filter loaded for real (this machine's kernel, every thread of a
// Go process): the sockets it refuses fail with EACCES, io_uring with
// ENOSYS, in the process and in what it starts.
func TestSocketFilterInTheKernel(t *testing.T) {
	if scArches(runtime.GOARCH) == nil {
		t.Skipf("no system call numbers for %s", runtime.GOARCH)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tcp := range []bool{false, true} {
		mode := "none"
		if tcp {
			mode = "tcp"
		}
		cmd := exec.Command(self, "-test.run=^$")
		cmd.Env = append(os.Environ(), envFilterProbe+"="+mode)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", mode, err, out)
		}
		denied := "permission denied"
		want := map[string]string{"unix": "ok", "udp": denied, "udp6": denied, "mptcp": denied, "netlink": denied,
			"tcp": map[bool]string{true: "ok", false: denied}[tcp], "io_uring": "function not implemented"}
		lines := strings.Split(string(out), "\n")
		for what, w := range want {
			if !slices.Contains(lines, what+": "+w) {
				t.Errorf("%s: %s is not %q:\n%s", mode, what, w, out)
			}
		}
		if !strings.Contains(string(out), "child-udp: refused") {
			t.Errorf("%s: a child (bash's /dev/udp) was not refused a UDP socket:\n%s", mode, out)
		}
	}
}
