// Package localtools is otter's built-in tools for the person's project:
// read_file, find_files, search_files, edit_file, write_file,
// run_command and command_output — the model reads, searches and edits
// files and runs commands in the project, as in every terminal agent.
//
// Safety is part of each tool rather than left to the caller:
//
//   - a path is relative to the working directory or absolute, and its
//     symbolic links are resolved before it is checked against the
//     project, so a link inside the project that leads out of it is
//     outside; files are opened through internal/projectfile (an
//     [os.Root] of the project, no named pipe ever waited on) and what is
//     read is capped;
//   - each tool is a tool.Gated: the reading tools ask only outside the
//     project, edit_file and write_file ask with the change as a unified
//     diff, run_command asks with its commands, each part of a chain
//     apart (parsed as bash parses it), for the [permissions] rules
//     run_command(PREFIX:*);
//   - edit_file and write_file refuse a file the model has not read, or
//     that changed on disk since it read it, and hand the file's content
//     before and after to a Checkpointer (undo) before they change it;
//   - run_command runs bash in the sandbox launcher (internal/sandbox),
//     with otter's environment less the variables named like secrets,
//     its output capped and spilled like a tool result's.
//
// What the model read and when, and its background commands, are a
// conversation's: a State, which the caller makes per conversation
// (Tools.NewState) and hands to the calls through their context
// (WithState) — two conversations of one otter (the TUI's /clear, a
// resumed session) do not share what "the model has read". A call whose
// context holds none uses the Tools' own State.
//
// It imports ask, gitignore, projectfile, sandbox, secret, shellline and
// tool of otter's packages.
package localtools

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/sandbox"
	"github.com/otter-sh/otter/internal/tool"
)

// The tools' names.
const (
	NameReadFile      = "read_file"
	NameFindFiles     = "find_files"
	NameSearchFiles   = "search_files"
	NameEditFile      = "edit_file"
	NameWriteFile     = "write_file"
	NameRunCommand    = "run_command"
	NameCommandOutput = "command_output"
)

// Names are the tools' names, in the order they are offered.
var Names = []string{NameReadFile, NameFindFiles, NameSearchFiles, NameEditFile, NameWriteFile, NameRunCommand, NameCommandOutput}

// Options configure the tools.
type Options struct {
	// Dir is the working directory: relative paths start there, and
	// commands run there.
	Dir string
	// Root is the project: inside it the reading tools run without
	// asking, and the sandbox lets commands write there. "" means Dir.
	Root string
	// Readable are more trees the reading tools read without asking:
	// otter's folder of spilled outputs, which cut results name.
	Readable []string
	// Sandbox confines commands; nil runs them unconfined.
	Sandbox *Sandbox
	// MaxOutputChars caps a command's output as a tool result is capped
	// (0: tool.DefaultMaxOutputChars); SpillDir receives the whole of a
	// longer one.
	MaxOutputChars int
	SpillDir       string
	Logger         *slog.Logger
}

// Sandbox says how commands run.
type Sandbox struct {
	// Launcher is otter's own executable, which confines itself by
	// Policy and execs bash; "" runs commands unconfined, Off says why.
	Launcher string
	Policy   sandbox.Policy
	Off      string
	// Refused, when set, says why no command runs at all (the sandbox is
	// required and cannot be applied here).
	Refused string
	// Own are otter's own folders (config, data, state, cache), kept
	// from commands; Home the user's home, whose SecretPaths are.
	Own  []string
	Home string
	// ConfigAt says where to loosen the sandbox for commands, for the
	// hint of a refusal: "[sandbox] commands in /home/me/.config/otter/config.toml:12".
	ConfigAt string
}

// Tools are the local tools of one otter: their options, and the
// background commands and reads of each conversation (State).
type Tools struct {
	mu       sync.Mutex
	opts     Options
	fallback *State
	states   []*State
	closed   bool
}

// New returns the tools, set up by o.
func New(o Options) *Tools {
	t := &Tools{}
	t.Configure(o)
	t.fallback = t.NewState()
	return t
}

// Configure replaces the options (a config reload); conversations keep
// their State and background commands.
func (t *Tools) Configure(o Options) {
	if o.Root == "" {
		o.Root = o.Dir
	}
	if o.MaxOutputChars <= 0 {
		o.MaxOutputChars = tool.DefaultMaxOutputChars
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	t.mu.Lock()
	t.opts = o
	t.mu.Unlock()
}

func (t *Tools) options() Options {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.opts
}

// Close stops every background command of every State.
func (t *Tools) Close() {
	t.mu.Lock()
	t.closed = true
	states := slices.Clone(t.states)
	t.mu.Unlock()
	for _, s := range states {
		s.stopJobs()
	}
}

// List returns the tools, to offer beside the other built-ins.
func (t *Tools) List() []tool.Tool {
	return []tool.Tool{
		t.newTool(readFileDef()), t.newTool(findFilesDef()), t.newTool(searchFilesDef()),
		t.newTool(editFileDef()), t.newTool(writeFileDef()), t.newTool(runCommandDef()), t.newTool(commandOutputDef()),
	}
}

// SystemPrompt is what the model is told of the tools and where it works.
func (t *Tools) SystemPrompt() string {
	o := t.options()
	var b strings.Builder
	fmt.Fprintf(&b, "You work in the user's project at %s", o.Root)
	if o.Dir != o.Root {
		fmt.Fprintf(&b, " (the working directory is %s; relative paths start there)", o.Dir)
	}
	b.WriteString(". Use read_file, find_files and search_files to look at it, edit_file and write_file to change files " +
		"(read a file before you edit or replace it), and run_command to run shell commands there (bash; " +
		"background: true for servers and other long commands, then command_output). " +
		"Prefer these tools over a command that does the same (cat, find, grep, sed).")
	if s := o.Sandbox; s != nil && s.Launcher != "" {
		b.WriteString(" Commands run in a sandbox: they write only in the project, the temporary directory and package caches, and cannot read the user's secrets.")
	}
	return b.String()
}

// def is one tool's definition and what it does.
type def struct {
	name, title, description string
	schema                   string
	readOnly                 bool
	group                    string // tool.Info.PermissionGroup
	// gate decides a call's question; nil asks as Info.NeedsConsent says.
	gate func(t *Tools, ctx context.Context, st *State, args json.RawMessage) tool.Gate
	run  func(t *Tools, ctx context.Context, st *State, args json.RawMessage) (*tool.Result, error)
}

type localTool struct {
	t      *Tools
	def    def
	info   tool.Info
	schema *jsonschema.Resolved
}

func (t *Tools) newTool(d def) *localTool {
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(d.schema), &s); err != nil {
		panic(fmt.Sprintf("localtools: the schema of %s: %v", d.name, err)) // a constant of this package
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("localtools: the schema of %s: %v", d.name, err))
	}
	ann := &mcp.ToolAnnotations{Title: d.title, ReadOnlyHint: d.readOnly}
	if !d.readOnly {
		f := false
		ann.DestructiveHint = &f
		if d.name == NameRunCommand {
			ann.DestructiveHint = nil // a command may do anything
		}
	}
	return &localTool{t: t, def: d, schema: rs, info: tool.Info{
		Name: d.name, Title: d.title, Description: d.description,
		InputSchema: json.RawMessage(d.schema), Annotations: ann, PermissionGroup: d.group,
	}}
}

// Info implements tool.Tool.
func (l *localTool) Info() tool.Info { return l.info }

// Call implements tool.Tool.
func (l *localTool) Call(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
	if err := l.check(args); err != nil {
		return errorResult("%v", err), nil
	}
	return l.def.run(l.t, ctx, l.t.state(ctx), args)
}

// Gate implements tool.Gated.
func (l *localTool) Gate(ctx context.Context, args json.RawMessage) tool.Gate {
	if l.def.gate == nil || l.check(args) != nil {
		// Arguments that do not fit fail at once, without a question.
		ask, reason := l.info.NeedsConsent()
		return tool.Gate{Ask: ask && l.check(args) == nil, Reason: reason}
	}
	return l.def.gate(l.t, ctx, l.t.state(ctx), args)
}

func (l *localTool) check(args json.RawMessage) error {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	var inst any
	if err := json.Unmarshal(args, &inst); err != nil {
		return fmt.Errorf("the arguments of %s are not valid JSON: %w", l.def.name, err)
	}
	if err := l.schema.Validate(inst); err != nil {
		return fmt.Errorf("the arguments do not match the input schema of %s: %s", l.def.name, strings.TrimPrefix(err.Error(), "validating root: "))
	}
	return nil
}

// errorResult is a tool result that reports a failure to the model.
func errorResult(format string, args ...any) *tool.Result {
	r := tool.TextResult(fmt.Sprintf(format, args...))
	r.IsError = true
	return r
}

// decode reads a call's arguments into v (they passed the schema).
func decode[T any](args json.RawMessage) (T, error) {
	var v T
	if len(args) == 0 {
		return v, nil
	}
	err := json.Unmarshal(args, &v)
	return v, err
}

// shown is how a path is written back to the model: relative to the
// working directory when it lies below it, else absolute.
func (o Options) shown(abs string) string {
	if rel, err := filepath.Rel(o.Dir, abs); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return abs
}

// rootOrDir is the project.
func (o Options) rootOrDir() string { return cmp.Or(o.Root, o.Dir) }
