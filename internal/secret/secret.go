// Package secret hides the secrets in text that otter prints or logs by
// the structure that carries them — a URL's userinfo, the values of its
// secret-named query parameters, Bearer and Basic credentials, secret-named
// key=value pairs — rather than by knowing their values: a value masked
// only when it is known, and long enough not to mask ordinary words, let
// "https://user:pass@host/mcp?code=xyz12" through whole. Every front end,
// log and audit line masks through this one package.
package secret

import (
	"net/url"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// Mask is what a secret becomes.
const Mask = "****"

// SensitiveKey reports whether a JSON object key, header name or URL query
// parameter names a secret: password, token, secret, api_key,
// authorization, cookie, session, an OAuth code, a request signature (sig,
// X-Amz-Signature), … in any case and with any of '-', '_', '.' or nothing
// between words. It errs on the side of masking: a harmless value hidden
// costs little.
func SensitiveKey(k string) bool {
	k = strings.ToLower(k)
	k = strings.NewReplacer("-", "", "_", "", " ", "", ".", "").Replace(k)
	switch k {
	case "pass", "pwd", "sig", "sid", "jwt", "otp", "bearer", "ticket", "nonce":
		return true
	}
	for _, s := range []string{"auth", "key", "code", "password", "passwd", "passphrase", "secret", "token",
		"cookie", "credential", "session", "signature"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// MaskURL masks the userinfo and the secret-named query (and fragment)
// parameters of an absolute URL, keeping the rest as written; other
// strings are returned unchanged. A password is masked (user:****@), and
// so is a user name given alone (****@), which for proxies and APIs is
// usually a token (http://TOKEN@proxy:3128).
func MaskURL(s string) string { return MaskURLCollect(s, new([]string)) }

// MaskDSN is MaskURL for the address of a database or cache server
// (redis://, rediss://, postgres://), whose path and query never hold an
// '@': its userinfo runs to the last '@', so a password with a '/', '?' or
// '#' written unescaped — as a base64 password pasted into ${VAR} often
// is — is masked whole, where MaskURL, held to the URL grammar, ends the
// userinfo at the '/' and masks nothing.
func MaskDSN(s string) string {
	head, rest, ok := cutScheme(s)
	at := strings.LastIndexByte(rest, '@')
	if !ok || at < 0 {
		return MaskURL(s)
	}
	user := Mask
	if name, _, ok := strings.Cut(rest[:at], ":"); ok {
		user = name + ":" + Mask
	}
	return MaskURL(head + user + rest[at:])
}

// cutScheme splits s after its "scheme://"; ok is false when it has none.
func cutScheme(s string) (head, rest string, ok bool) {
	i := strings.Index(s, "://")
	if i <= 0 {
		return "", s, false
	}
	return s[:i+3], s[i+3:], true
}

// MaskURLCollect is MaskURL appending what it masked to secrets.
func MaskURLCollect(s string, secrets *[]string) string {
	head, rest, ok := cutScheme(s)
	if !ok {
		return s
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority := rest[:end]
	if authority == "" {
		return s
	}
	var b strings.Builder
	b.WriteString(head)
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		user := authority[:at]
		if name, pw, ok := strings.Cut(user, ":"); ok {
			if pw != "" && pw != Mask && pw != "***" { // net/http writes user:***@
				collect(secrets, pw)
			}
			b.WriteString(name + ":" + Mask)
		} else if user != "" {
			if user != Mask {
				collect(secrets, user)
			}
			b.WriteString(Mask)
		}
		authority = authority[at:]
	}
	b.WriteString(authority)
	rest = rest[end:]
	path, query, hasQuery := strings.Cut(rest, "?")
	if !hasQuery {
		path, query = rest, ""
	}
	query, fragment, hasFragment := strings.Cut(query, "#")
	if !hasQuery {
		path, fragment, hasFragment = strings.Cut(path, "#")
	}
	b.WriteString(path)
	if hasQuery {
		b.WriteString("?" + maskParams(query, secrets))
	}
	if hasFragment {
		b.WriteString("#" + maskParams(fragment, secrets)) // #access_token=… of implicit OAuth
	}
	return b.String()
}

// maskParams masks the values of the secret-named k=v pairs of a query.
func maskParams(q string, secrets *[]string) string {
	params := strings.Split(q, "&")
	for i, p := range params {
		k, v, ok := strings.Cut(p, "=")
		if !ok || v == "" || v == Mask {
			continue
		}
		if uk, err := url.QueryUnescape(k); err == nil {
			k = uk
		}
		if SensitiveKey(k) {
			collect(secrets, v)
			params[i] = p[:strings.IndexByte(p, '=')+1] + Mask
		}
	}
	return strings.Join(params, "&")
}

// collect appends v and, when it differs, its url-decoded form.
func collect(secrets *[]string, v string) {
	*secrets = append(*secrets, v)
	if u, err := url.QueryUnescape(v); err == nil && u != v {
		*secrets = append(*secrets, u)
	}
}

// MaskText masks, in free text such as an error message or a log line,
// the URLs (see MaskURL), Bearer and Basic credentials, and secret-named
// key=value pairs of form-encoded or query-like text.
func MaskText(s string) string { return MaskTextCollect(s, new([]string)) }

// MaskTextCollect is MaskText appending what it masked to secrets.
func MaskTextCollect(s string, secrets *[]string) string {
	s = urlInText().ReplaceAllStringFunc(s, func(u string) string { return MaskURLCollect(u, secrets) })
	s = maskCredentials(s, secrets)
	s = secretPair().ReplaceAllStringFunc(s, func(m string) string {
		sub := secretPair().FindStringSubmatch(m)
		key := sub[2]
		if k, err := url.QueryUnescape(key); err == nil {
			key = k
		}
		if !SensitiveKey(key) || placeholder(sub[3]) {
			return m
		}
		collect(secrets, sub[3])
		return sub[1] + sub[2] + "=" + Mask
	})
	return s
}

// placeholder reports a value that stands for a secret rather than being
// one, as advice and examples write it: nothing ("KEY="), the mask, a
// value without a letter or digit ("...", "…", "***"), or a shell
// expansion that produces the secret when run — "$(openssl rand -hex 32)",
// "${OTTER_SERVE_KEY}", "$ANTHROPIC_API_KEY" (an upper-case variable, so
// that a password such as "$ecret1" is still masked). ("<your key>" never
// gets here: a value stops at '<'.)
func placeholder(v string) bool {
	switch {
	case v == "" || v == Mask,
		strings.HasPrefix(v, "$(") || strings.HasPrefix(v, "${"),
		envReference().MatchString(v):
		return true
	}
	return !strings.ContainsFunc(v, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) })
}

var envReference = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\$[A-Z_][A-Z0-9_]*$`) })

// MaskCredentials masks the HTTP Bearer and Basic credentials in s
// ("Authorization: Bearer ****"), and nothing else: for a value such as a
// command-line argument, where key=value pairs are flags.
func MaskCredentials(s string) string { return maskCredentials(s, new([]string)) }

func maskCredentials(s string, secrets *[]string) string {
	return authCredential().ReplaceAllStringFunc(s, func(m string) string {
		sub := authCredential().FindStringSubmatch(m)
		if sub[2] == Mask {
			return m
		}
		*secrets = append(*secrets, sub[2])
		return sub[1] + Mask
	})
}

// urlInText matches absolute URLs inside free text, e.g. an error message
// that quotes the URL it refused.
var urlInText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>` + "`" + `]+`) })

// authCredential matches an HTTP Bearer or Basic credential in any text
// ("Bearer eyJ…", "basic dXNlcjpwdw=="): group 1 is the scheme and the
// space, group 2 the credential.
var authCredential = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b((?:bearer|basic)\s+)([A-Za-z0-9\-._~+/]+=*|\*\*\*\*)`)
})

// secretPair matches a key=value pair of form-encoded or query-like text
// (a=1&password=x; k=v k2=v2): group 1 is what precedes the key, group 2
// the key, group 3 the value. Whether the key names a secret is decided
// by SensitiveKey.
var secretPair = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|[?&;#\s"'(,{])([^=&;#\s?"'(){},<>]+)=([^&;#\s"'<>]*)`)
})
