package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The Seatbelt profile of a policy: deny by default; read the granted
// trees but the denied ones (named as written and as resolved: Seatbelt
// sees real paths); write only the granted trees, the denied ones still
// excluded; the devices; Unix sockets; and the network per the policy —
// none, any, or TCP to the proxy's port on localhost only. Quotes and
// backslashes in a path cannot end its string.
func TestSeatbeltProfile(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	real := filepath.Join(root, "real-proj")
	link := filepath.Join(root, "proj")
	for _, d := range []string{filepath.Join(home, ".ssh"), real} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	odd := filepath.Join(root, `we"ird\dir`)
	p := Policy{
		Read:  []string{"/"},
		Write: []string{link, odd},
		Deny:  []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".aws")},
	}
	notDenied := `(require-not (subpath "` + filepath.Join(home, ".aws") + `")) (require-not (subpath "` + filepath.Join(home, ".ssh") + `"))`
	for _, tc := range []struct {
		name    string
		network bool
		port    int
		want    []string
		not     []string
	}{
		{"no network", false, 0, []string{"; none\n"}, []string{"(allow network*)", "remote tcp", "system-socket"}},
		{"any host", true, 0, []string{"(allow network*)\n", "(allow system-socket)", `"com.apple.dnssd.service"`}, []string{"remote tcp"}},
		{"the proxy only", false, 43117, []string{`(allow network-outbound (remote tcp "localhost:43117"))`, "(allow system-socket)"}, []string{"(allow network*)", "dnssd"}},
	} {
		p.Network, p.ProxyPort = tc.network, tc.port
		got := seatbeltProfile(p)
		want := append([]string{
			"(version 1)\n(deny default)\n",
			`(allow file-read* (require-all (subpath "/") ` + notDenied + "))\n",
			`(allow file-read* file-write* (require-all (subpath "` + link + `") ` + notDenied + "))\n",
			`(allow file-read* file-write* (require-all (subpath "` + real + `") ` + notDenied + "))\n",
			`(subpath "` + strings.ReplaceAll(strings.ReplaceAll(odd, `\`, `\\`), `"`, `\"`) + `")`,
			`(literal "/dev/null")`,
			"(allow network-outbound (remote unix-socket))\n",
		}, tc.want...)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: the profile lacks %q:\n%s", tc.name, w, got)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(got, n) {
				t.Errorf("%s: the profile has %q:\n%s", tc.name, n, got)
			}
		}
		if strings.Contains(got, "(allow file-write* (subpath \"/\")") || strings.Count(got, "(") != strings.Count(got, ")") {
			t.Errorf("%s: the profile writes / or is unbalanced:\n%s", tc.name, got)
		}
	}
}
