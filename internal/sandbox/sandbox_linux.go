package sandbox

import (
	"fmt"
	"os"
	"runtime"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// abi is the Landlock version otter's policy is written for: V7, the
// kernel otter is built and tested on (filesystem rights of V5, TCP of V4).
// BestEffort takes what an older kernel offers of it.
var abi = landlock.V7

// Available reports whether programs can be confined here, and if not,
// why (wrapping ErrUnavailable).
func Available() error {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil || v < 1 {
		return fmt.Errorf("%w: this Linux kernel has no Landlock (it came in 5.13, and must be enabled with lsm=landlock)", ErrUnavailable)
	}
	return nil
}

// NetworkByPort reports whether this kernel's Landlock confines TCP by
// port (ABI 4 on, Linux 6.7): without it a server with a host list could
// connect anywhere over TCP, not only to otter's proxy (UDP and raw
// sockets stay refused by the seccomp filter).
func NetworkByPort() error {
	if v, err := llsys.LandlockGetABIVersion(); err != nil || v < 4 {
		return fmt.Errorf("this Linux kernel's Landlock (ABI %d) does not confine TCP connections (ABI 4, Linux 6.7, does)", v)
	}
	return nil
}

// restrictThread enforces a ruleset of c (best effort: what this kernel's
// Landlock knows of it) and rules on the calling thread only, which the
// caller has locked and which execs next: the program inherits that
// thread's domain, and the other threads — the Go runtime's own, running
// nothing of otter's — end at the exec. Config.Restrict would enforce it on
// every thread through libpsx, signalling each and waiting: 7 ms of the
// launcher's 20 on the 2-core machine. This is go-landlock's documented
// way for a ruleset followed by exec (Config.NewRulesetFD, example 1).
func restrictThread(c landlock.Config, rules []landlock.Rule) error {
	fd, flags, err := c.BestEffort().NewRulesetFD(rules...)
	if err != nil || fd < 0 {
		return err // fd < 0, no error: nothing this kernel can restrict
	}
	defer unix.Close(fd)
	return llsys.LandlockRestrictSelf(fd, flags)
}

func confineAndExec(p Policy, path string, argv []string) error {
	if err := Available(); err != nil {
		return err
	}
	// One thread does it all, the exec included; it is never unlocked
	// (restrictThread).
	runtime.LockOSThread()
	if p.Isolated {
		if err := setUpNamespace(p.ProxyPort); err != nil {
			return err
		}
	}
	var rules []landlock.Rule
	for _, g := range grants(p) {
		// IgnoreIfMissing: an entry listed a moment ago may be gone (a
		// busy /tmp); what is not there needs no rule.
		switch {
		case g.dir && g.write:
			rules = append(rules, landlock.RWDirs(g.path).WithRefer().IgnoreIfMissing())
		case g.dir:
			rules = append(rules, landlock.RODirs(g.path).IgnoreIfMissing())
		case g.write:
			rules = append(rules, landlock.RWFiles(g.path).IgnoreIfMissing())
		default:
			rules = append(rules, landlock.ROFiles(g.path).IgnoreIfMissing())
		}
	}
	rules = append(rules,
		landlock.RWFiles(devices...).IgnoreIfMissing(),
		landlock.RWDirs("/dev/shm").IgnoreIfMissing())
	// One ruleset: the file system, and without Network TCP too (no port
	// but the proxy's; Landlock's rules are by port, whatever the address:
	// see Policy.ProxyPort).
	cfg := landlock.Config{HandledAccessFS: abi.HandledAccessFS}
	if !p.Network {
		cfg.HandledAccessNet = abi.HandledAccessNet
		if p.ProxyPort > 0 {
			rules = append(rules, landlock.ConnectTCP(uint16(p.ProxyPort)))
		}
	}
	// no_new_privs, which enforcing a ruleset needs, and which the program
	// inherits (no set-uid gains).
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	if err := restrictThread(cfg, rules); err != nil {
		return fmt.Errorf("confining the file system and network: %w", err)
	}
	if !p.Network {
		if err := refuseSockets(p.ProxyPort > 0); err != nil {
			return fmt.Errorf("confining the network to no UDP nor raw sockets: %w", err)
		}
	}
	if err := syscall.Exec(path, argv, os.Environ()); err != nil {
		return fmt.Errorf("starting %s: %w", path, err)
	}
	return nil
}
