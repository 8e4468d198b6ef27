package config

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"

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
