package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// A program confined with no network, or with the hosts of a list only,
// must not send a datagram either: Landlock confines TCP (ABI 4) but UDP
// only from ABI 10, and no ABI confines raw, netlink or SCTP sockets, nor
// Multipath TCP, whose sockets Landlock's TCP rules do not see. So the
// launcher adds a seccomp filter, after Landlock and before the exec,
// under which socket(2) and socketpair(2) fail with EACCES for every
// domain but AF_UNIX — and, when the program may reach otter's proxy,
// but AF_INET and AF_INET6 stream sockets of protocol 0 or TCP, whose
// connections Landlock's port rule holds to the proxy's port.
// io_uring_setup(2) fails with ENOSYS (io_uring opens sockets without
// socket(2); programs fall back to plain system calls).
//
// The filter is written here with golang.org/x/net/bpf rather than with
// github.com/elastic/go-seccomp-bpf, for two reasons (docs/benchmarks.md):
// that library builds the system call tables of every architecture into
// maps when otter starts — 0.8–1.0 ms and 164 KB at every start of otter,
// for a filter only the launcher loads — and it lets through every system
// call made through another architecture's entry (a 64-bit program's
// int 0x80, a 32-bit program on a 64-bit kernel), where socketcall(2) and
// the 32-bit socket(2) would open a UDP socket unseen. This filter checks
// the 32-bit entry of the machine too, and refuses any other.

// scArch is one system call entry's numbers (-1: the entry has none).
type scArch struct {
	audit                                      uint32
	socket, socketpair, socketcall, ioUringSet int32
	x32                                        bool // the x86-64 entry, whose x32 calls (bit 30) are refused
}

// scArches are the entries a program may use on a kernel of goarch: the
// native one first, then the 32-bit one; nil for an architecture otter
// has no numbers for. (A function, not a map: nothing built at start-up.)
func scArches(goarch string) []scArch {
	switch goarch {
	case "amd64":
		return []scArch{
			{audit: unix.AUDIT_ARCH_X86_64, socket: 41, socketpair: 53, socketcall: -1, ioUringSet: 425, x32: true},
			{audit: unix.AUDIT_ARCH_I386, socket: 359, socketpair: 360, socketcall: 102, ioUringSet: 425},
		}
	case "arm64":
		return []scArch{
			{audit: unix.AUDIT_ARCH_AARCH64, socket: 198, socketpair: 199, socketcall: -1, ioUringSet: 425},
			{audit: unix.AUDIT_ARCH_ARM, socket: 281, socketpair: 288, socketcall: -1, ioUringSet: 425},
		}
	}
	return nil
}

// The offsets in struct seccomp_data of the system call's number, its
// architecture and the low 32 bits of its arguments (little-endian: the
// architectures above). socket(2) takes ints, so the kernel reads only
// those low halves too.
const (
	offNr   = 0
	offArch = 4
)

func offArg(i uint32) uint32 { return 16 + 8*i }

const (
	retAllow  = unix.SECCOMP_RET_ALLOW
	retEACCES = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	retENOSYS = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
)

// asm assembles a BPF program with named jump targets.
type asm struct {
	ins    []bpf.Instruction
	labels map[string]int
	jumps  []pendingJump
}

type pendingJump struct {
	at      int
	cond    bpf.JumpTest
	val     uint32
	yes, no string // "" falls through
	always  string // a jump without a test
}

func (a *asm) label(name string) { a.labels[name] = len(a.ins) }

func (a *asm) load(off uint32) {
	a.ins = append(a.ins, bpf.LoadAbsolute{Off: off, Size: 4})
}

func (a *asm) ret(v uint32) { a.ins = append(a.ins, bpf.RetConstant{Val: v}) }

// jump jumps to yes when A cond val holds, else to no.
func (a *asm) jump(cond bpf.JumpTest, val uint32, yes, no string) {
	a.jumps = append(a.jumps, pendingJump{at: len(a.ins), cond: cond, val: val, yes: yes, no: no})
	a.ins = append(a.ins, nil)
}

func (a *asm) goTo(label string) {
	a.jumps = append(a.jumps, pendingJump{at: len(a.ins), always: label})
	a.ins = append(a.ins, nil)
}

func (a *asm) assemble() ([]bpf.Instruction, error) {
	skip := func(from int, label string) (int, error) {
		if label == "" {
			return 0, nil
		}
		to, ok := a.labels[label]
		if !ok || to <= from {
			return 0, fmt.Errorf("seccomp filter: no label %q after instruction %d", label, from)
		}
		return to - from - 1, nil
	}
	for _, j := range a.jumps {
		if j.always != "" {
			n, err := skip(j.at, j.always)
			if err != nil {
				return nil, err
			}
			a.ins[j.at] = bpf.Jump{Skip: uint32(n)}
			continue
		}
		yes, err := skip(j.at, j.yes)
		if err != nil {
			return nil, err
		}
		no, err := skip(j.at, j.no)
		if err != nil {
			return nil, err
		}
		if yes > 255 || no > 255 {
			return nil, fmt.Errorf("seccomp filter: a jump of more than 255 instructions")
		}
		a.ins[j.at] = bpf.JumpIf{Cond: j.cond, Val: j.val, SkipTrue: uint8(yes), SkipFalse: uint8(no)}
	}
	return a.ins, nil
}

// socketFilter is the filter for a program on a kernel of goarch: it may
// open AF_UNIX sockets and, with tcp, TCP sockets; nothing else.
func socketFilter(goarch string, tcp bool) ([]bpf.Instruction, error) {
	arches := scArches(goarch)
	if arches == nil {
		return nil, fmt.Errorf("otter knows the system call numbers of amd64 and arm64 only, not of %s", goarch)
	}
	a := &asm{labels: map[string]int{}}
	a.load(offArch)
	for i, ar := range arches {
		a.jump(bpf.JumpEqual, ar.audit, fmt.Sprint("arch", i), "")
	}
	a.ret(retENOSYS) // an entry this kernel has no business with
	for i, ar := range arches {
		a.label(fmt.Sprint("arch", i))
		a.load(offNr)
		if ar.x32 {
			a.jump(bpf.JumpGreaterOrEqual, 0x40000000, "nosys", "")
		}
		a.jump(bpf.JumpEqual, uint32(ar.socket), "family", "")
		a.jump(bpf.JumpEqual, uint32(ar.socketpair), "family", "")
		a.jump(bpf.JumpEqual, uint32(ar.ioUringSet), "nosys", "")
		if ar.socketcall >= 0 {
			// socketcall(SYS_SOCKET or SYS_SOCKETPAIR, args): the domain
			// is in memory, out of the filter's sight — refused.
			a.jump(bpf.JumpEqual, uint32(ar.socketcall), fmt.Sprint("socketcall", i), "allow")
			a.label(fmt.Sprint("socketcall", i))
			a.load(offArg(0))
			a.jump(bpf.JumpEqual, 1, "deny", "")
			a.jump(bpf.JumpEqual, 8, "deny", "allow")
			continue
		}
		a.goTo("allow")
	}
	a.label("family")
	a.load(offArg(0))
	if tcp {
		a.jump(bpf.JumpEqual, unix.AF_UNIX, "allow", "")
		a.jump(bpf.JumpEqual, unix.AF_INET, "stream", "")
		a.jump(bpf.JumpEqual, unix.AF_INET6, "stream", "deny")
		a.label("stream")
		a.load(offArg(1))
		a.ins = append(a.ins, bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: 0xf}) // the type without SOCK_NONBLOCK, SOCK_CLOEXEC
		a.jump(bpf.JumpEqual, unix.SOCK_STREAM, "", "deny")
		a.load(offArg(2))
		a.jump(bpf.JumpEqual, 0, "allow", "")
		a.jump(bpf.JumpEqual, unix.IPPROTO_TCP, "allow", "deny")
	} else {
		a.jump(bpf.JumpEqual, unix.AF_UNIX, "allow", "deny")
	}
	a.label("deny")
	a.ret(retEACCES)
	a.label("nosys")
	a.ret(retENOSYS)
	a.label("allow")
	a.ret(retAllow)
	return a.assemble()
}

// refuseSockets loads socketFilter on every thread of the process
// (SECCOMP_FILTER_FLAG_TSYNC), whose exec the program then inherits.
func refuseSockets(tcp bool) error {
	prog, err := socketFilter(runtime.GOARCH, tcp)
	if err != nil {
		return err
	}
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return fmt.Errorf("seccomp filter: %w", err)
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	// Landlock has set no_new_privs already; seccomp needs it (or
	// CAP_SYS_ADMIN), so it is set here again rather than assumed.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(filter)
	switch {
	case errno != 0:
		return fmt.Errorf("loading the seccomp filter: %w", errno)
	case r != 0:
		return fmt.Errorf("loading the seccomp filter: thread %d could not take it", r)
	}
	return nil
}
