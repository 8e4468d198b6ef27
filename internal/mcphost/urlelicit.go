package mcphost

// URL elicitation, error path. A server may refuse a request with JSON-RPC
// error -32042 (URLElicitationRequiredError, MCP 2025-11-25): its data lists
// URL-mode elicitations, pages the person must open in a browser (to sign
// in, to connect an account) before the request can succeed. The go-sdk
// only defines the code (sdk.CodeURLElicitationRequired) and the server
// side (sdk.URLElicitationRequiredError); its client hands the error back
// as is, whose text is the server's message alone ("This request requires
// browser-based authorization.") without the URL. So otter turns it into a
// URLElicitationError, whose text names the URLs, and first shows each URL
// to the person through the same front end as a server's elicitation/create
// in url mode.

import (
	"context"
	"net/url"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/servers"
)

const (
	// urlElicitMaxAsked bounds the URLs put to the person per request.
	urlElicitMaxAsked = 3
)

// urlElicitation turns err into a URLElicitationError when it is one (see
// asURLElicitation) and first asks the person, through the front end that
// answers the server's elicitations, to open each http or https URL (a few
// at most). It returns nil when err is not one. again is what the person
// is to do once the pages are done: "call again", "try again".
func (s *server) urlElicitation(ctx context.Context, err error, what, again string) error {
	e := servers.ParseURLElicitation(err, what, s.name, again)
	if e == nil {
		return nil
	}
	if s.m.opts.Eliciter == nil {
		return e
	}
	asked := 0
	for _, el := range e.Elicitations {
		if asked == urlElicitMaxAsked || ctx.Err() != nil {
			break
		}
		if u, perr := url.Parse(el.URL); perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			continue // named in the text, but not offered to open
		}
		asked++
		req := ask.Elicitation{Server: s.name, Message: el.Message, Mode: "url", URL: el.URL, ID: el.ID}
		if req.Message == "" {
			req.Message = e.Message
		}
		if _, aerr := s.m.opts.Eliciter.Elicit(ctx, req); aerr != nil {
			s.m.logger.Debug("asking to open a URL the server needs failed", "server", s.name, "err", s.mask(aerr.Error()))
			break
		}
	}
	return e
}
