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
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/ask"
)

const (
	// urlElicitMaxShown bounds the URLs an error names; a server cannot
	// make the text grow without limit.
	urlElicitMaxShown = 5
	// urlElicitMaxAsked bounds the URLs put to the person per request.
	urlElicitMaxAsked = 3
	// urlElicitMaxText bounds each URL and message in the text.
	urlElicitMaxText = 2000
)

// URLElicitation is one page a server needs the person to open.
type URLElicitation struct {
	URL     string
	Message string // why, in the server's words
	ID      string // the elicitationId
}

// URLElicitationError is a request a server refused with -32042 until the
// person has opened the URLs in a browser. Its text names them, for the
// person and for the model.
type URLElicitationError struct {
	// What names the request: the tool's qualified name (mcp__srv__tool),
	// or a prompt or resource of a server.
	What   string
	Server string
	// Message is the server's error message, without the "MCP error
	// -32042: " some SDKs put before it.
	Message      string
	Elicitations []URLElicitation
	again        string // "call again" for a tool, "try again" otherwise
	err          error
}

func (e *URLElicitationError) Unwrap() error { return e.err }

func (e *URLElicitationError) Error() string {
	var b strings.Builder
	b.WriteString(e.What)
	b.WriteString(": the server needs you to open ")
	shown := e.Elicitations[:min(len(e.Elicitations), urlElicitMaxShown)]
	for i, el := range shown {
		switch {
		case i == 0:
		case i == len(shown)-1 && len(shown) == len(e.Elicitations):
			b.WriteString(" and ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(printable(el.URL))
		if msg := printable(el.Message); msg != "" {
			b.WriteString(" (" + msg + ")")
		}
	}
	if more := len(e.Elicitations) - len(shown); more > 0 {
		fmt.Fprintf(&b, " and %d more", more)
	}
	b.WriteString(" in a browser, then " + cmp.Or(e.again, "try again"))
	if msg := printable(e.Message); msg != "" && !strings.EqualFold(msg, "URL elicitation required") {
		b.WriteString("; it said: " + msg)
	}
	return b.String()
}

// asURLElicitation returns err, the failure of a request, as a
// URLElicitationError when it is a -32042 answer that lists at least one
// URL; otherwise nil.
func asURLElicitation(err error, what, server, again string) *URLElicitationError {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != sdk.CodeURLElicitationRequired {
		return nil
	}
	var data struct {
		Elicitations []struct {
			Mode          string `json:"mode"`
			URL           string `json:"url"`
			Message       string `json:"message"`
			ElicitationID string `json:"elicitationId"`
		} `json:"elicitations"`
	}
	if len(rpcErr.Data) == 0 || json.Unmarshal(rpcErr.Data, &data) != nil {
		return nil
	}
	e := &URLElicitationError{What: what, Server: server, again: again, err: err}
	e.Message = strings.TrimSpace(strings.TrimPrefix(rpcErr.Message, fmt.Sprintf("MCP error %d:", rpcErr.Code)))
	for _, el := range data.Elicitations {
		if el.URL == "" || (el.Mode != "" && el.Mode != "url") {
			continue
		}
		e.Elicitations = append(e.Elicitations, URLElicitation{URL: el.URL, Message: el.Message, ID: el.ElicitationID})
	}
	if len(e.Elicitations) == 0 {
		return nil
	}
	return e
}

// urlElicitation turns err into a URLElicitationError when it is one (see
// asURLElicitation) and first asks the person, through the front end that
// answers the server's elicitations, to open each http or https URL (a few
// at most). It returns nil when err is not one. again is what the person
// is to do once the pages are done: "call again", "try again".
func (s *server) urlElicitation(ctx context.Context, err error, what, again string) error {
	e := asURLElicitation(err, what, s.name, again)
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

// printable makes server text safe for a terminal and one line long:
// control characters go, runs of space become one, and it is cut at
// urlElicitMaxText bytes.
func printable(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t' || r == '\r':
			return ' '
		case unicode.IsControl(r), r == unicode.ReplacementChar,
			r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069': // bidi overrides
			return -1
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > urlElicitMaxText {
		cut := urlElicitMaxText
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
