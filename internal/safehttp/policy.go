// Package safehttp provides an HTTP client that will not be talked into
// fetching addresses on the machine it runs on or on its private networks
// (server-side request forgery, SSRF).
//
// otter's web tools fetch URLs that a language model, or a remote MCP
// client, chose. Such URLs must not reach localhost services, the home or
// office network, or a cloud metadata endpoint such as 169.254.169.254.
//
// # Why a URL blacklist is not enough
//
// The tool protocol otter was built from (seed 000, §4.2) guards URLs with
// regular expressions such as `127\.0\.0\.1` and `192\.168\.`. A pattern on
// the URL text cannot work:
//
//   - One address has many spellings. 127.0.0.1 is also http://2130706433/
//     (decimal), http://0x7f000001/ (hex), http://0177.0.0.1/ (octal),
//     http://127.1/ (short form), http://[::ffff:127.0.0.1]/ (IPv4-mapped
//     IPv6) and http://[::1]/; resolvers and browsers accept all of them.
//   - A host name is not an address. Any public name can resolve to
//     127.0.0.1, and a name can resolve to a public address when it is
//     checked and to a private one when it is fetched (DNS rebinding).
//   - A public page can redirect to a private one, so the first URL says
//     nothing about the last.
//
// So safehttp decides on the address that is actually dialled: a
// net.Dialer Control function sees every connection the client opens, after
// name resolution, on the first request and on every redirect hop, and
// refuses loopback, private, link-local, unique-local, multicast,
// unspecified, CGNAT, NAT64, broadcast and reserved addresses, and the IPv6
// forms that embed an IPv4 address (IPv4-mapped addresses are unmapped
// first; IPv4-compatible, IPv4-translated, 6to4 and Teredo ones are refused
// whole). Exceptions come only from an explicit
// list of CIDR prefixes ([tools] allow_private_networks). Up front, URLs are
// checked for syntax: only http and https, no user:password@ part, and no
// numeric host that is not a plain dotted-decimal IPv4 address.
//
// Response bodies are capped, and redirects are limited and checked hop by
// hop. ForwardProxy applies the same rules to a headless browser, whose own
// network stack would otherwise bypass them.
package safehttp

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// ErrInvalidURL is matched (errors.Is) by every *URLError.
var ErrInvalidURL = errors.New("invalid URL")

// ErrBlocked is matched (errors.Is) by every *BlockedError.
var ErrBlocked = errors.New("address not allowed")

// ErrBodyTooLarge is matched (errors.Is) by every *BodyTooLargeError.
var ErrBodyTooLarge = errors.New("response body too large")

// ErrTooManyRedirects is returned (wrapped) when a request is redirected
// more often than the client allows.
var ErrTooManyRedirects = errors.New("too many redirects")

// URLError reports a URL that is refused before anything is fetched.
type URLError struct {
	URL    string
	Reason string
}

func (e *URLError) Error() string { return fmt.Sprintf("refused URL %q: %s", e.URL, e.Reason) }

// Is makes errors.Is(err, ErrInvalidURL) true.
func (e *URLError) Is(target error) bool { return target == ErrInvalidURL }

// BlockedError reports an address the policy does not allow.
type BlockedError struct {
	Host string     // the host name as written, if known
	Addr netip.Addr // the address that was refused
	// Range names the kind of address, e.g. "loopback" or "private (RFC 1918)".
	Range string
	// Proxy is set when the refused address is that of a proxy.
	Proxy bool
}

// Error says what was refused and how to allow it, with a line to paste:
//
//	refused to connect to 127.0.0.1: loopback address. To allow it, add
//	allow_private_networks = ["127.0.0.1/32"] under [tools] in your user
//	config (…); an untrusted project's config is ignored.
func (e *BlockedError) Error() string {
	who := e.Addr.String()
	if e.Host != "" && e.Host != who {
		who = fmt.Sprintf("%s (%s)", e.Host, e.Addr)
	}
	if e.Proxy {
		who = "proxy " + who
	}
	return fmt.Sprintf("refused to connect to %s: %s address. To allow it, add allow_private_networks = [%q] under [tools] "+
		"in your user config (~/.config/otter/config.toml, or $XDG_CONFIG_HOME/otter/config.toml); an untrusted project's config is ignored",
		who, e.Range, e.AllowCIDR())
}

// AllowCIDR is the single-address prefix that allow_private_networks needs
// to let e.Addr through: "127.0.0.1/32", "fd00::1/128".
func (e *BlockedError) AllowCIDR() string {
	if !e.Addr.IsValid() {
		return "10.0.0.0/8"
	}
	a := e.Addr.Unmap().WithZone("")
	return netip.PrefixFrom(a, a.BitLen()).String()
}

// Is makes errors.Is(err, ErrBlocked) true.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

// BodyTooLargeError reports a response body over the size limit.
type BodyTooLargeError struct {
	Limit int64
}

func (e *BodyTooLargeError) Error() string {
	return fmt.Sprintf("response body exceeds the limit of %d bytes ([tools] max_body_bytes)", e.Limit)
}

// Is makes errors.Is(err, ErrBodyTooLarge) true.
func (e *BodyTooLargeError) Is(target error) bool { return target == ErrBodyTooLarge }

// blockedRange is one refused range of addresses.
type blockedRange struct {
	prefix netip.Prefix
	name   string
}

// special lists the refused ranges that netip.Addr's predicates do not
// cover (those are checked first, in Policy.CheckAddr).
var special = func() []blockedRange {
	list := []struct{ cidr, name string }{
		{"0.0.0.0/8", `"this network" (0.0.0.0/8)`},
		{"100.64.0.0/10", "carrier-grade NAT (100.64.0.0/10)"},
		{"192.0.0.0/24", "IETF protocol assignment (192.0.0.0/24)"},
		{"192.0.2.0/24", "documentation (TEST-NET-1)"},
		{"198.18.0.0/15", "benchmarking (198.18.0.0/15)"},
		{"198.51.100.0/24", "documentation (TEST-NET-2)"},
		{"203.0.113.0/24", "documentation (TEST-NET-3)"},
		{"240.0.0.0/4", "reserved (240.0.0.0/4)"},
		{"255.255.255.255/32", "broadcast"},
		{"::/96", "IPv4-compatible IPv6 (::/96)"},
		// Forms that embed an IPv4 address, which a relay or translator
		// may forward to (127.0.0.1 is 2002:7f00:1::, ::ffff:0:7f00:1, …).
		{"::ffff:0:0:0/96", "IPv4-translated IPv6 (::ffff:0:0:0/96, RFC 2765)"},
		{"2002::/16", "6to4 (2002::/16, an embedded IPv4 address)"},
		{"2001::/32", "Teredo (2001::/32, an embedded IPv4 address)"},
		{"64:ff9b::/96", "NAT64 (64:ff9b::/96)"},
		{"64:ff9b:1::/48", "local NAT64 (64:ff9b:1::/48)"},
		{"100::/64", "discard-only (100::/64)"},
		{"2001:db8::/32", "documentation (2001:db8::/32)"},
		{"fec0::/10", "site-local (fec0::/10)"},
	}
	out := make([]blockedRange, len(list))
	for i, r := range list {
		out[i] = blockedRange{netip.MustParsePrefix(r.cidr), r.name}
	}
	return out
}()

// Policy decides which addresses may be dialled. The zero value refuses
// every non-public address; NewPolicy adds exceptions.
type Policy struct {
	allow []netip.Prefix
}

// NewPolicy returns a policy whose only exceptions are the given CIDR
// prefixes ("127.0.0.1/32", "10.0.0.0/8", "fd00::/8"); a bare address is
// taken as a single-address prefix.
func NewPolicy(allowCIDRs []string) (*Policy, error) {
	p := &Policy{}
	for _, s := range allowCIDRs {
		s = strings.TrimSpace(s)
		pfx, err := netip.ParsePrefix(s)
		if err != nil {
			addr, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return nil, fmt.Errorf("[tools] allow_private_networks: %q is not a CIDR prefix such as 10.0.0.0/8 or fd00::/8: %w", s, err)
			}
			pfx = netip.PrefixFrom(addr, addr.BitLen())
		}
		pfx = pfx.Masked()
		if pfx.Addr().Is4In6() {
			// ::ffff:10.0.0.0/104 means 10.0.0.0/8: addresses are unmapped before the check.
			bits := pfx.Bits() - 96
			if bits < 0 {
				bits = 0
			}
			pfx = netip.PrefixFrom(pfx.Addr().Unmap(), bits).Masked()
		}
		p.allow = append(p.allow, pfx)
	}
	return p, nil
}

// Allowed returns the exception prefixes.
func (p *Policy) Allowed() []netip.Prefix { return append([]netip.Prefix(nil), p.allow...) }

// Classify names the refused range addr belongs to, or returns "" for a
// public address. Exceptions are not considered.
func Classify(addr netip.Addr) string {
	addr = addr.Unmap()
	switch {
	case !addr.IsValid():
		return "invalid"
	case addr.IsUnspecified():
		return "unspecified"
	case addr.IsLoopback():
		return "loopback"
	case addr.IsPrivate():
		if addr.Is4() {
			return "private (RFC 1918)"
		}
		return "unique-local (fc00::/7)"
	case addr.IsLinkLocalUnicast():
		if addr.Is4() {
			return "link-local (169.254.0.0/16, cloud metadata)"
		}
		return "link-local (fe80::/10)"
	case addr.IsMulticast(), addr.IsLinkLocalMulticast(), addr.IsInterfaceLocalMulticast():
		return "multicast"
	}
	for _, r := range special {
		if r.prefix.Contains(addr) {
			return r.name
		}
	}
	return ""
}

// CheckAddr returns a *BlockedError if addr may not be dialled.
func (p *Policy) CheckAddr(addr netip.Addr) error {
	addr = addr.Unmap().WithZone("")
	kind := Classify(addr)
	if kind == "" {
		return nil
	}
	for _, pfx := range p.allow {
		if pfx.Contains(addr) {
			return nil
		}
	}
	return &BlockedError{Addr: addr, Range: kind}
}

// control is the net.Dialer Control function: it runs for every
// connection, after name resolution and before connect(2).
func (p *Policy) control(network, address string, _ syscall.RawConn) error {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return fmt.Errorf("safehttp: refused %s connection to %s: only TCP is used", network, address)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("safehttp: cannot parse dial address %q: %w", address, err)
	}
	return p.CheckAddr(ap.Addr())
}

// Dialer returns a net.Dialer that refuses, at connect time, every address
// the policy does not allow.
func (p *Policy) Dialer() *net.Dialer {
	return &net.Dialer{
		Timeout:   30 * time.Second,
		KeepAlive: 30 * time.Second,
		Control:   p.control,
	}
}

// CheckURL parses raw and checks it before anything is fetched: http or
// https only, a host, no user:password@ part, and a host that is either a
// name, a plain dotted-decimal IPv4 address or a bracketed IPv6 address
// (an IP literal must also pass CheckAddr). Every refusal is a *URLError or
// a *BlockedError.
func (p *Policy) CheckURL(raw string) (*url.URL, error) {
	u, err := ParseURL(raw)
	if err != nil {
		return nil, err
	}
	addr, err := netip.ParseAddr(u.Hostname())
	if err != nil && isLocalhostName(u.Hostname()) {
		// RFC 6761: localhost names are loopback, whatever DNS says.
		addr, err = netip.MustParseAddr("127.0.0.1"), nil
	}
	if err == nil {
		if err := p.CheckAddr(addr); err != nil {
			var be *BlockedError
			if errors.As(err, &be) {
				be.Host = u.Hostname()
			}
			return nil, err
		}
	}
	return u, nil
}

// isLocalhostName reports whether host is "localhost" or a name under it.
func isLocalhostName(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// ParseURL parses raw and checks its syntax (see Policy.CheckURL) without
// checking the address.
func ParseURL(raw string) (*url.URL, error) {
	bad := func(reason string) (*url.URL, error) { return nil, &URLError{URL: RedactURL(raw), Reason: reason} }
	if strings.ContainsAny(raw, "\\\x00\r\n\t") {
		return bad("it contains a backslash or a control character")
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return bad(err.Error())
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		if u.Scheme == "" {
			return bad("it has no scheme; write http:// or https://")
		}
		return bad(fmt.Sprintf("scheme %q is not allowed; only http and https are", u.Scheme))
	}
	if u.Opaque != "" {
		return bad("it has no //host part")
	}
	if u.User != nil {
		return bad("it has a user:password@ part, which hides the real host; send credentials in a header instead")
	}
	host := u.Hostname()
	if host == "" {
		return bad("it has no host")
	}
	if strings.HasPrefix(u.Host, "[") {
		if _, err := netip.ParseAddr(host); err != nil {
			return bad("the bracketed host is not an IPv6 address")
		}
		return u, nil
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return u, nil // plain dotted decimal
	}
	if numericIPv4Form(host) {
		reason := "its host is an IPv4 address in a non-standard form (decimal, hex, octal or short)"
		if a, ok := parseInetAton(host); ok {
			reason += fmt.Sprintf(", which means %s", a)
		}
		return bad(reason + "; write the address in dotted decimal (a.b.c.d)")
	}
	return u, nil
}

// numericIPv4Form reports whether host would be read as an IPv4 address by
// inet_aton(3) or the WHATWG URL parser: its last label (ignoring one
// trailing dot) is a decimal, octal or hex number.
func numericIPv4Form(host string) bool {
	host = strings.TrimSuffix(host, ".")
	labels := strings.Split(host, ".")
	return isNumberLabel(labels[len(labels)-1])
}

func isNumberLabel(s string) bool {
	if s == "" {
		return false
	}
	if len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X") {
		for _, c := range s[2:] {
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
		return true
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// parseInetAton reads host the way inet_aton(3) does (1 to 4 parts, each
// decimal, 0-prefixed octal or 0x-prefixed hex; the last part fills the
// remaining bytes). It is used only to say, in an error, what a refused
// host means.
func parseInetAton(host string) (netip.Addr, bool) {
	parts := strings.Split(strings.TrimSuffix(host, "."), ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, s := range parts {
		base, digits := 10, s
		switch {
		case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
			base, digits = 16, s[2:]
			if digits == "" {
				digits = "0"
			}
		case len(s) > 1 && s[0] == '0':
			base, digits = 8, s[1:]
		}
		var v uint64
		for _, c := range strings.ToLower(digits) {
			d := strings.IndexRune("0123456789abcdef", c)
			if d < 0 || d >= base {
				return netip.Addr{}, false
			}
			v = v*uint64(base) + uint64(d)
			if v > 0xffffffff {
				return netip.Addr{}, false
			}
		}
		vals[i] = v
	}
	var out uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 255 {
			return netip.Addr{}, false
		}
		out |= v << (24 - 8*i)
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return netip.Addr{}, false
	}
	out |= last
	return netip.AddrFrom4([4]byte{byte(out >> 24), byte(out >> 16), byte(out >> 8), byte(out)}), true
}
