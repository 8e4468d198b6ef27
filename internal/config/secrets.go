package config

import (
	"net/url"
	"slices"
	"strings"

	"github.com/otter-sh/otter/internal/secret"
)

// minSecretLen is the shortest value SecretMasker hides: shorter ones
// ("1", "true", "dev") would mask ordinary words in a message.
const minSecretLen = 6

// SecretMasker returns a function that hides, in any text otter prints or
// logs about server s (its errors, its stderr, its status), secrets by
// their structure wherever they are (see secret.MaskText: any URL's
// userinfo and secret-named query values, however short, credentials,
// secret key=value pairs), and besides, wherever they appear, the values
// the configuration handed the server: the password in its url and the values of
// secret-looking query parameters (also as url-encoded), every value of its
// headers and env, the values of its secret-looking command-line flags
// ("--api-key X", "--token=X"), well-known tokens, Bearer credentials and
// URL passwords among its args (what `otter config show` masks there), and its OAuth client
// secret. Each becomes "****". A
// server's stderr that echoes its token thus shows "****".
func SecretMasker(s Server) func(string) string {
	var secrets []string
	add := func(v string) {
		if len(v) < minSecretLen {
			return
		}
		secrets = append(secrets, v)
		if e := url.QueryEscape(v); e != v {
			secrets = append(secrets, e)
		}
	}
	addURL := func(raw string) {
		u, err := url.Parse(raw)
		if err != nil || raw == "" {
			return
		}
		if pw, ok := u.User.Password(); ok {
			add(pw)
		}
		for k, vs := range u.Query() {
			if secret.SensitiveKey(k) {
				for _, v := range vs {
					add(v)
				}
			}
		}
	}
	addURL(s.URL)
	flagSecrets(s.Args, func(_ int, _, v string) { add(v) })
	for _, a := range s.Args {
		var found []string // "Authorization: Bearer TOKEN", "--db=postgres://u:pw@h"
		secret.MaskTextCollect(a, &found)
		for _, v := range found {
			add(v)
		}
		if maskInValue(a) == maskSecret(a) { // a well-known token
			add(a)
		} else if i := strings.Index(a, "://"); i >= 0 { // a URL, maybe after "--db="
			addURL(a[strings.LastIndex(a[:i], "=")+1:])
		}
	}
	for _, v := range s.Headers {
		add(v)
		if _, tok, ok := strings.Cut(v, " "); ok { // "Bearer TOKEN"
			add(tok)
		}
	}
	for _, v := range s.Env {
		add(v)
	}
	if s.OAuth != nil {
		add(s.OAuth.ClientSecret)
	}
	if len(secrets) == 0 {
		return secret.MaskText
	}
	// Longest first, so that a secret containing another is hidden whole.
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(secrets))
	for _, v := range slices.Compact(secrets) {
		pairs = append(pairs, v, "****")
	}
	r := strings.NewReplacer(pairs...)
	return func(t string) string { return r.Replace(secret.MaskText(t)) }
}

// MaskURL hides a URL's user info and the values of its secret-named
// query parameters (as `otter config show` does).
func MaskURL(s string) string { return secret.MaskURL(s) }
