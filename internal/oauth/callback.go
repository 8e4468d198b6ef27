package oauth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/otter-sh/otter/internal/ask"
)

// callbackPath is the path of the loopback redirect URI.
const callbackPath = "/callback"

// maxPrompts bounds how often the person is asked again after a browser
// could not be opened or a pasted URL was wrong.
const maxPrompts = 3

// redirectURL is the loopback redirect URI on port.
func redirectURL(port int) string {
	return "http://127.0.0.1:" + strconv.Itoa(port) + callbackPath
}

// freePort returns a port on 127.0.0.1 that is free now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// portFree reports whether port can be listened on now.
func portFree(port int) bool {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// callbackResult is what reached the redirect URI (or was pasted).
type callbackResult struct {
	res *auth.AuthorizationResult
	err error
}

// parseRedirect reads the authorization response from a redirect URL's
// query. It checks state and reports an error response of the
// authorization server (RFC 6749 §4.1.2.1) for a person to read.
func parseRedirect(q url.Values, state string) (*auth.AuthorizationResult, error) {
	if q.Get("state") != state {
		return nil, errors.New("the redirect does not belong to this login (state mismatch)")
	}
	if e := q.Get("error"); e != "" {
		msg := "the authorization server refused the login: " + e
		if d := q.Get("error_description"); d != "" {
			msg += " (" + d + ")"
		}
		return nil, &authError{code: e, msg: msg}
	}
	code := q.Get("code")
	if code == "" {
		return nil, errors.New("the redirect carries no authorization code")
	}
	return &auth.AuthorizationResult{Code: code, State: state, Iss: q.Get("iss")}, nil
}

// authError is an error response from the authorization endpoint.
type authError struct{ code, msg string }

func (e *authError) Error() string { return e.msg }

// parsePasted reads the authorization response from a redirect URL the
// person pasted (the address their browser ended on).
func parsePasted(pasted, state string) (*auth.AuthorizationResult, error) {
	pasted = strings.TrimSpace(pasted)
	u, err := url.Parse(pasted)
	if err != nil || u.RawQuery == "" {
		return nil, fmt.Errorf("%q is not the redirect URL: paste the whole address from the browser, starting with %s", pasted, "http://127.0.0.1:")
	}
	return parseRedirect(u.Query(), state)
}

// callbackServer serves the loopback redirect URI for one login.
type callbackServer struct {
	srv     *http.Server
	results chan callbackResult
}

// listenCallback starts the redirect URI server on port for a login whose
// authorization request carries state.
func listenCallback(port int, state string) (*callbackServer, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("listen for the OAuth redirect on 127.0.0.1:%d (set [mcp.servers.oauth] callback_port to a free port): %w", port, err)
	}
	cs := &callbackServer{results: make(chan callbackResult, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+callbackPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if r.URL.Query().Get("state") != state {
			// A stale tab or a forged request: it does not end the login.
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, page, "Login failed", "This redirect does not belong to the login otter is waiting for.")
			return
		}
		res, err := parseRedirect(r.URL.Query(), state)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, page, "Login failed", html.EscapeString(err.Error())+" You can close this tab.")
		} else {
			fmt.Fprintf(w, page, "Logged in", "otter is authorized. You can close this tab and return to the terminal.")
		}
		select {
		case cs.results <- callbackResult{res, err}:
		default: // a second redirect; the first one counts
		}
	})
	cs.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go cs.srv.Serve(ln)
	return cs, nil
}

func (cs *callbackServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cs.srv.Shutdown(ctx)
}

const page = `<!doctype html><html><head><meta charset="utf-8"><title>otter</title></head>
<body style="font-family: sans-serif; margin: 3em"><h1>%s</h1><p>%s</p></body></html>
`

// fetchCode is the host's part of the authorization code flow: it asks the
// person how to proceed, opens the browser, and waits for the redirect to
// the loopback server or for a pasted redirect URL.
func (h *handler) fetchCode(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	authURL, err := url.Parse(args.URL)
	if err != nil {
		return nil, fmt.Errorf("authorization URL: %w", err)
	}
	state := authURL.Query().Get("state")
	// The token endpoint is told the same resource at every refresh.
	h.mu.Lock()
	h.resource = authURL.Query().Get("resource")
	h.mu.Unlock()
	cs, err := listenCallback(h.port, state)
	if err != nil {
		return nil, err
	}
	defer cs.close()

	// The person's time does not count against the server's startup_timeout;
	// the login as a whole has LoginTimeout.
	defer ask.PauseTimeout(ctx)()
	ctx, cancel := context.WithTimeoutCause(ctx, LoginTimeout, errLoginTimedOut)
	defer cancel()
	req := ask.Login{Server: h.name(), AuthURL: args.URL, CanPasteRedirect: true}
	var problem error // what went wrong with the last answer
	for range maxPrompts {
		reply, err := h.a.prompter.Login(ctx, req)
		if err != nil {
			var le *LoginRequiredError
			if errors.As(err, &le) {
				// The prompter knows the server by name only; a login to
				// an ad hoc server must be given its OAuth settings again.
				le.Adhoc = AdhocSettings(h.srv)
			}
			return nil, fmt.Errorf("log in to %s: %w", h.name(), err)
		}
		switch reply.Choice {
		case ask.LoginLater:
			return nil, h.loginRequired("login postponed")
		case ask.LoginPasteRedirect:
			res, err := parsePasted(reply.RedirectURL, state)
			if err != nil {
				h.a.logger.Warn("oauth: the pasted URL is not usable", "server", h.name(), "err", err)
				problem = fmt.Errorf("the pasted URL is not usable: %w", err)
				continue
			}
			return res, nil
		case ask.LoginOpenBrowser:
			if err := h.a.openBrowser(args.URL); err != nil {
				h.a.logger.Warn("oauth: could not open a browser; open the URL yourself or paste the redirect URL",
					"server", h.name(), "err", err)
				problem = fmt.Errorf("could not open a browser: %w", err)
				continue
			}
		case ask.LoginShowURL:
			// The front end shows the URL; wait for the redirect.
		}
		select {
		case r := <-cs.results:
			return r.res, h.callbackError(r.err)
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), errLoginTimedOut) {
				return nil, h.loginRequired(fmt.Sprintf("the login was not completed within %s", LoginTimeout))
			}
			return nil, fmt.Errorf("log in to %s: %w", h.name(), ctx.Err())
		}
	}
	if problem != nil {
		return nil, h.loginRequired(problem.Error())
	}
	return nil, h.loginRequired("no usable answer to the login prompt")
}

// LoginTimeout bounds one interactive login, from the prompt to the
// browser's redirect; a login not finished by then leaves the server
// needs-auth.
var LoginTimeout = 10 * time.Minute

var errLoginTimedOut = errors.New("login timed out")

// callbackError words an error response of the authorization endpoint and
// drops a client registration the server no longer knows.
func (h *handler) callbackError(err error) error {
	if err == nil {
		return nil
	}
	var ae *authError
	if errors.As(err, &ae) && (ae.code == "invalid_client" || ae.code == "unauthorized_client") {
		h.regs.forget()
	}
	return fmt.Errorf("log in to %s: %w", h.name(), err)
}
