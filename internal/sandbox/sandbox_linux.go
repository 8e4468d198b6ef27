package sandbox

import (
	"fmt"
	"os"
	"runtime"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
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

func confineAndExec(p Policy, path string, argv []string) error {
	if err := Available(); err != nil {
		return err
	}
	// One thread does it all, the exec included (the filters are loaded
	// on every thread too).
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
	if err := abi.BestEffort().RestrictPaths(rules...); err != nil {
		return fmt.Errorf("confining the file system: %w", err)
	}
	if !p.Network {
		var net []landlock.Rule
		if p.ProxyPort > 0 {
			// Landlock's rules are by port, whatever the address: see
			// Policy.ProxyPort.
			net = append(net, landlock.ConnectTCP(uint16(p.ProxyPort)))
		}
		if err := abi.BestEffort().RestrictNet(net...); err != nil {
			return fmt.Errorf("confining the network: %w", err)
		}
		if err := refuseSockets(p.ProxyPort > 0); err != nil {
			return fmt.Errorf("confining the network to no UDP nor raw sockets: %w", err)
		}
	}
	if err := syscall.Exec(path, argv, os.Environ()); err != nil {
		return fmt.Errorf("starting %s: %w", path, err)
	}
	return nil
}
