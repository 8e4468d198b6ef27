package mcphost

// Errors: why a server is not connected, failed to start or dropped its
// connection, worded for the person who reads them and wrapping the cause.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/otter-sh/otter/internal/oauth"
)

func (s *server) notConnectedError() error {
	s.mu.Lock()
	state, reason := s.state, s.reason
	s.mu.Unlock()
	if reason == "" {
		return fmt.Errorf("MCP server %q is %s", s.name, state)
	}
	return fmt.Errorf("MCP server %q is %s: %s", s.name, state, s.mask(reason))
}

// maskErr returns err with the server's secrets masked in its text (an
// error that echoes the server's stderr or its url); it still unwraps to
// err. Every error about a server that leaves mcphost goes through it or
// through s.mask.
func (s *server) maskErr(err error) error {
	if err == nil {
		return nil
	}
	if msg := s.mask(err.Error()); msg != err.Error() {
		return &maskedError{msg: msg, err: err}
	}
	return err
}

// loginError words err, which wraps oauth.ErrLoginRequired, for the
// server's status: why a login is needed, without the SDK's layers
// ("calling initialize: sending initialize: …"). How to log in is for the
// front end to say (a command at a shell, a key in the TUI); the error
// still wraps the oauth.LoginRequiredError that tells it what it needs.
//
// The reason alone when the authorizer gave one ("the refresh token was
// revoked"): the state, needs-auth, already says a login is required, and
// front ends put the two together in their own words.
func (s *server) loginError(err error) error {
	msg := "authorization required"
	if le, ok := errors.AsType[*oauth.LoginRequiredError](err); ok && le.Reason != "" {
		msg = le.Reason
	}
	return &loginRequired{msg: msg, err: err}
}

// loginRequired is a needs-auth reason that still wraps the original error.
type loginRequired struct {
	msg string
	err error
}

func (e *loginRequired) Error() string { return e.msg }
func (e *loginRequired) Unwrap() error { return e.err }

// startupError explains why a connection attempt failed, for a person.
func (s *server) startupError(ctx, startCtx context.Context, c *conn, phase string, err error) error {
	if errors.Is(err, oauth.ErrLoginRequired) {
		return s.loginError(err)
	}
	var ce configError
	if errors.As(err, &ce) {
		return err
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("cannot connect to %s: %w; is the server running?", s.cfg.URL, syscall.ECONNREFUSED)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return fmt.Errorf("cannot connect to %s: %w", s.cfg.URL, dnsErr)
	}
	var msg string
	exited := ""
	if c.proc != nil {
		c.proc.awaitExit()
		exited = c.proc.exitDescription()
	}
	explained := true // msg says all the SDK's error would (a closed pipe, a deadline)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case exited != "" && !errors.Is(startCtx.Err(), context.DeadlineExceeded):
		msg = fmt.Sprintf("the server process %s before answering %s", exited, phase)
	case errors.Is(startCtx.Err(), context.DeadlineExceeded):
		msg = fmt.Sprintf("no answer to %s within %s (startup_timeout)", phase, s.startupTimeout)
	default:
		msg = phase + " failed"
		explained = false
	}
	if c.proc != nil {
		if note := c.proc.stderrNote(); note != "" {
			msg += "; " + note
		}
		if hint := s.sandboxHint(c.proc.tail.since(c.proc.tailStart)); hint != "" {
			msg += "; " + hint
		}
	}
	if explained {
		return explainedError{msg: msg, err: err}
	}
	return fmt.Errorf("%s: %w", msg, err)
}

// explainedError says in msg what went wrong, without the text of err
// ("connection closed: calling "initialize": client is closing: EOF"),
// which it still wraps.
type explainedError struct {
	msg string
	err error
}

func (e explainedError) Error() string { return e.msg }
func (e explainedError) Unwrap() error { return e.err }

// codeRejected is the code the go-sdk gives a request its transport could
// not deliver (jsonrpc2.ErrRejected: connection refused, HTTP errors on
// POST). It arrives as a *jsonrpc.Error but is not an answer from the server.
const codeRejected = -32005

// answeredWithError reports whether err is the server's own error answer
// (say, "method not found" for ping), which proves it is alive, rather than
// a failure to reach it.
func answeredWithError(err error) bool {
	var rpcErr *jsonrpc.Error
	return errors.As(err, &rpcErr) && rpcErr.Code != codeRejected
}

// dropError says why a live connection ended.
func (s *server) dropError(c *conn, err error) error {
	if c.proc != nil {
		c.proc.awaitExit()
		if d := c.proc.exitDescription(); d != "" {
			msg := "the server process " + d
			if note := c.proc.stderrNote(); note != "" {
				msg += " (" + note + ")"
			}
			if hint := s.sandboxHint(c.proc.tail.since(c.proc.tailStart)); hint != "" {
				msg += "; " + hint
			}
			return errors.New(msg)
		}
	}
	if err == nil {
		return errors.New("the server closed the connection")
	}
	return err
}

// configError is a connection failure caused by the configuration itself;
// its message needs no context added.
type configError struct{ error }

func (e configError) Unwrap() error { return e.error }
