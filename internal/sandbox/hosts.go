package sandbox

import (
	"fmt"
	"net/netip"
	"strings"
)

// A host list (a server's sandbox.network = ["api.github.com",
// "*.example.org"]) names the hosts a confined program may reach through
// otter's filtering proxy. An entry is a host name ("api.github.com",
// matched exactly), a wildcard ("*.example.org": any name below
// example.org, not example.org itself) or an IP address ("10.0.0.7",
// "fd00::1": that address written as an address; a name that resolves to
// it is not the address). Names compare case-insensitively, a final dot
// ignored.

// CheckHost reports what is wrong with one entry of a host list, in words
// that say what to write instead; nil if it is a host name, a wildcard or
// an IP address.
func CheckHost(entry string) error {
	e := strings.TrimSpace(entry)
	switch {
	case e == "":
		return fmt.Errorf("an empty host name")
	case strings.Contains(e, "://"):
		return fmt.Errorf("%q is a URL: write only its host name, such as %q", entry, urlHost(e))
	case strings.ContainsAny(e, "/?#@"):
		return fmt.Errorf("%q is not a host name: write a name such as \"api.github.com\", without a path", entry)
	}
	if _, err := netip.ParseAddr(e); err == nil {
		return nil
	}
	if a, err := netip.ParseAddrPort(e); err == nil {
		return fmt.Errorf("%q names a port: write the address alone, %q (every port of an allowed host is allowed)", entry, a.Addr().String())
	}
	if strings.HasPrefix(e, "[") {
		return fmt.Errorf("%q: write an IPv6 address without brackets", entry)
	}
	name := e
	if rest, ok := strings.CutPrefix(e, "*."); ok {
		name = rest
		if !strings.Contains(strings.TrimSuffix(name, "."), ".") {
			return fmt.Errorf("%q would allow every name under a top-level domain: name the domain, such as \"*.example.org\"", entry)
		}
	}
	if h, p, ok := strings.Cut(name, ":"); ok {
		return fmt.Errorf("%q names a port (%s): write the host alone, %q (every port of an allowed host is allowed)", entry, p, strings.TrimSuffix(e, name)+h)
	}
	if strings.Contains(name, "*") {
		return fmt.Errorf("%q: a wildcard may only open the name, as in \"*.example.org\"", entry)
	}
	if err := checkName(name); err != nil {
		return fmt.Errorf("%q is not a host name: %w", entry, err)
	}
	labels := strings.Split(strings.TrimSuffix(name, "."), ".")
	if top := strings.ToLower(labels[len(labels)-1]); strings.Trim(top, "0123456789") == "" || strings.HasPrefix(top, "0x") {
		// 2130706433, 127.1, 0x7f.1: an address in a form resolvers
		// differ on, never a name.
		return fmt.Errorf("%q is an IP address in an unusual form: write it as 127.0.0.1 or ::1 are written", entry)
	}
	return nil
}

// urlHost is the host of a URL a person wrote where a host name goes.
func urlHost(u string) string {
	_, rest, _ := strings.Cut(u, "://")
	rest, _, _ = strings.Cut(rest, "/")
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	if h, _, ok := strings.Cut(rest, ":"); ok && !strings.HasPrefix(rest, "[") {
		rest = h
	}
	return rest
}

// checkName checks a DNS name: labels of letters, digits, hyphens (and
// underscores, which some service names use), none empty, none starting
// or ending with a hyphen; ASCII only (an internationalised name is
// written in its xn-- form).
func checkName(name string) error {
	n := strings.TrimSuffix(name, ".")
	if n == "" || len(n) > 253 {
		return fmt.Errorf("a name has 1 to 253 characters")
	}
	for label := range strings.SplitSeq(n, ".") {
		if label == "" || len(label) > 63 {
			return fmt.Errorf("each part between dots has 1 to 63 characters")
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("a part may not start or end with a hyphen")
		}
		for _, r := range label {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			case r > 0x7f:
				return fmt.Errorf("write an internationalised name in its ASCII form (xn--…)")
			default:
				return fmt.Errorf("%q is not allowed in a host name", r)
			}
		}
	}
	return nil
}

// AllowsHost reports whether host (as a client asked for it: a name or an
// IP address, without the port or brackets) is on the host list.
func AllowsHost(list []string, host string) bool {
	h := normHost(host)
	if h == "" {
		return false
	}
	addr, aerr := netip.ParseAddr(h)
	isAddr := aerr == nil
	for _, entry := range list {
		e := normHost(entry)
		if isAddr {
			// An address matches only itself, written as an address
			// (::ffff:10.0.0.7 is 10.0.0.7).
			if a, err := netip.ParseAddr(e); err == nil && a.Unmap() == addr.Unmap() {
				return true
			}
			continue
		}
		if suffix, ok := strings.CutPrefix(e, "*."); ok {
			if strings.HasSuffix(h, "."+suffix) {
				return true
			}
			continue
		}
		if h == e {
			return true
		}
	}
	return false
}

// normHost lowercases a name, drops a final dot and an IPv6 address's
// brackets and zone.
func normHost(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if a, err := netip.ParseAddr(h); err == nil {
		return a.WithZone("").String()
	}
	return strings.TrimSuffix(h, ".")
}
