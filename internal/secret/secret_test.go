package secret

import (
	"strings"
	"testing"
)

// TestMaskByStructure: every part of a URL that carries a secret is masked
// however short it is — the password, a user name given alone, each
// secret-named query or fragment value — in a URL alone and quoted inside
// an error, as net/http writes it; the rest stays as written. (Before,
// masking replaced known values of 6 characters or more, and
// https://user:pass@…/mcp?token=abc&code=xyz12&api_key=k1 was printed
// whole.)
func TestMaskByStructure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"https://user:pass@h.example/mcp?token=abc&code=xyz12&api_key=k1&page=2",
			"https://user:****@h.example/mcp?token=****&code=****&api_key=****&page=2"},
		{`Post "https://user:***@h.example:8443/mcp?token=abc&code=xyz12&api_key=k1": dial tcp 127.0.0.1:1: connect: connection refused`,
			`Post "https://user:****@h.example:8443/mcp?token=****&code=****&api_key=****": dial tcp 127.0.0.1:1: connect: connection refused`},
		{"proxy http://TOK@proxy:3128 failed", "proxy http://****@proxy:3128 failed"},
		{"https://app.example/cb#access_token=a1&state=s", "https://app.example/cb#access_token=****&state=s"},
		{"https://h.example/a?X-Amz-Signature=ff&X-Amz-Expires=60", "https://h.example/a?X-Amz-Signature=****&X-Amz-Expires=60"},
		{"Authorization: Bearer abc.def", "Authorization: Bearer ****"},
		{"sent password=pw1&user=bob", "sent password=****&user=bob"},
		{"no secrets: a=1, path /tmp/x, time 12:00", "no secrets: a=1, path /tmp/x, time 12:00"},
	} {
		if got := MaskText(tc.in); got != tc.want {
			t.Errorf("MaskText(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
	}
	var got []string
	MaskURLCollect("https://u:p%40ss@h/?token=abc", &got)
	if strings.Join(got, " ") != "p%40ss p@ss abc" {
		t.Errorf("collected %q; want the password (as written and decoded) and the token", got)
	}
}

// TestMaskCredentialsAlone: a Bearer or Basic credential is masked in text
// that holds nothing else a secret could be told by.
func TestMaskCredentialsAlone(t *testing.T) {
	t.Parallel()
	if got := MaskText("Bearer RAWBEARER77"); got != "Bearer ****" {
		t.Errorf("MaskText = %q", got)
	}
}

// TestMaskDSN: a store's address is masked up to its last '@', so a
// password holding '/', '?' or '#' unescaped (a base64 password pasted in)
// is hidden whole; MaskURL, which ends the userinfo at the first '/',
// printed it.
func TestMaskDSN(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"redis://:ab/cd+ef==@10.0.0.5:6379/0", "redis://:****@10.0.0.5:6379/0"},
		{"rediss://otter:p?w#x/y@redis.internal:6380", "rediss://otter:****@redis.internal:6380"},
		{"redis://:p@ss@h:6379", "redis://:****@h:6379"},
		{"redis://TOKEN@h", "redis://****@h"},
		{"redis://h:6379/2?client_name=otter", "redis://h:6379/2?client_name=otter"},
		{"redis://h:6379/2?password=pw", "redis://h:6379/2?password=****"},
		{"not a url", "not a url"},
	} {
		if got := MaskDSN(tc.in); got != tc.want {
			t.Errorf("MaskDSN(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestMaskKeepsPlaceholders: advice that shows where a secret goes keeps
// its placeholder or the command that makes one; a value that is a
// secret is still masked. (Before, "export ANTHROPIC_API_KEY=..." became
// "…=****" and "OTTER_SERVE_KEY=$(openssl rand -hex 32)" became
// "…=**** rand -hex 32)".)
func TestMaskKeepsPlaceholders(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"export ANTHROPIC_API_KEY=...      # Anthropic (Claude)",
		"export OTTER_SERVE_KEY=$(openssl rand -hex 32); clients send it",
		`api_keys = ["${OTTER_SERVE_KEY:-}"], so api_key=${OTTER_SERVE_KEY}`,
		"set token=$GITHUB_TOKEN or password=… or secret=<your secret>",
		"api_key= (empty)",
	} {
		if got := MaskText(s); got != s {
			t.Errorf("MaskText(%q)\n = %q, want it unchanged", s, got)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"export ANTHROPIC_API_KEY=sk-ant-123", "export ANTHROPIC_API_KEY=****"},
		{"password=$ecret1 token=x", "password=**** token=****"},
	} {
		if got := MaskText(tc.in); got != tc.want {
			t.Errorf("MaskText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := MaskCredentials("Authorization: Bearer q1 --port=8080 token=x"); got != "Authorization: Bearer **** --port=8080 token=x" {
		t.Errorf("MaskCredentials = %q", got)
	}
}
