package sandbox

import (
	"strings"
	"testing"
)

// Each entry a person may write in a host list passes; anything else —
// a URL, a port, a path, a bare wildcard, a top-level wildcard, an
// address in a form resolvers differ on — is refused with what to write.
func TestCheckHost(t *testing.T) {
	for _, ok := range []string{"api.github.com", "*.example.org", "localhost", "API.GitHub.com.", "10.0.0.7", "fd00::1", "my_svc.internal", "xn--bcher-kva.example"} {
		if err := CheckHost(ok); err != nil {
			t.Errorf("CheckHost(%q) = %v, want nil", ok, err)
		}
	}
	for entry, want := range map[string]string{
		"https://api.github.com/repos": `write only its host name, such as "api.github.com"`,
		"api.github.com:443":           `names a port (443): write the host alone, "api.github.com"`,
		"10.0.0.7:8080":                `write the address alone, "10.0.0.7"`,
		"*.example.org:443":            `write the host alone, "*.example.org"`,
		"[::1]":                        "without brackets",
		"api.github.com/repos":         "without a path",
		"*":                            "a wildcard may only open the name",
		"*.org":                        "every name under a top-level domain",
		"a.*.example.org":              "a wildcard may only open the name",
		"":                             "an empty host name",
		"bad name.com":                 `' ' is not allowed`,
		"-x.example.org":               "hyphen",
		"bücher.example":               "xn--",
		"2130706433":                   "unusual form",
		"127.1":                        "unusual form",
		"0x7f.0x1":                     "unusual form",
	} {
		err := CheckHost(entry)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckHost(%q) = %v, want an error saying %q", entry, err, want)
		}
	}
}

// A host is allowed when an entry names it exactly or a wildcard entry
// names a domain above it, in any case, with or without a final dot; an
// IP address only when the list names that address.
func TestAllowsHost(t *testing.T) {
	list := []string{"api.github.com", "*.example.org", "10.0.0.7", "fd00::1"}
	for host, want := range map[string]bool{
		"api.github.com":         true,
		"API.GITHUB.COM.":        true,
		"github.com":             false,
		"evil-api.github.com":    false,
		"api.github.com.evil.io": false,
		"a.example.org":          true,
		"a.b.example.org":        true,
		"example.org":            false, // *. is below the domain only
		"badexample.org":         false,
		"10.0.0.7":               true,
		"::ffff:10.0.0.7":        true,
		"10.0.0.8":               false,
		"[fd00::1]":              true,
		"fd00:0::1":              true,
		"127.0.0.1":              false,
		"":                       false,
	} {
		if got := AllowsHost(list, host); got != want {
			t.Errorf("AllowsHost(%q) = %v, want %v", host, got, want)
		}
	}
	if AllowsHost([]string{"*.example.org"}, "10.0.0.7") {
		t.Error("a wildcard allows an IP address")
	}
}
