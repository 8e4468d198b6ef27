// Package tui is otter's terminal user interface: a chat transcript with
// streaming markdown, the /mcp views, a tool inspector (/call), and the
// in-terminal forms that answer the core's questions (elicitation, login,
// tool permission, sampling).
//
// The package is a view over the core, as otter -p is: the model holds
// the app.Conversation it shows (and its app.App), calls them directly,
// and shows the app.Event stream a turn reports; keys in, pixels out. No
// MCP or agent logic lives here; tests run it over a real App with the
// llmtest model and fake Parts.
//
// It imports agent, app, ask, attach, config, instructions, llm, markdown,
// registry, render, schema, shellline, termtext, tool and toolname of otter's
// packages, and the Charm stack; never internal/cli nor cmd/otter, nor the
// MCP client or the session store (those are app's).
package tui

import (
	"errors"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/app"
)

// notSent reports whether err means the message never reached the model
// (app.ErrNotSent: an @-mention could not be read; agent.ErrBusy): the TUI
// gives the text back to fix.
func notSent(err error) bool {
	return errors.Is(err, app.ErrNotSent) || errors.Is(err, agent.ErrBusy)
}

// Provider describes the model provider the agent talks to.
type Provider struct {
	Name  string // the [providers.NAME] key, e.g. "anthropic"
	Model string
	// Help is set when no provider is configured: how to configure one
	// (a config snippet and the environment variables). A typed prompt is
	// answered with it.
	Help string
}

// TrustRequest asks whether to trust a project directory, or, when
// Changed, what was added to or changed in its configuration since the
// user trusted it.
type TrustRequest struct {
	Dir string
	// Changed: the project is trusted; the lists are what changed since
	// (each marked new or changed), held back until trusted again. Legacy:
	// its trust was recorded by an older otter that kept no record of
	// what the user saw.
	Changed, Legacy bool
	// Servers lists what the project would run, one line per server
	// ("name: command args (in DIR; env KEY, …)" or "name: url").
	Servers []string
	// Settings lists its hooks ("hook Stop: ./x.sh"), commands, skills and
	// other settings (by name only: values may be secrets).
	Settings []string
	// Instructions are the project's instruction files (AGENTS.md and the
	// like) the model gets once the project is trusted.
	Instructions []string
	report       app.TrustReport // what Trust approves
}

// Reloaded is a notice for UI.Notify: the configuration was reloaded
// (by a file watcher when Auto is true).
type Reloaded struct {
	Diff app.ReloadDiff
	Err  error
	Auto bool
}
