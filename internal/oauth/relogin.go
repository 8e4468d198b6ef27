package oauth

import "github.com/otter-sh/otter/internal/config"

// Relogin is a login that may replace a stored token (`otter mcp login`):
// BeginLogin sets the stored token aside when a new login is due, and
// Abandon puts it back when that login does not complete, so that a
// failed login loses nothing.
type Relogin struct {
	// Missing are the scopes the stored token does not grant although
	// otter knows they are needed (see MissingScopes).
	Missing []string
	// Replacing is true when the stored token was set aside for a new
	// login: forced, or because scopes are missing.
	Replacing bool

	restore func() error
}

// BeginLogin prepares a login to srv. With force, or when the stored token
// lacks scopes otter knows are needed, it sets the stored token aside (see
// SetAside) so that the next interactive connection logs in afresh.
// Servers with the client_credentials grant store no token: nothing is set
// aside for them.
func (a *Authorizer) BeginLogin(srv config.Server, force bool) (*Relogin, error) {
	r := &Relogin{restore: func() error { return nil }}
	if srv.OAuth.IsClientCredentials() {
		return r, nil
	}
	missing, err := a.MissingScopes(srv)
	if err != nil {
		return nil, err
	}
	r.Missing = missing
	if force || len(missing) > 0 {
		restore, err := a.SetAside(srv)
		if err != nil {
			return nil, err
		}
		r.restore, r.Replacing = restore, true
	}
	return r, nil
}

// Abandon puts the token BeginLogin set aside back, unless a new one was
// stored meanwhile; call it when the login did not complete.
func (r *Relogin) Abandon() error { return r.restore() }
