package oauth

import (
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/otter-sh/otter/internal/config"
)

// Step-up authorization across processes. A session that may not start a
// login (the manager at startup, `otter mcp call` without a terminal) and
// is refused with 403 insufficient_scope records the scopes the server
// asked for with the stored token. `otter mcp login` then knows that the
// stored token is not enough, logs in again, and asks for those scopes
// besides the ones it discovers.

// MissingScopes returns the scopes that srv's stored token does not grant
// although otter knows they are needed: those the server demanded in a 403
// insufficient_scope, and those of [mcp.servers.oauth] scopes. It returns
// nil when no token is stored (a login is due anyway) or nothing is known
// to be missing.
func (a *Authorizer) MissingScopes(srv config.Server) ([]string, error) {
	if srv.URL == "" {
		return nil, nil
	}
	rec, err := a.store.load(srv.URL)
	if err != nil || rec == nil || rec.Token == nil {
		return nil, err
	}
	var configured []string
	if srv.OAuth != nil {
		configured = srv.OAuth.Scopes
	}
	return missingScopes(union(strings.Fields(rec.WantScope), configured), grantedScopes(rec)), nil
}

// grantedScopes are the scopes of rec's token: as the token endpoint said,
// or, when it did not say, as requested (RFC 6749 §5.1: the scope may be
// omitted when it is the one requested).
func grantedScopes(rec *record) []string {
	if s := strings.Fields(rec.Scope); len(s) > 0 {
		return s
	}
	if rec.Client != nil {
		return rec.Client.Scopes
	}
	return nil
}

// missingScopes returns the scopes of want not in have. offline_access is
// not a permission on the resource and is never reported missing.
func missingScopes(want, have []string) []string {
	var out []string
	for _, s := range want {
		if s != "offline_access" && !slices.Contains(have, s) && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// union returns a followed by the scopes of b not in a.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// challengeScopes returns the scope parameter of a Bearer challenge.
func challengeScopes(cs []oauthex.Challenge) []string {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["scope"] != "" {
			return strings.Fields(c.Params["scope"])
		}
	}
	return nil
}

// noteWantedScopes records that the server refused the stored token for
// lack of scopes, so that the next `otter mcp login` asks for them.
func (h *handler) noteWantedScopes(scopes []string) {
	if len(scopes) == 0 {
		return
	}
	err := h.a.store.update(h.srv.URL, func(rec *record) (bool, error) {
		if rec.Token == nil {
			return false, nil // the next login happens anyway and sees the challenge
		}
		want := union(strings.Fields(rec.WantScope), scopes)
		if len(missingScopes(want, grantedScopes(rec))) == 0 || strings.Join(want, " ") == rec.WantScope {
			return false, nil
		}
		rec.WantScope = strings.Join(want, " ")
		return true, nil
	})
	if err != nil {
		h.a.logger.Warn("oauth: could not note the scopes the server asked for", "server", h.name(), "err", err)
	}
}

// wantedScopes returns the scopes recorded by noteWantedScopes.
func (h *handler) wantedScopes() []string {
	rec, err := h.a.store.load(h.srv.URL)
	if err != nil || rec == nil {
		return nil
	}
	return strings.Fields(rec.WantScope)
}
