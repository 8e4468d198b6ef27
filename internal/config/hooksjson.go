package config

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/otter-sh/otter/internal/hooks"
)

// ParseHooksJSON reads the "hooks" object of a Claude Code settings file
// (.claude/settings.json) or of a hooks.json, which has the same shape:
// {"hooks": {"PreToolUse": [{"matcher": "…", "hooks": [{"type": "command",
// "command": "…", "timeout": 10}]}]}}. Hook types other than "command" and
// events otter does not run are left out and named in skipped.
func ParseHooksJSON(data []byte, file string) (groups map[string][]HookGroup, skipped []string, err error) {
	var doc struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type    string  `json:"type"`
				Command string  `json:"command"`
				Timeout float64 `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, nil, &Error{File: file, Msg: "not a JSON settings file: " + err.Error()}
	}
	groups = map[string][]HookGroup{}
	for _, ev := range slices.Sorted(maps.Keys(doc.Hooks)) {
		if !hooks.Event(ev).Valid() {
			skipped = append(skipped, fmt.Sprintf("%s (otter has no such event)", ev))
			continue
		}
		for _, g := range doc.Hooks[ev] {
			hg := HookGroup{Matcher: g.Matcher}
			for _, h := range g.Hooks {
				if h.Type != "command" {
					skipped = append(skipped, fmt.Sprintf("%s hook of type %q (otter runs commands)", ev, h.Type))
					continue
				}
				hg.Hooks = append(hg.Hooks, HookCommand{Type: "command", Command: h.Command, Timeout: int(h.Timeout)})
			}
			if len(hg.Hooks) > 0 {
				groups[ev] = append(groups[ev], hg)
			}
		}
	}
	return groups, skipped, nil
}

// WriteHooksTOML writes groups as [[hooks.EVENT]] tables with their
// [[hooks.EVENT.hooks]] entries, events in the order they happen.
func WriteHooksTOML(w io.Writer, groups map[string][]HookGroup) error {
	bw := bufio.NewWriter(w)
	first := true
	for _, ev := range hooks.Events {
		for _, g := range groups[string(ev)] {
			if !first {
				bw.WriteString("\n")
			}
			first = false
			fmt.Fprintf(bw, "[[hooks.%s]]\n", ev)
			if g.Matcher != "" {
				m, err := tomlValue(g.Matcher)
				if err != nil {
					return err
				}
				fmt.Fprintf(bw, "matcher = %s\n", m)
			}
			for _, h := range g.Hooks {
				c, err := tomlValue(h.Command)
				if err != nil {
					return err
				}
				fmt.Fprintf(bw, "[[hooks.%s.hooks]]\ntype = \"command\"\ncommand = %s\n", ev, c)
				if h.Timeout > 0 {
					fmt.Fprintf(bw, "timeout = %d\n", h.Timeout)
				}
			}
		}
	}
	return bw.Flush()
}

// AddHooks appends groups to the config file, under a comment; it never
// rewrites what is there (hooks add up, so nothing can clash).
func AddHooks(file string, groups map[string][]HookGroup, comment string) error {
	return editConfigFile(file, true, func(file string) error {
		text, err := readTOMLFile(file)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if comment != "" {
			fmt.Fprintf(&b, "# %s\n", comment)
		}
		if err := WriteHooksTOML(&b, groups); err != nil {
			return err
		}
		out := text
		if out != "" && !bytes.HasSuffix([]byte(out), []byte("\n")) {
			out += "\n"
		}
		if out != "" {
			out += "\n"
		}
		return writeConfigFile(file, out+b.String())
	})
}

// claudeTools are the names of Claude Code's own tools, which a hook
// matcher written for it names ("Bash", "Edit|Write"). No otter tool has
// one of them: otter's built-ins are snake_case and MCP tools are named
// mcp__SERVER__TOOL.
var claudeTools = []string{"Agent", "Bash", "BashOutput", "Edit", "ExitPlanMode", "Glob", "Grep", "KillShell", "LS",
	"MultiEdit", "NotebookEdit", "NotebookRead", "Read", "SlashCommand", "Skill", "Task", "TodoWrite", "WebFetch", "WebSearch", "Write"}

// ClaudeToolMatchers returns a warning for each imported tool hook whose
// matcher names Claude Code tools: a matcher made only of them ("Bash")
// matches no otter tool, so the hook never runs; one that also names
// others ("Bash|mcp__github__.*") runs for those alone.
func ClaudeToolMatchers(groups map[string][]HookGroup) []string {
	var warnings []string
	for _, ev := range []hooks.Event{hooks.PreToolUse, hooks.PostToolUse, hooks.PostToolUseFailure} {
		for _, g := range groups[string(ev)] {
			alts := strings.Split(strings.TrimSuffix(strings.TrimPrefix(g.Matcher, "("), ")"), "|")
			var claude []string
			for _, a := range alts {
				if slices.Contains(claudeTools, strings.TrimSpace(a)) {
					claude = append(claude, strings.TrimSpace(a))
				}
			}
			if len(claude) == 0 {
				continue
			}
			what := "that is a Claude Code tool"
			if len(claude) > 1 {
				what = "those are Claude Code tools"
			}
			if len(claude) == len(alts) {
				warnings = append(warnings, fmt.Sprintf("%s matcher %q matches no otter tool: none is named %s (%s), so this hook will never run; "+
					"otter's tools are its built-ins and the MCP tools named mcp__SERVER__TOOL", ev, g.Matcher, strings.Join(claude, " or "), what))
			} else {
				warnings = append(warnings, fmt.Sprintf("%s matcher %q: no otter tool is named %s (%s); the hook runs only for the rest of the matcher",
					ev, g.Matcher, strings.Join(claude, " or "), what))
			}
		}
	}
	return warnings
}
