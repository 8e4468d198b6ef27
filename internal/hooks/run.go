package hooks

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/otter-sh/otter/internal/tool"
)

// Input is the JSON object a hook reads on stdin, with Claude Code's field
// names. Fields that do not apply to an event are left out.
type Input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path,omitempty"`
	CWD            string `json:"cwd"`
	HookEventName  Event  `json:"hook_event_name"`
	PermissionMode string `json:"permission_mode,omitempty"`

	// Tool events.
	ToolName     string          `json:"tool_name,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Error        string          `json:"error,omitempty"` // PostToolUseFailure

	// UserPromptSubmit.
	Prompt string `json:"prompt,omitempty"`
	// Stop: true when the agent is already going on because of a Stop hook,
	// so that a hook can let it stop this time.
	StopHookActive bool `json:"stop_hook_active"`
	// SessionStart: "startup", "resume", "clear" or "compact".
	Source string `json:"source,omitempty"`
	// PreCompact: "manual" or "auto", and the user's instructions.
	Trigger            string `json:"trigger,omitempty"`
	CustomInstructions string `json:"custom_instructions,omitempty"`
	// SessionEnd: why ("clear", "prompt_input_exit", "other").
	Reason string `json:"reason,omitempty"`
	// Notification.
	Message          string `json:"message,omitempty"`
	NotificationType string `json:"notification_type,omitempty"`
}

// Env is what a hook runs with besides its input.
type Env struct {
	// ProjectDir is the project's directory (the working directory outside
	// a project), given as OTTER_PROJECT_DIR and CLAUDE_PROJECT_DIR.
	ProjectDir string
	// Dir is the directory the command runs in; "" means ProjectDir.
	Dir string
	// MaxOutputChars caps what is kept of a hook's stdout and of its stderr
	// (a block reason, context for the model), as [tools] max_output_chars
	// caps a tool's result; 0 means tool.DefaultMaxOutputChars. The whole
	// of a longer output goes to a file in SpillDir ("": the temporary
	// directory's otter-outputs), which the cut text names.
	MaxOutputChars int
	SpillDir       string
}

// Outcome is what the hooks of one event decided, together.
type Outcome struct {
	// Block is true when a hook exited 2 or decided "block" (or denied a
	// tool call): the tool call is not made, the prompt is not sent, the
	// agent does not stop (Stop). Reason says why, in the hooks' words.
	Block  bool
	Reason string
	// Permission is a PreToolUse hook's permissionDecision: "allow" (run
	// without asking; a deny rule of the user's still refuses), "deny"
	// (Block is set too) or "ask"; "" when no hook
	// decided. When hooks disagree, deny wins over ask, ask over allow.
	Permission       string
	PermissionReason string
	// Context is text for the model: additionalContext, and the plain
	// stdout of UserPromptSubmit and SessionStart hooks.
	Context []string
	// Halt is a hook's "continue": false — the agent stops after this
	// event; HaltReason is for the user.
	Halt       bool
	HaltReason string
	// Messages are systemMessage texts for the user.
	Messages []string
	// Failures are hooks that failed without blocking: a status other than
	// 0 and 2, a timeout, a command that could not start. The user is told.
	Failures []Failure
	// Ran counts the hooks that ran.
	Ran int
}

// Failure is a hook that failed without blocking.
type Failure struct {
	Command  string
	Source   string
	ExitCode int  // -1 when it did not exit by itself
	TimedOut bool // killed, with its process group, at its timeout
	Timeout  time.Duration
	Stderr   string
	Err      error // when it could not be started
	// Unread is set when the hook printed a JSON answer longer than otter
	// reads (Env.MaxOutputChars), so it was not read: the note saying how
	// long it was and where the whole of it is.
	Unread string
}

func (f Failure) String() string {
	switch {
	case f.TimedOut:
		return fmt.Sprintf("hook %q ran past its %s timeout and was stopped", f.Command, f.Timeout)
	case f.Err != nil:
		return fmt.Sprintf("hook %q could not run: %v", f.Command, f.Err)
	case f.Unread != "":
		return fmt.Sprintf("hook %q printed a JSON answer longer than otter reads, so it was not read: %s", f.Command, f.Unread)
	}
	s := fmt.Sprintf("hook %q exited %d", f.Command, f.ExitCode)
	if msg := strings.TrimSpace(f.Stderr); msg != "" {
		s += ": " + msg
	}
	return s
}

// Run runs the hooks that match ev with in, in parallel, and returns what
// they decided together. It returns when every hook has exited or been
// stopped (each at its timeout; all of them when ctx ends).
func (s *Set) Run(ctx context.Context, ev Event, in Input, env Env) Outcome {
	cmds := s.Matching(ev, in)
	if len(cmds) == 0 {
		return Outcome{}
	}
	in.HookEventName = ev
	stdin, err := json.Marshal(in)
	if err != nil { // only fails on a RawMessage that is not JSON
		return Outcome{Failures: []Failure{{Command: cmds[0].Command, Err: fmt.Errorf("encode the hook input: %w", err)}}}
	}
	results := make([]result, len(cmds))
	var wg sync.WaitGroup
	for i, c := range cmds {
		wg.Go(func() { results[i] = runOne(ctx, c, stdin, env) })
	}
	wg.Wait()
	var out Outcome
	for i, r := range results {
		out.add(ev, cmds[i], r)
	}
	return out
}

// result is how one hook ended.
type result struct {
	exit   int    // -1: did not exit by itself
	stdout string // cut to Env.MaxOutputChars, with a note naming the spill file
	stderr string // the same
	// stdoutCut is the note of a stdout that ran past the cap, "" when it
	// did not: then it is not read as a JSON answer.
	stdoutCut string
	timedOut  bool
	timeout   time.Duration
	err       error // could not start
}

func runOne(ctx context.Context, c Command, stdin []byte, env Env) result {
	timeout := cmp.Or(c.Timeout, DefaultTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", c.Command)
	cmd.Dir = cmp.Or(env.Dir, env.ProjectDir)
	cmd.Env = append(os.Environ(), "OTTER_PROJECT_DIR="+env.ProjectDir, "CLAUDE_PROJECT_DIR="+env.ProjectDir)
	cmd.Stdin = bytes.NewReader(stdin)
	// A hook's answer is a short JSON object or a line; a chatty script
	// must not grow otter's memory: each stream is kept up to the cap of a
	// tool's result, the whole of a longer one spilled to a file that the
	// cut text names.
	stdout := tool.NewCapture(env.MaxOutputChars, env.SpillDir)
	stderr := tool.NewCapture(env.MaxOutputChars, env.SpillDir)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// At the timeout the whole process group goes, so that a script's
	// children (a sleep, a curl) do not outlive it.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A grandchild that keeps stdout open must not hold Wait forever.
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	_, _ = stdout.Close(), stderr.Close() // Text says what could not be saved
	r := result{exit: -1, stdout: stdout.Text(), stdoutCut: stdout.Note(), stderr: stderr.Text(), timeout: timeout}
	if cmd.ProcessState != nil {
		r.exit = cmd.ProcessState.ExitCode()
	}
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && r.exit != 0 && r.exit != 2:
		r.timedOut = true
	case cmd.ProcessState == nil && err != nil:
		r.err = err
	}
	if cmd.Process != nil {
		// The script exited but may have left children in its group.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	return r
}

// hookOutput is the JSON a hook may print on stdout when it exits 0.
type hookOutput struct {
	Continue       *bool  `json:"continue"`
	StopReason     string `json:"stopReason"`
	SystemMessage  string `json:"systemMessage"`
	Decision       string `json:"decision"` // "block"; PreToolUse's older "approve"
	Reason         string `json:"reason"`
	SpecificOutput *struct {
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
		AdditionalContext        string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// add folds one hook's result into o.
func (o *Outcome) add(ev Event, c Command, r result) {
	o.Ran++
	switch {
	case r.timedOut || r.err != nil:
		o.Failures = append(o.Failures, Failure{Command: c.Command, Source: c.Source, ExitCode: r.exit,
			TimedOut: r.timedOut, Timeout: r.timeout, Stderr: r.stderr, Err: r.err})
		return
	case r.exit == 2:
		o.block(strings.TrimSpace(r.stderr), c)
		return
	case r.exit != 0:
		o.Failures = append(o.Failures, Failure{Command: c.Command, Source: c.Source, ExitCode: r.exit, Stderr: r.stderr})
		return
	}
	text := strings.TrimSpace(r.stdout)
	if r.stdoutCut != "" && strings.HasPrefix(text, "{") {
		// A JSON answer cut short cannot be read: neither a decision nor
		// context, and the user is told.
		o.Failures = append(o.Failures, Failure{Command: c.Command, Source: c.Source, ExitCode: r.exit, Unread: r.stdoutCut})
		return
	}
	var out hookOutput
	if !strings.HasPrefix(text, "{") || json.Unmarshal([]byte(text), &out) != nil {
		// Plain text: context for the events whose stdout the model reads.
		if text != "" && (ev == UserPromptSubmit || ev == SessionStart) {
			o.Context = append(o.Context, text)
		}
		return
	}
	if out.Continue != nil && !*out.Continue {
		o.Halt = true
		o.HaltReason = joinReason(o.HaltReason, out.StopReason)
	}
	if out.SystemMessage != "" {
		o.Messages = append(o.Messages, out.SystemMessage)
	}
	if out.Decision == "block" {
		o.block(out.Reason, c)
	}
	if ev == PreToolUse && out.Decision == "approve" {
		o.permit("allow", out.Reason)
	}
	if so := out.SpecificOutput; so != nil {
		if ev == PreToolUse && so.PermissionDecision != "" {
			o.permit(so.PermissionDecision, so.PermissionDecisionReason)
			if so.PermissionDecision == "deny" {
				o.block(so.PermissionDecisionReason, c)
			}
		}
		if so.AdditionalContext != "" {
			o.Context = append(o.Context, so.AdditionalContext)
		}
	}
}

func (o *Outcome) block(reason string, c Command) {
	o.Block = true
	if reason == "" {
		reason = fmt.Sprintf("blocked by hook %q", c.Command)
	}
	o.Reason = joinReason(o.Reason, reason)
}

// permissionRank orders decisions: the stricter one wins.
var permissionRank = map[string]int{"allow": 1, "ask": 2, "deny": 3}

func (o *Outcome) permit(decision, reason string) {
	if permissionRank[decision] > permissionRank[o.Permission] {
		o.Permission, o.PermissionReason = decision, reason
	}
}

func joinReason(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}
