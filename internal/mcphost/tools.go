package mcphost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/toolname"
)

// mcpTool is one server tool as a tool.Tool. It calls through whatever
// session the server has at call time, so it survives reconnects.
type mcpTool struct {
	s    *server
	name string
	info tool.Info
}

var emptySchema = json.RawMessage(`{"type":"object"}`)

// maxDescriptionBytes caps the description of a server's tool, prompt,
// resource or template that otter keeps, lists and offers to a model. The
// longest of the reference servers' 74 tools has 2,781 bytes
// (sequentialthinking's usage notes); 8 KiB keeps such a one whole with
// room to spare, while a server listing 250 tools of 1 MB descriptions
// costs 2 MiB instead of 250 MB held in every copy made of a tool list
// (2.4 GB before, for `otter mcp tools --json`).
const maxDescriptionBytes = 8 << 10

// capDescription cuts d to maxDescriptionBytes, on a character boundary,
// ending it with cutMarker. One the shrinker already cut to that length
// (see bigMessage), its marker after it, is left as it is.
func capDescription(d string) string {
	if len(d) <= maxDescriptionBytes {
		return d
	}
	if i := strings.LastIndex(d, cutMarkerStart); i >= 0 && i <= maxDescriptionBytes && len(d)-i <= len(cutMarker(math.MaxInt64)) {
		return d
	}
	return validUTF8Prefix(d, maxDescriptionBytes) + cutMarker(int64(len(d)))
}

// capDescriptions caps the descriptions of the lists l holds, in place.
func capDescriptions(l *lists) {
	// Lists not fetched again are shared with readers: only a description
	// that changes is written.
	capOne := func(d *string) {
		if c := capDescription(*d); c != *d {
			*d = c
		}
	}
	for _, t := range l.tools {
		capOne(&t.Description)
	}
	for _, p := range l.prompts {
		capOne(&p.Description)
	}
	for _, r := range l.resources {
		capOne(&r.Description)
	}
	for _, r := range l.templates {
		capOne(&r.Description)
	}
}

// newMCPTool makes t, a tool of s's current connection, a tool.Tool. Its
// schemas are as the server wrote them (see schemaOrder).
func newMCPTool(s *server, t *sdk.Tool) *mcpTool {
	var obs *sdkObserver
	if c := s.current(); c != nil {
		obs = c.obs
	}
	info := tool.Info{
		Name:        t.Name,
		Server:      s.name,
		Title:       t.Title,
		Description: t.Description,
		Annotations: t.Annotations,
		InputSchema: emptySchema,
	}
	if info.Title == "" && t.Annotations != nil {
		info.Title = t.Annotations.Title
	}
	if t.InputSchema != nil {
		if raw, err := json.Marshal(t.InputSchema); err == nil {
			info.InputSchema = obs.restore(raw)
		}
	}
	if t.OutputSchema != nil {
		if raw, err := json.Marshal(t.OutputSchema); err == nil {
			info.OutputSchema = obs.restore(raw)
		}
	}
	return &mcpTool{s: s, name: t.Name, info: info}
}

func (t *mcpTool) Info() tool.Info { return t.info }

// Call calls the tool with the server's timeout. Progress notifications go
// to tool.ReportProgress of ctx; cancelling ctx sends notifications/cancelled.
// A server that needs the person to open a URL first (-32042) gets it shown
// to them and the call fails with a URLElicitationError naming it.
// When an HTTP server ended the session before the call reached it, the
// call is sent once more on the new session.
func (t *mcpTool) Call(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
	s := t.s
	callCtx, cancel := context.WithTimeout(ctx, s.callTimeout)
	defer cancel()
	c := s.current()
	if c == nil {
		// Starting or reconnecting: the call waits for the connection,
		// within its own timeout, rather than fail at once.
		if c = s.awaitNewConn(callCtx, nil); c == nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("call of %s on MCP server %q cancelled while the server was connecting: %w", t.name, s.name, ctx.Err())
			}
			return nil, s.notConnectedError()
		}
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	var tok int64 // 0: no progress token is sent
	if tool.WantsProgress(ctx) {
		tok = s.m.progressToken(ctx)
		defer s.m.releaseToken(tok)
	}
	start := time.Now()
	res, err := t.call(callCtx, c, tok, args)
	if errors.Is(err, sdk.ErrSessionMissing) {
		if c2 := s.awaitNewConn(callCtx, c); c2 != nil {
			res, err = t.call(callCtx, c2, tok, args)
		}
	}
	s.record(time.Since(start), err != nil || res.IsError)
	if err != nil {
		if uerr := s.urlElicitation(ctx, err, toolname.Qualified(s.name, t.name), "call again"); uerr != nil {
			return nil, uerr
		}
		return nil, t.callError(ctx, callCtx, c, err)
	}
	return res, nil
}

func (t *mcpTool) call(ctx context.Context, c *conn, tok int64, args json.RawMessage) (*tool.Result, error) {
	c.inflight.Add(1)
	defer c.inflight.Add(-1)
	params := &sdk.CallToolParams{Name: t.name, Arguments: args}
	if tok != 0 {
		params.SetProgressToken(tok)
	}
	return c.cs.CallTool(ctx, params)
}

// callError says why a call on connection c failed, for the person: a
// stdio server that died during the call is named with its exit status
// and the last lines of its stderr rather than the pipe error the SDK saw
// ("read |0: file already closed").
func (t *mcpTool) callError(ctx, callCtx context.Context, c *conn, err error) error {
	e := t.describeCallError(ctx, callCtx, c, err)
	return &maskedError{msg: t.s.mask(e.Error()), err: e}
}

// maskedError is an error whose text has the server's secrets masked; it
// still unwraps to the original.
type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }

func (t *mcpTool) describeCallError(ctx, callCtx context.Context, c *conn, err error) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("call of %s on MCP server %q cancelled: %w", t.name, t.s.name, ctx.Err())
	case errors.Is(callCtx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%s on MCP server %q did not answer within %s (the server's timeout); the call was cancelled: %w",
			t.name, t.s.name, t.s.callTimeout, err)
	}
	if c.proc != nil {
		c.proc.awaitExit() // at most 200 ms: a crash shows as a closed pipe first
		if d := c.proc.exitDescription(); d != "" {
			msg := fmt.Sprintf("MCP server %q stopped during the call of %s: the server process %s", t.s.name, t.name, d)
			if note := c.proc.stderrNote(); note != "" {
				msg += " (" + note + ")"
			}
			return fmt.Errorf("%s; otter will try to start it again: %w", msg, err)
		}
	}
	switch {
	case errors.Is(err, sdk.ErrConnectionClosed):
		return fmt.Errorf("MCP server %q disconnected during the call of %s: %w", t.s.name, t.name, err)
	}
	return fmt.Errorf("calling %s on MCP server %q: %w", t.name, t.s.name, err)
}

// awaitNewConn waits until the server has a connection other than old.
func (s *server) awaitNewConn(ctx context.Context, old *conn) *conn {
	for {
		ch := s.m.changedChan()
		s.m.mu.Lock()
		closed := s.m.closed
		s.m.mu.Unlock()
		s.mu.Lock()
		state, cur := s.state, s.cur
		s.mu.Unlock()
		switch {
		case closed:
			return nil
		case state == servers.StateConnected && cur != nil && cur != old:
			return cur
		case state == servers.StateIdle:
			s.startIfIdle() // a call of a tool of a server that went idle again
			continue
		case state == servers.StateFailed || state == servers.StateNeedsAuth || state == servers.StateDisabled:
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil
		}
	}
}
