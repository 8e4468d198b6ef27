package sandbox

import (
	"fmt"
	"slices"
	"strings"
)

// On macOS the same policy is a Seatbelt profile (the SBPL that
// sandbox-exec -p takes, as Codex and Claude Code confine their commands):
// deny by default; read everything but the denied trees; write only the
// granted trees; the network per the policy — none, any, or only TCP to
// otter's proxy on localhost. Unlike Landlock, SBPL can deny inside an
// allowed tree, so the profile names the denied paths instead of walking
// around them. Seatbelt checks real paths (/tmp is /private/tmp), so every
// path is named as written and, where it differs, resolved.
//
// This file has no build constraint, so that the profile's text is tested
// on every system; sandbox_darwin.go launches it.

// seatbeltProfile is p as a Seatbelt profile.
func seatbeltProfile(p Policy) string {
	var b strings.Builder
	b.WriteString(`(version 1)
(deny default)

; Processes: start programs, signal and inspect those of the same sandbox.
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))

; What any program needs of the system: its settings, shared memory,
; the services that answer user and host lookups, logging and the clock.
(allow sysctl-read)
(allow ipc-posix-shm)
(allow ipc-posix-sem)
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.notification_center")
  (global-name "com.apple.system.logger")
  (global-name "com.apple.logd")
  (global-name "com.apple.trustd.agent")
  (global-name "com.apple.SecurityServer")
  (global-name "com.apple.coreservices.launchservicesd")
  (global-name "com.apple.cfprefsd.daemon")
  (global-name "com.apple.cfprefsd.agent"))
(allow file-read-metadata)
`)
	deny := seatbeltPaths(p.Deny)
	notDenied := ""
	if len(deny) > 0 {
		var nots []string
		for _, d := range deny {
			nots = append(nots, "(require-not (subpath "+sbString(d)+"))")
		}
		notDenied = " " + strings.Join(nots, " ")
	}
	b.WriteString("\n; Read: the granted trees but the user's secrets and otter's own folders.\n")
	for _, r := range seatbeltPaths(p.Read) {
		fmt.Fprintf(&b, "(allow file-read* (require-all (subpath %s)%s))\n", sbString(r), notDenied)
	}
	b.WriteString("\n; Write: the project, the temporary directory, the package runner's caches.\n")
	for _, w := range seatbeltPaths(p.Write) {
		fmt.Fprintf(&b, "(allow file-read* file-write* (require-all (subpath %s)%s))\n", sbString(w), notDenied)
	}
	b.WriteString("\n; Devices any program reads and writes.\n(allow file-read* file-write-data file-ioctl\n")
	for _, d := range devices {
		fmt.Fprintf(&b, "  (literal %s)\n", sbString(d))
	}
	b.WriteString(")\n\n; Network: Unix sockets (a local daemon's, as on Linux), then per the policy.\n")
	b.WriteString("(allow network-outbound (remote unix-socket))\n")
	switch {
	case p.Network:
		b.WriteString("; any host\n(allow network*)\n(allow system-socket)\n")
		b.WriteString("(allow mach-lookup (global-name \"com.apple.dnssd.service\") (global-name \"com.apple.SystemConfiguration.configd\"))\n")
	case p.ProxyPort > 0:
		// Unlike Landlock's rule, this one names the address too: only
		// this machine's loopback, on the proxy's port.
		fmt.Fprintf(&b, "; only otter's proxy\n(allow network-outbound (remote tcp \"localhost:%d\"))\n(allow system-socket)\n", p.ProxyPort)
	default:
		b.WriteString("; none\n")
	}
	return b.String()
}

// seatbeltPaths are paths as written (made absolute) and, where they
// differ, as resolved, sorted, without duplicates; "" and relative paths
// that cannot be made absolute are left out.
func seatbeltPaths(paths []string) []string {
	out := absolute(paths)
	out = append(out, resolve(out)...)
	slices.Sort(out)
	return slices.Compact(out)
}

// sbString quotes s as an SBPL string.
func sbString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}
