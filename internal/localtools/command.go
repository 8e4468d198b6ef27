package localtools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/projectfile"
	"github.com/otter-sh/otter/internal/sandbox"
	"github.com/otter-sh/otter/internal/secret"
	"github.com/otter-sh/otter/internal/shellline"
	"github.com/otter-sh/otter/internal/tool"
)

// Timeouts of run_command.
const (
	DefaultTimeout = 2 * time.Minute
	MaxTimeout     = 10 * time.Minute
	// maxWait bounds command_output's wait_ms.
	maxWait = 10 * time.Minute
)

// splitCommands returns the simple commands of a bash command line as
// written — each part of its pipelines and lists (;, &&, ||, |, &), and
// those inside $(…), backquotes, <(…), subshells, functions and
// conditionals — or why it cannot be split (it does not parse).
func splitCommands(line string) ([]string, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return nil, err
	}
	var out []string
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				out = append(out, strings.TrimSpace(line[n.Pos().Offset():n.End().Offset()]))
			}
		case *syntax.DeclClause:
			out = append(out, strings.TrimSpace(line[n.Pos().Offset():n.End().Offset()]))
		}
		return true
	})
	return out, nil
}

// subcommanded are the programs whose second word names what they do
// ("git status", "npm run"): a rule for the session covers both words.
var subcommanded = []string{"git", "npm", "pnpm", "yarn", "bun", "npx", "go", "cargo", "docker", "kubectl", "make", "pip", "uv", "gh", "dotnet", "mvn", "gradle", "terraform", "helm", "brew", "apt", "systemctl"}

// prefixOf is the prefix of a command an answer "for this session"
// allows: its program, with its subcommand for the programs that have
// them; "" for a command that does not start with a plain word (an
// assignment, a variable).
func prefixOf(command string) string {
	words := strings.Fields(command)
	if len(words) == 0 || strings.ContainsAny(words[0], "=$`\"'(){}") {
		return ""
	}
	if len(words) > 1 && slices.Contains(subcommanded, words[0]) && !strings.HasPrefix(words[1], "-") &&
		!strings.ContainsAny(words[1], "=$`\"'(){}/.") {
		return words[0] + " " + words[1]
	}
	return words[0]
}

func runCommandDef() def {
	type input struct {
		Command    string
		TimeoutMS  int  `json:"timeout_ms"`
		Background bool `json:"background"`
	}
	return def{
		name:  NameRunCommand,
		title: "Run a command",
		description: "Run a shell command with bash -c in the working directory and return its output (stdout and stderr together) and exit status. " +
			"It times out after 2 minutes unless timeout_ms says otherwise (at most 10 minutes). A long output is cut, and the whole of it saved to a file the result names. " +
			"background: true starts it and returns an id at once (for a server, a watcher, a long build); command_output reads what it printed. " +
			"Commands run in a sandbox: they write only in the project, the temporary directory and package caches, and cannot read the user's secrets. " +
			"Prefer read_file, find_files, search_files and edit_file to cat, find, grep and sed. The user is asked before a command runs.",
		schema: `{"type":"object","properties":{` +
			`"command":{"type":"string","description":"the command line, as bash reads it"},` +
			`"timeout_ms":{"type":"integer","minimum":1,"maximum":600000,"description":"stop it after this many milliseconds; default 120000"},` +
			`"background":{"type":"boolean","description":"start it and return an id at once; command_output reads its output"}},` +
			`"required":["command"],"additionalProperties":false}`,
		group: "command",
		gate: func(t *Tools, _ context.Context, _ *State, args json.RawMessage) tool.Gate {
			in, _ := decode[input](args)
			return gateCommand(t.options(), in.Command)
		},
		run: func(t *Tools, ctx context.Context, st *State, args json.RawMessage) (*tool.Result, error) {
			in, err := decode[input](args)
			if err != nil {
				return errorResult("run_command: %v", err), nil
			}
			if s := t.options().Sandbox; s != nil && s.Refused != "" {
				return errorResult("no command runs: %s", s.Refused), nil
			}
			timeout := DefaultTimeout
			if in.TimeoutMS > 0 {
				timeout = min(time.Duration(in.TimeoutMS)*time.Millisecond, MaxTimeout)
			}
			if in.Background {
				return startBackground(t.options(), st, in.Command, time.Duration(in.TimeoutMS)*time.Millisecond), nil
			}
			res, refused := runCommand(ctx, t.options(), in.Command, timeout)
			if refused == "" {
				return res, nil
			}
			return runUnconfined(ctx, t.options(), st, in.Command, timeout, refused, res), nil
		},
	}
}

// gateCommand is run_command's question: always asked (unless rules or
// the session allow every part), with each part, and the rules an answer
// for the session adds.
func gateCommand(o Options, command string) tool.Gate {
	if s := o.Sandbox; s != nil && s.Refused != "" {
		return tool.Gate{} // it fails at once: see runRefused
	}
	g := tool.Gate{Ask: true, Reason: "it runs a command"}
	if s := o.Sandbox; s == nil || s.Launcher == "" {
		off := "the sandbox is off"
		if s != nil && s.Off != "" {
			off = s.Off
		}
		g.Reason += " outside the sandbox (" + off + ")"
	}
	cmds, err := splitCommands(command)
	if err != nil {
		g.Unsplit = err.Error()
		g.Reason += "; otter could not split it into its commands (" + err.Error() + ")"
		return g
	}
	g.Commands = cmds
	if g.Commands == nil {
		g.Commands = []string{}
	}
	for _, c := range cmds {
		if p := prefixOf(c); p != "" {
			r := NameRunCommand + "(" + p + ":*)"
			if !slices.Contains(g.Rules, r) {
				g.Rules = append(g.Rules, r)
			}
		}
	}
	if g.Rules == nil {
		g.Rules = []string{}
	}
	return g
}

// commandEnv is a command's environment: otter's, less the variables
// whose names say they hold a secret (OPENAI_API_KEY, GITHUB_TOKEN,
// AWS_SECRET_ACCESS_KEY, SSH_AUTH_SOCK), with pagers that do not wait.
func commandEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if secret.SensitiveKey(name) {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0")
}

// shellOptions are how a command runs: bash in the working directory,
// through the sandbox launcher when there is one.
func (o Options) shellOptions() shellline.Options {
	so := shellline.Options{Shell: "bash", Dir: o.Dir, Env: commandEnv(), MaxBytes: o.MaxOutputChars, SpillDir: o.SpillDir}
	if s := o.Sandbox; s != nil && s.Launcher != "" {
		so.Wrap = func(path string, argv []string) (string, []string, error) {
			return sandbox.Command(s.Launcher, s.Policy, path, argv[0], argv[1:])
		}
		if s.Policy.Namespaced() {
			so.Prepare = func(cmd *exec.Cmd) (func(), error) {
				iso, err := sandbox.Isolate(cmd, s.Policy)
				if err != nil {
					return nil, err
				}
				return func() { iso.Close() }, nil
			}
		}
	}
	return so
}

// runCommand runs command in the foreground. refused, when the sandbox
// refused the command something it could have been allowed (not otter's
// own folders), says what, for the person to be asked whether it may run
// once outside (runUnconfined).
func runCommand(ctx context.Context, o Options, command string, timeout time.Duration) (r *tool.Result, refused string) {
	run, err := shellline.Start(command, o.shellOptions())
	if err != nil {
		return errorResult("could not start the command: %v", err), ""
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res := run.Wait(tctx)
	if ctx.Err() != nil {
		return errorResult("the command was stopped: %v\n%s", ctx.Err(), res.Output), ""
	}
	var b strings.Builder
	b.WriteString(res.Output)
	if res.Output != "" && !strings.HasSuffix(res.Output, "\n") {
		b.WriteByte('\n')
	}
	failed := false
	switch {
	case res.Stopped:
		failed = true
		fmt.Fprintf(&b, "[timed out after %s, and was stopped: give a longer timeout_ms (at most %s), or run it with background: true]", timeout, MaxTimeout)
	case res.Signal != "":
		failed = true
		fmt.Fprintf(&b, "[killed by %s after %s]", res.Signal, age(res.Duration))
	default:
		failed = res.ExitCode != 0
		fmt.Fprintf(&b, "[exit %d after %s]", res.ExitCode, age(res.Duration))
	}
	hint, own := o.refusal(res.Output)
	if hint != "" {
		b.WriteString("\n[" + hint + "]")
	}
	r = tool.TextResult(b.String())
	r.IsError = failed
	if failed && hint != "" && !own {
		refused = hint
	}
	return r, refused
}

// runUnconfined asks the person whether command, which the sandbox
// refused (refused says what), may run once outside it, and runs it so if
// they say yes; otherwise the refused run's result stands. Nobody to ask
// (otter -p): the refusal stands.
func runUnconfined(ctx context.Context, o Options, st *State, command string, timeout time.Duration, refused string, res *tool.Result) *tool.Result {
	st.mu.Lock()
	askFn := st.unconfined
	st.mu.Unlock()
	if askFn == nil {
		return res
	}
	args, _ := json.Marshal(map[string]string{"command": command})
	d, err := askFn(ctx, ask.Permission{Tool: NameRunCommand, Arguments: args, Commands: []string{command},
		Reason: refused + "; run this command once outside the sandbox?", OnceOnly: true, Unconfined: true, Destructive: true})
	if err != nil || d == ask.Deny {
		return res
	}
	free := o
	free.Sandbox = nil
	out, _ := runCommand(ctx, free, command, timeout)
	out.Content = append([]sdk.Content{&sdk.TextContent{Text: "[run outside the sandbox, as the person allowed once]\n"}}, out.Content...)
	return out
}

// refusal says what the sandbox refused a command that printed output,
// and how to allow it: "" when it refused nothing that can be told. own:
// what it refused is otter's own folder, which no command may reach.
func (o Options) refusal(output string) (hint string, own bool) {
	s := o.Sandbox
	if s == nil || s.Launcher == "" {
		return "", false
	}
	path := sandbox.RefusedPath(strings.Split(output, "\n"))
	if path == "" {
		return "", false
	}
	where := ""
	if s.ConfigAt != "" {
		where = " in " + s.ConfigAt
	}
	for _, d := range s.Own {
		if d != "" && projectfile.Inside(d, path) {
			return fmt.Sprintf("the sandbox refused %s: commands do not reach otter's own folder %s (its keys, sessions and tokens)", path, d), true
		}
	}
	if d := sandbox.SecretOf(s.Home, path); d != "" {
		return fmt.Sprintf("the sandbox refused %s: commands do not read your secrets (%s); if commands need it, add read = [%q] to [sandbox] commands%s", path, d, d, where), false
	}
	for _, w := range s.Policy.Write {
		if rw, err := filepath.EvalSymlinks(w); err == nil && projectfile.Inside(rw, path) || projectfile.Inside(w, path) {
			return "", false // writable: an ordinary permission error
		}
	}
	return fmt.Sprintf("the sandbox refused %s: commands write only in the project, the temporary directory and package caches; if commands need to write there, add write = [%q] to [sandbox] commands%s",
		path, filepath.Dir(path), where), false
}

// startBackground starts command in the background and returns its id.
func startBackground(o Options, st *State, command string, timeout time.Duration) *tool.Result {
	so := o.shellOptions()
	run, err := shellline.Start(command, so)
	if err != nil {
		return errorResult("could not start the command: %v", err)
	}
	st.mu.Lock()
	st.nextJob++
	j := &job{id: fmt.Sprintf("cmd-%d", st.nextJob), command: command, run: run, started: time.Now()}
	st.jobs[j.id] = j
	st.mu.Unlock()
	if timeout > 0 {
		t := time.AfterFunc(min(timeout, MaxTimeout), run.Stop)
		go func() { <-run.Done(); t.Stop() }()
	}
	return tool.TextResult(fmt.Sprintf("Started in the background as %s. command_output {\"id\": %q} reads what it prints, and says when it ends.", j.id, j.id))
}

func commandOutputDef() def {
	return def{
		name:  NameCommandOutput,
		title: "Read a background command's output",
		description: "Read what a command started with run_command background: true printed since the last read, and whether it has ended (with its exit status). " +
			"wait_ms waits up to that long for it to end first (at most 10 minutes); stop: true stops it.",
		schema: `{"type":"object","properties":{` +
			`"id":{"type":"string","description":"the id run_command returned"},` +
			`"wait_ms":{"type":"integer","minimum":0,"maximum":600000,"description":"wait up to this long for the command to end"},` +
			`"stop":{"type":"boolean","description":"stop the command (and everything it started)"}},` +
			`"required":["id"],"additionalProperties":false}`,
		readOnly: true,
		group:    "basic",
		run: func(t *Tools, ctx context.Context, st *State, args json.RawMessage) (*tool.Result, error) {
			in, err := decode[struct {
				ID     string
				WaitMS int `json:"wait_ms"`
				Stop   bool
			}](args)
			if err != nil {
				return errorResult("command_output: %v", err), nil
			}
			return commandOutput(ctx, t.options(), st, in.ID, time.Duration(in.WaitMS)*time.Millisecond, in.Stop), nil
		},
	}
}

func commandOutput(ctx context.Context, o Options, st *State, id string, wait time.Duration, stop bool) *tool.Result {
	st.mu.Lock()
	j := st.jobs[id]
	var ids []string
	for k := range st.jobs {
		ids = append(ids, k)
	}
	st.mu.Unlock()
	if j == nil {
		slices.Sort(ids)
		known := "none was started in this conversation"
		if len(ids) > 0 {
			known = "the ids are " + strings.Join(ids, ", ")
		}
		return errorResult("no background command has the id %q: %s", id, known)
	}
	if stop {
		j.run.Stop()
		<-j.run.Done()
	} else if wait > 0 {
		t := time.NewTimer(min(wait, maxWait))
		select {
		case <-j.run.Done():
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	st.mu.Lock()
	text, next := j.run.Since(j.read)
	j.read = next
	st.mu.Unlock()
	var b strings.Builder
	b.WriteString(text)
	if text != "" && !strings.HasSuffix(text, "\n") {
		b.WriteByte('\n')
	}
	res, over := j.run.Result()
	switch {
	case !over:
		fmt.Fprintf(&b, "[%s is still running, for %s]", id, age(time.Since(j.started)))
	case res.Stopped:
		fmt.Fprintf(&b, "[%s was stopped after %s]", id, age(res.Duration))
	case res.Signal != "":
		fmt.Fprintf(&b, "[%s was killed by %s after %s]", id, res.Signal, age(res.Duration))
	default:
		fmt.Fprintf(&b, "[%s ended: exit %d after %s]", id, res.ExitCode, age(res.Duration))
	}
	if over {
		if hint, _ := o.refusal(res.Output); hint != "" {
			b.WriteString("\n[" + hint + "]")
		}
	}
	return tool.TextResult(b.String())
}
