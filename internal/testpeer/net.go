package testpeer

import "net"

// ExternalIPv4 is an address of this machine that is not a loopback one
// (for a test that a confined program cannot reach this machine by it),
// or "" if it has none.
func ExternalIPv4() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ip, ok := a.(*net.IPNet); ok && ip.IP.To4() != nil && !ip.IP.IsLoopback() {
			return ip.IP.String()
		}
	}
	return ""
}
