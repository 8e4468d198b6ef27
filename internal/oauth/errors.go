// Package oauth is otter's side of MCP authorization: token storage, the
// browser and loopback-callback steps, and the prompts that the go-sdk's
// auth package leaves to the host.
package oauth

import "errors"

// ErrLoginRequired is returned (wrapped) when a server needs the person to
// log in and otter may not start a login on its own (e.g. at startup).
// The MCP manager shows such a server as needs-auth.
var ErrLoginRequired = errors.New("login required")
