package main

import (
	"errors"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/cli"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/oauth"
	"github.com/otter-sh/otter/internal/record"
	"github.com/otter-sh/otter/internal/serve"
	"github.com/otter-sh/otter/internal/tool"
)

// hint is what a person at a shell can do about err, in this command
// line's words. The core packages serve the TUI and remote MCP clients
// too, so their typed errors name no command; the front end adds it.
func hint(err error) string {
	if le, ok := errors.AsType[*oauth.LoginRequiredError](err); ok {
		return cli.LoginAdvice(le)
	}
	if e, ok := errors.AsType[*tool.HeldBackError](err); ok {
		return cli.ReviewHint(e.Server)
	}
	if e, ok := errors.AsType[*agent.TooLongError](err); ok {
		if e.NewConversationHelps() {
			return "without --continue or --resume, otter -p starts a new conversation; --model picks a model with a larger window"
		}
		return "--model picks a model with a larger window"
	}
	switch {
	case errors.Is(err, tool.ErrUnknownTool):
		return "`otter mcp tools` lists the tools offered"
	case errors.Is(err, record.ErrNotFound):
		return "`otter sessions list --all` lists them"
	case errors.Is(err, config.ErrServerExists):
		return "`otter mcp remove NAME` removes it"
	case errors.Is(err, serve.ErrPublicWithoutKeys):
		return "`otter mcp serve --http 127.0.0.1:8080` serves this machine only"
	}
	return ""
}

// explained is err's message with its hint, if it has one.
func explained(err error) string {
	msg := err.Error()
	if h := hint(err); h != "" && msg != "" {
		msg += "; " + h
	}
	return msg
}
