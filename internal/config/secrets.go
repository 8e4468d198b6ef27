package config

import (
	"fmt"
	"maps"
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

// ImportedSecret is a secret that ReferenceSecrets took out of a server's
// entry: the entry now reads ${Var} where Where (env.GITHUB_TOKEN,
// headers.Authorization, args[3]) held it.
type ImportedSecret struct {
	Server, Where, Var string
}

// ReferenceSecrets returns servers with every secret written in them
// replaced by a ${VAR} reference, and the variables to set: the values of
// secret-named env variables (as `otter config show` masks them), of
// secret-named headers (Authorization keeps its scheme: "Bearer
// ${VAR}"), of secret-looking command-line flags, and well-known tokens
// (ghp_…, sk-…) wherever they are in env, headers and args. A value that
// already holds a ${…} reference stays. An env variable's own name is its
// variable, unless another server gives the same name another value;
// other variables are named after the server and the header or flag.
func ReferenceSecrets(servers []Server) ([]Server, []ImportedSecret) {
	var found []ImportedSecret
	values := map[string]string{} // variable → the value it stands for
	name := func(want, server, v string) string {
		n, i := want, 2
		for {
			if old, ok := values[n]; !ok || old == v {
				values[n] = v
				return n
			}
			n = envName(server) + "_" + want
			if i > 2 {
				n += fmt.Sprint("_", i)
			}
			i++
		}
	}
	tokenLike := func(v string) bool { return !strings.Contains(v, "://") && maskInValue(v) == maskSecret(v) }
	held := func(v string) bool { return strings.Contains(v, "${") || v == "" }
	out := slices.Clone(servers)
	for i, s := range out {
		if s.Env != nil {
			env := make(map[string]string, len(s.Env))
			for _, k := range slices.Sorted(maps.Keys(s.Env)) {
				v := s.Env[k]
				if !held(v) && (secretName(k) || tokenLike(v)) {
					n := name(envName(k), s.Name, v)
					found = append(found, ImportedSecret{s.Name, "env." + k, n})
					v = "${" + n + "}"
				}
				env[k] = v
			}
			s.Env = env
		}
		if s.Headers != nil {
			h := make(map[string]string, len(s.Headers))
			for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
				v := s.Headers[k]
				if !held(v) && (secret.SensitiveKey(k) || tokenLike(v)) {
					scheme, cred, ok := strings.Cut(v, " ")
					want := envName(s.Name) + "_" + envName(k)
					if ok && (strings.EqualFold(scheme, "bearer") || strings.EqualFold(scheme, "basic") || strings.EqualFold(scheme, "token")) {
						want = envName(s.Name) + "_TOKEN"
					} else {
						scheme, cred = "", v
					}
					n := name(want, s.Name, cred)
					found = append(found, ImportedSecret{s.Name, "headers." + k, n})
					v = strings.TrimPrefix(scheme+" ${"+n+"}", " ")
				}
				h[k] = v
			}
			s.Headers = h
		}
		if s.Args != nil {
			args := slices.Clone(s.Args)
			ref := func(j int, prefix, v, flag string) {
				if held(v) {
					return
				}
				n := name(envName(s.Name)+"_"+envName(strings.TrimLeft(flag, "-")), s.Name, v)
				found = append(found, ImportedSecret{s.Name, fmt.Sprintf("args[%d]", j), n})
				args[j] = prefix + "${" + n + "}"
			}
			flagSecrets(s.Args, func(j int, prefix, v string) {
				flag := strings.TrimSuffix(prefix, "=")
				if prefix == "" {
					flag = s.Args[j-1]
				}
				ref(j, prefix, v, flag)
			})
			for j, a := range s.Args {
				if args[j] == a && tokenLike(a) {
					ref(j, "", a, "token")
				}
			}
			s.Args = args
		}
		out[i] = s
	}
	return out, found
}

// envName is s as an environment variable's name: upper case, with '_'
// for anything but letters and digits.
func envName(s string) string {
	b := []byte(strings.ToUpper(s))
	for i, c := range b {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			b[i] = '_'
		}
	}
	return string(b)
}
