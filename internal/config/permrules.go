package config

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// PermissionRule is one entry of a [permissions] table and the file that
// sets it.
type PermissionRule struct {
	Pattern  string // a qualified tool name or a glob
	Decision string // "allow", "ask" or "deny"
	File     string
	Scope    Scope
	// Overridden: a file of a later scope sets the same pattern, and its
	// decision applies.
	Overridden bool
	// Held: the file is the project's and the project is not trusted, so
	// the rule does not apply (yet).
	Held bool
}

// Removable reports whether RemovePermission may take r out: it is in the
// user's config or the project's local config, the files where otter
// saves the answers "always"; not in the project's shared configuration
// nor in a file given for one run.
func (r PermissionRule) Removable() bool { return r.Scope == ScopeUser || r.Scope == ScopeLocal }

// PermissionRules lists the [permissions] entries of every file Load reads
// for opts, lowest scope first, each with where it comes from.
func PermissionRules(opts LoadOptions) ([]PermissionRule, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	projDir := ProjectDir(opts.WorkDir)
	trusted := false
	if projDir != "" {
		if a, err := opts.Paths.ApprovalsFor(projDir); err == nil {
			trusted = a.Trusted()
		}
	}
	var rules []PermissionRule
	last := map[string]int{}
	for _, src := range candidates(opts, projDir) {
		if isJSONFile(src.Path) {
			continue // .mcp.json has no permissions
		}
		if src.Scope == ScopeLocal && !usersLocalFile(projDir, src.Path) {
			src.Scope = ScopeProject
		}
		read := readBounded
		if src.Scope == ScopeFlag {
			read = readBoundedNamed
		}
		data, err := read(src.Path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("config: reading the permission rules of %s: %w", src.Path, err)
		}
		var doc struct {
			Permissions map[string]string `toml:"permissions"`
		}
		if _, err := toml.Decode(string(data), &doc); err != nil {
			return nil, fmt.Errorf("config: reading the permission rules of %s: %w", src.Path, syntaxError(src.Path, err))
		}
		patterns := make([]string, 0, len(doc.Permissions))
		for p := range doc.Permissions {
			patterns = append(patterns, p)
		}
		slices.Sort(patterns)
		for _, p := range patterns {
			if i, ok := last[p]; ok {
				rules[i].Overridden = true
			}
			last[p] = len(rules)
			rules = append(rules, PermissionRule{Pattern: p, Decision: doc.Permissions[p], File: src.Path, Scope: src.Scope,
				Held: src.Scope == ScopeProject && !trusted})
		}
	}
	return rules, nil
}

// ErrRuleNotFound is returned by RemovePermission when the file has no
// line of its own for the pattern.
var ErrRuleNotFound = errors.New("no such permission rule in the file")

// RemovePermission takes the entry for pattern out of the [permissions]
// table of file, keeping the rest of the file as it is.
func RemovePermission(file, pattern string) error {
	return editConfigFile(file, false, func(target string) error {
		data, err := readBounded(target)
		if err != nil {
			return fmt.Errorf("config: %w", err)
		}
		text := string(data)
		l := scanPositions(text).lineOf(toml.Key{"permissions", pattern}.String(), "", 0)
		if l <= 0 {
			return fmt.Errorf("config: %s: %w: %q is not a line of its own under [permissions]; edit the file by hand", file, ErrRuleNotFound, pattern)
		}
		lines := strings.SplitAfter(text, "\n")
		text = strings.Join(slices.Delete(lines, l-1, l), "")
		if _, err := toml.Decode(text, new(map[string]any)); err != nil {
			return fmt.Errorf("config: taking %q out of %s would break it (%w); edit the file by hand", pattern, file, err)
		}
		return writeConfigFile(target, text)
	})
}
