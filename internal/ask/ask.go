// Package ask defines the questions otter's core asks a person, and the small
// interfaces a front end implements to answer them. The TUI answers with
// in-terminal forms and prompts; the headless CLI answers with a policy chosen
// by flags. The core never talks to a terminal itself.
package ask

import (
	"context"
	"encoding/json"
)

// Elicitation is an MCP server's request for input (elicitation/create).
type Elicitation struct {
	Server  string // the configured server name
	Message string
	// Mode is "form" or "url".
	Mode string
	// Schema is the requested JSON Schema (form mode): a flat object whose
	// properties are strings, numbers, integers, booleans or enums. Defaults
	// given in the schema are meant to be pre-filled.
	Schema json.RawMessage
	// URL and ID are set in url mode.
	URL string
	ID  string
}

// ElicitAction is what the person chose.
type ElicitAction string

const (
	Accept  ElicitAction = "accept"
	Decline ElicitAction = "decline"
	Cancel  ElicitAction = "cancel"
)

// ElicitReply answers an Elicitation. Content is set when Action is Accept
// in form mode.
type ElicitReply struct {
	Action  ElicitAction
	Content map[string]any
}

// Eliciter answers elicitation requests. Implementations may block for as
// long as the person needs; they must return when ctx is done.
type Eliciter interface {
	Elicit(ctx context.Context, req Elicitation) (ElicitReply, error)
}

// Login asks the person to authorize otter against a server (OAuth).
type Login struct {
	Server string
	// AuthURL is the authorization URL the browser must visit.
	AuthURL string
	// CanPasteRedirect is true when the person may paste the final redirect
	// URL instead of letting the browser reach the loopback callback.
	CanPasteRedirect bool
}

// LoginChoice is the person's answer to a Login prompt.
type LoginChoice int

const (
	LoginLater         LoginChoice = iota // do not log in now; the server stays needs-auth
	LoginOpenBrowser                      // open the browser and wait for the callback
	LoginShowURL                          // print/copy the URL and wait for the callback
	LoginPasteRedirect                    // RedirectURL holds the pasted redirect URL
)

// LoginReply answers a Login prompt.
type LoginReply struct {
	Choice      LoginChoice
	RedirectURL string // with LoginPasteRedirect
}

// LoginPrompter answers login prompts.
type LoginPrompter interface {
	Login(ctx context.Context, req Login) (LoginReply, error)
}

// Permission asks whether a tool call may run.
type Permission struct {
	Tool        string          // qualified tool name, e.g. mcp__github__create_issue
	Server      string          // "" for built-in tools
	Arguments   json.RawMessage // the arguments the model chose
	ReadOnly    bool
	Destructive bool
	// Reason says why the call needs permission, for the person: "it is
	// not read-only", "it reaches the network", "the [permissions]
	// configuration says ask".
	Reason string
	// SaveTo names the file an AllowAlways answer is saved to, for the
	// person ("~/.config/otter/config.toml"); "" when not known.
	SaveTo string
	// Diff is the change the call would make to a file, as a unified diff
	// ("---"/"+++" headers, "@@" hunks, "-" old and "+" new lines, a few
	// lines of context), for the person to see before answering; "" when
	// the call changes no file.
	Diff string
	// Commands are the shell commands the call would run, each part of a
	// chain apart ("git status", "grep x"); nil when it runs none.
	Commands []string
	// Rules, when set, are what AllowSession and AllowAlways allow instead
	// of the whole tool: [permissions] keys such as "edit_file" or
	// "run_command(git status:*)" (a command starting with "git status"),
	// to word as "allow commands starting with git status for this
	// session". OnceOnly says that nothing but this call can be allowed
	// (a command otter could not split into its parts): AllowSession and
	// AllowAlways then allow this call only.
	Rules    []string
	OnceOnly bool
	// Unconfined asks to run this one call outside the sandbox, after the
	// sandbox refused it (Reason says what it refused): only a person at
	// the terminal may allow it, once; a headless policy refuses it
	// whatever it allows otherwise.
	Unconfined bool
}

// PermissionDecision is the person's answer to a Permission prompt.
type PermissionDecision int

const (
	Deny         PermissionDecision = iota
	AllowOnce                       // this call only
	AllowSession                    // this tool (or Permission.Rules), until otter exits
	AllowAlways                     // this tool (or Permission.Rules), saved to the config (Permission.SaveTo)
)

// Sampling asks whether a server may use the configured model
// (sampling/createMessage), showing what it would send.
type Sampling struct {
	Server       string
	SystemPrompt string
	Messages     []string // the text of each message, in order
	MaxTokens    int64
}

// Approver answers permission and sampling prompts.
type Approver interface {
	ApproveTool(ctx context.Context, req Permission) (PermissionDecision, error)
	ApproveSampling(ctx context.Context, req Sampling) (bool, error)
}

// Asker is everything a front end answers. The TUI implements all of it; the
// headless CLI implements it with a fixed policy.
type Asker interface {
	Eliciter
	LoginPrompter
	Approver
}
