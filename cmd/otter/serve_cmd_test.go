package main

import (
	"strings"
	"testing"
)

// A bare port given to --http is a usage error that shows both meanings it
// could have, not the refusal to serve other machines without API keys.
func TestServeHTTPBarePortIsAUsageError(t *testing.T) {
	configTestHome(t)
	for _, tc := range []struct {
		addr string
		want []string
	}{
		{"18940", []string{"--http 18940 is a port without a host", "--http 127.0.0.1:18940", "--http :18940", "api_keys",
			"Usage: otter mcp serve [flags]"}},
		{"localhost", []string{"--http localhost has no port", "--http localhost:8080"}},
		{"", []string{"--http needs HOST:PORT", "--http 127.0.0.1:8080"}},
	} {
		out, _, err := runOtter(t, "mcp", "serve", "--http", tc.addr)
		if err == nil {
			t.Errorf("otter mcp serve --http %q: no error; stdout:\n%.300s", tc.addr, out)
			continue
		}
		wantExit(t, err, 2)
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("otter mcp serve --http %q: error\n%s\nlacks %q", tc.addr, err, w)
			}
		}
		if strings.Contains(err.Error(), "refusing") {
			t.Errorf("otter mcp serve --http %q: %v, want a usage error, not the refusal without keys", tc.addr, err)
		}
	}
}

func TestHTTPAddrProblemAcceptsHostPort(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"127.0.0.1:8080", ":8080", "localhost:0", "[::1]:9000", "0.0.0.0:80", "otter.internal:443"} {
		if p := httpAddrProblem(addr); p != "" {
			t.Errorf("httpAddrProblem(%q) = %q, want none", addr, p)
		}
	}
}
