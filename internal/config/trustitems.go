package config

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/otter-sh/otter/internal/projectfile"
)

// ItemKind is a kind of thing in a project's executable configuration:
// what trusting a project lets run or apply.
type ItemKind string

const (
	ItemServer   ItemKind = "server"   // a [[mcp.servers]] entry or a .mcp.json server
	ItemHook     ItemKind = "hook"     // one command of a [[hooks.EVENT]] group
	ItemCommand  ItemKind = "command"  // a custom slash command's file
	ItemSkill    ItemKind = "skill"    // an Agent Skill's folder
	ItemSettings ItemKind = "settings" // a project TOML file's other tables
)

// ItemState is an item against the trust in force.
type ItemState int

const (
	ItemUntrusted ItemState = iota // the project is not trusted
	ItemApproved                   // as the user saw it when trusting
	ItemNew                        // not there when the user trusted the project
	ItemChanged                    // changed since the user trusted the project
)

// TrustItem is one item of a project's executable configuration, with a
// fingerprint of its content.
type TrustItem struct {
	Kind ItemKind
	// Name is the server's name, the command as typed ("/review:pr"), the
	// skill's folder name, the hook's event and matcher ("PreToolUse
	// mcp__fs__.*"), or for settings the file's name.
	Name string
	// Detail is what it runs or applies, for the person deciding: a
	// server's command line or URL (with the names of its env and headers,
	// not their values), a hook's command, the settings' keys.
	Detail string
	File   string // where it is defined
	// Rel is File relative to the project directory, slash-separated.
	Rel   string
	Sum   string // SHA-256 of its content, hex
	State ItemState
}

// key identifies the item in a trust entry whose directory is prefix
// (slash-separated) above the project's. A hook has no name, so its
// command is part of its key: a changed hook is a new one.
func (it TrustItem) key(prefix string) string {
	name := it.Name
	if it.Kind == ItemHook {
		name += ": " + it.Detail
	}
	return fmt.Sprintf("%s %s (%s)", it.Kind, name, path.Join(prefix, it.Rel))
}

// String words the item for a list: "server fs: npx -y server-fs".
func (it TrustItem) String() string {
	s := string(it.Kind) + " " + it.Name
	if it.Detail != "" {
		s += ": " + it.Detail
	}
	return s
}

// ProjectTrust is a project's executable configuration against the trust
// in force (Config.ProjectTrust).
type ProjectTrust struct {
	Dir string // the project directory (ProjectDir); "" outside a project
	Approvals
	// Items are the project's servers, hooks, commands, skills and
	// settings, each with its State. In a trusted project, those not
	// ItemApproved are held back: they neither run nor apply.
	Items []TrustItem
}

// Pending lists the items of a trusted project that are held back because
// they were added or changed since the user trusted it.
func (t ProjectTrust) Pending() []TrustItem {
	if !t.Trusted() {
		return nil
	}
	var out []TrustItem
	for _, it := range t.Items {
		if it.State != ItemApproved {
			out = append(out, it)
		}
	}
	return out
}

// Allows reports whether the item of kind defined in file (a command's
// file, a skill's SKILL.md folder) may be used: the project is trusted and
// the item is as the user approved it.
func (t ProjectTrust) Allows(kind ItemKind, file string) bool {
	return slices.ContainsFunc(t.Items, func(it TrustItem) bool {
		return it.Kind == kind && it.File == file && it.State == ItemApproved
	})
}

// state is it against a.
func (a Approvals) state(it TrustItem, prefix string) ItemState {
	if !a.Trusted() {
		return ItemUntrusted
	}
	sum, ok := a.sums[it.key(prefix)]
	switch {
	case !ok:
		return ItemNew
	case sum != it.Sum:
		return ItemChanged
	}
	return ItemApproved
}

// prefix is where projDir is under a.Dir, slash-separated ("" when it is
// a.Dir itself): what item keys start with in a.Dir's entry.
func (a Approvals) prefix(projDir string) string {
	if !a.Trusted() {
		return ""
	}
	resolved, err := canonicalDir(projDir)
	if err != nil {
		return ""
	}
	rel, err := filepath.Rel(a.Dir, resolved)
	if err != nil || rel == "." {
		return ""
	}
	return filepath.ToSlash(rel)
}

// projectTrust lists the items of the project files among files and the
// project's commands and skills against a, and holds back, in the trusted
// files, the servers, hooks and settings a does not approve.
func projectTrust(projDir string, files []*fileData, a Approvals) ProjectTrust {
	t := ProjectTrust{Dir: projDir, Approvals: a}
	if projDir == "" {
		return t
	}
	prefix := a.prefix(projDir)
	for _, f := range files {
		if f.src.Scope == ScopeProject {
			t.Items = append(t.Items, f.holdUnapproved(projDir, prefix, a)...)
		}
	}
	for _, it := range extensionItems(projDir) {
		it.State = a.state(it, prefix)
		t.Items = append(t.Items, it)
	}
	return t
}

// holdUnapproved lists the file's items against a and, when the file
// counts (trusted), holds back those a does not approve: a server is
// marked held, a hook dropped, the other tables left out.
func (f *fileData) holdUnapproved(projDir, prefix string, a Approvals) []TrustItem {
	hold := f.src.Trusted && a.Trusted()
	base := TrustItem{File: f.src.Path, Rel: relSlash(projDir, f.src.Path)}
	var items []TrustItem
	for i := range f.servers {
		fs := &f.servers[i]
		it := base
		it.Kind, it.Name, it.Detail, it.Sum = ItemServer, fs.srv.Name, serverDetail(fs.srv), sum(fs.raw)
		it.State = a.state(it, prefix)
		fs.held = hold && it.State != ItemApproved
		items = append(items, it)
	}
	for _, ev := range slices.Sorted(maps.Keys(f.cfg.Hooks)) {
		var kept []HookGroup
		for _, g := range f.cfg.Hooks[ev] {
			name := ev
			if g.Matcher != "" {
				name += " " + g.Matcher
			}
			hooks := g.Hooks[:0:0]
			for _, h := range g.Hooks {
				it := base
				it.Kind, it.Name, it.Detail = ItemHook, name, h.Command
				it.Sum = sum(map[string]any{"matcher": g.Matcher, "type": h.Type, "command": h.Command, "timeout": h.Timeout})
				it.State = a.state(it, prefix)
				if !hold || it.State == ItemApproved {
					hooks = append(hooks, h)
				}
				items = append(items, it)
			}
			if len(hooks) > 0 {
				g.Hooks = hooks
				kept = append(kept, g)
			}
		}
		if len(kept) > 0 {
			f.cfg.Hooks[ev] = kept
		} else {
			delete(f.cfg.Hooks, ev)
		}
	}
	if settings := settingsOf(f.raw); len(settings) > 0 {
		it := base
		it.Kind, it.Name, it.Detail, it.Sum = ItemSettings, filepath.Base(f.src.Path), strings.Join(settingNames(settings), ", "), sum(settings)
		it.State = a.state(it, prefix)
		f.heldSettings = hold && it.State != ItemApproved
		items = append(items, it)
	}
	return items
}

// settingsOf is a file's keys other than its servers and hooks.
func settingsOf(raw map[string]any) map[string]any {
	out := maps.Clone(raw)
	delete(out, "hooks")
	if m, ok := out["mcp"].(map[string]any); ok {
		m = maps.Clone(m)
		delete(m, "servers")
		if len(m) == 0 {
			delete(out, "mcp")
		} else {
			out["mcp"] = m
		}
	}
	return out
}

// settingNames names the settings ("agent.model", "providers.openai",
// "permissions mcp__fs__* = allow"): names only, except permissions and
// the sandbox, since other values may be secrets while what a permission
// lets run unasked, or how far a project loosens the sandbox of the
// model's commands, is the point.
func settingNames(settings map[string]any) []string {
	var names []string
	for k, v := range settings {
		sub, ok := v.(map[string]any)
		if !ok {
			names = append(names, k)
			continue
		}
		for sk, sv := range sub {
			switch k {
			case "permissions":
				names = append(names, fmt.Sprintf("permissions %s = %v", sk, sv))
			case "sandbox":
				v, err := tomlValue(sv)
				if err != nil {
					v = fmt.Sprint(sv)
				}
				names = append(names, fmt.Sprintf("sandbox %s = %s", sk, v))
			default:
				names = append(names, k+"."+sk)
			}
		}
	}
	slices.Sort(names)
	return names
}

// serverDetail words what a server entry runs: its command line or URL,
// where, and the names (not the values, which may be secrets) of its
// environment variables and headers.
func serverDetail(s Server) string {
	what := s.URL
	if s.Command != "" {
		what = strings.TrimSpace(s.Command + " " + strings.Join(s.Args, " "))
	}
	var more []string
	if s.Cwd != "" {
		more = append(more, "in "+s.Cwd)
	}
	if len(s.Env) > 0 {
		more = append(more, "env "+strings.Join(slices.Sorted(maps.Keys(s.Env)), ", "))
	}
	if len(s.Headers) > 0 {
		more = append(more, "headers "+strings.Join(slices.Sorted(maps.Keys(s.Headers)), ", "))
	}
	if s.Enabled != nil && !*s.Enabled {
		more = append(more, "enabled = false")
	}
	// What loosens the limits otter puts on a server, for the person
	// deciding: a project must not turn them off unseen.
	if sb := s.Sandbox; sb != nil {
		switch {
		case !sb.IsEnabled():
			more = append(more, "sandbox off")
		default:
			if len(sb.Read) > 0 {
				more = append(more, "sandbox reads "+strings.Join(sb.Read, ", "))
			}
			if len(sb.Write) > 0 {
				more = append(more, "sandbox writes "+strings.Join(sb.Write, ", "))
			}
		}
	}
	if s.PinTools != nil && !*s.PinTools {
		more = append(more, "pin_tools = false")
	}
	if len(more) > 0 {
		what += " (" + strings.Join(more, "; ") + ")"
	}
	return what
}

// sum is the SHA-256 of v as JSON (map keys sorted).
func sum(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		data = fmt.Appendf(nil, "%#v", v)
	}
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

func relSlash(root, p string) string {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(rel)
}

// ProjectCommandDirs are the folders of a project's custom slash commands,
// in the order they are read (a later one's command of the same name wins).
func ProjectCommandDirs(projDir string) []string {
	return []string{filepath.Join(projDir, ".claude", "commands"), filepath.Join(projDir, ProjectDirName, "commands")}
}

// ProjectSkillDirs are the folders of a project's Agent Skills, in the
// order they are read.
func ProjectSkillDirs(projDir string) []string {
	var out []string
	for _, d := range []string{".claude", ".agents", ProjectDirName} {
		out = append(out, filepath.Join(projDir, d, "skills"))
	}
	return out
}

// Caps on what extensionItems reads, in line with what the command and
// skill loaders read.
const (
	maxItemFiles     = 1000    // command files per folder, skills per folder
	maxSkillFiles    = 200     // files of one skill taken into its fingerprint
	maxItemFileBytes = 4 << 20 // bytes of one file taken into a fingerprint
)

// extensionItems lists the project's commands (every *.md file below a
// command folder) and skills (every folder holding SKILL.md in a skill
// folder), each with a fingerprint of its content: a command's file, a
// skill's files.
func extensionItems(projDir string) []TrustItem {
	var items []TrustItem
	for _, dir := range ProjectCommandDirs(projDir) {
		n := 0
		_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.EqualFold(filepath.Ext(p), ".md") {
				return nil
			}
			if n++; n > maxItemFiles {
				return fs.SkipAll
			}
			rel, _ := filepath.Rel(dir, p)
			name := "/" + strings.ReplaceAll(strings.TrimSuffix(filepath.ToSlash(rel), filepath.Ext(rel)), "/", ":")
			it := TrustItem{Kind: ItemCommand, Name: name, File: p, Rel: relSlash(projDir, p), Sum: fileSum(p)}
			if target, _, inside, err := projectfile.Resolve(projDir, p); err == nil && !inside {
				// Trusting does not make otter read it: say so, with where
				// it leads, rather than list it as if it would be offered.
				it.Detail = "links to " + target + ", outside the project: not read"
			}
			items = append(items, it)
			return nil
		})
	}
	for _, dir := range ProjectSkillDirs(projDir) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for i, e := range entries {
			if i == maxItemFiles {
				break
			}
			sk := filepath.Join(dir, e.Name())
			if fi, err := os.Stat(filepath.Join(sk, "SKILL.md")); err != nil || !fi.Mode().IsRegular() {
				continue
			}
			items = append(items, TrustItem{Kind: ItemSkill, Name: e.Name(), File: sk, Rel: relSlash(projDir, sk), Sum: skillSum(sk)})
		}
	}
	return items
}

// fileSum is the SHA-256 of a file's content (through symlinks, as the
// loaders read it), or of the error that kept it from being read.
func fileSum(p string) string {
	data, err := readCapped(p, maxItemFileBytes)
	if err != nil {
		return sum("unreadable: " + err.Error())
	}
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// skillSum fingerprints a skill's folder: the names and contents of its
// regular files (SKILL.md and the scripts and documents it bundles, which
// the model is told to use).
func skillSum(dir string) string {
	h := sha256.New()
	n := 0
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return nil
		}
		if n++; n > maxSkillFiles {
			return fs.SkipAll
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s\x00%s\x00", filepath.ToSlash(rel), fileSum(p))
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))
}

// ProjectItems lists the executable configuration of the project dir is in
// (ProjectDir, else dir itself): what trusting it now would approve. A file
// that does not parse has no items (it runs nothing; Load reports it).
func ProjectItems(dir string) (projDir string, items []TrustItem, err error) {
	abs, err := absDir(dir)
	if err != nil {
		return "", nil, err
	}
	projDir = cmp.Or(ProjectDir(abs), abs)
	var files []*fileData
	for _, src := range projectSources(projDir) {
		if src.Scope == ScopeLocal {
			if usersLocalFile(projDir, src.Path) {
				continue
			}
			src.Scope = ScopeProject
		}
		f, errs := readConfigFile(src.Path, src.Scope, "")
		if len(errs) > 0 || f == nil {
			continue
		}
		f.src.Trusted = false
		files = append(files, f)
	}
	return projDir, projectTrust(projDir, files, Approvals{}).Items, nil
}

// projectSources are a project's config files, lowest scope first.
func projectSources(projDir string) []Source {
	return []Source{
		{Path: filepath.Join(projDir, MCPJSONName), Scope: ScopeProject},
		{Path: filepath.Join(projDir, ProjectDirName, ProjectConfigName), Scope: ScopeProject},
		{Path: filepath.Join(projDir, ProjectDirName, LocalConfigName), Scope: ScopeLocal},
	}
}
