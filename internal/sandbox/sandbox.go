// Package sandbox confines the programs otter starts on a user's behalf
// that it did not write — stdio MCP servers — to what they need: they may
// read the system and the user's files but the user's secrets, write only
// in the project, the temporary directory and the caches their package
// runners use, and (unless told otherwise) reach the network.
//
// On Linux it uses Landlock (through go-landlock): otter starts itself as
// a launcher (Command), which restricts itself and then execs the program
// (Main), so the restriction holds for everything the program starts. A
// Landlock ruleset only grants, so "all but ~/.ssh" is granted as every
// entry beside each denied path, down the path from /; the rules name the
// resolved paths, and Landlock checks the file a path leads to, so a
// symbolic link into ~/.ssh from a granted folder reads nothing.
//
// Network false adds a seccomp filter (seccomp_linux.go) under which only
// Unix sockets open, since Landlock confines TCP alone; a host list
// (Policy.ProxyPort) lets TCP through to otter's filtering proxy only.
// Both run the program in a network namespace of its own where the
// system allows it (Policy.Isolated, isolate_linux.go), since Landlock's
// TCP rule names a port, not an address.
//
// On macOS the same policy is a Seatbelt profile run by sandbox-exec
// (seatbelt.go, sandbox_darwin.go), off until a person opts in: it has not
// run on a Mac yet.
//
// Where the sandbox is missing (an old kernel, another system) Available
// says why, and the caller decides to run the program unconfined or not
// at all.
//
// It imports nothing of otter's.
package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// LauncherArg is the first argument that makes otter's binary the
// launcher: `otter LauncherArg POLICY PATH ARGV0 ARGS…`. It is not a
// command a person types.
const LauncherArg = "__otter-sandbox-exec"

// Policy is what a confined program may do.
type Policy struct {
	// Read are the trees it may read (and execute), Write those it may
	// also write; Deny are trees inside them it may not touch at all (the
	// user's secrets). Deny wins: a path in Read or Write that lies in a
	// Deny tree is not granted.
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	// Network false lets no connection out nor listener in: no TCP
	// (Landlock) and no socket but a Unix one (seccomp: no UDP, raw,
	// netlink or SCTP socket, which Landlock does not confine).
	Network bool `json:"network"`
	// ProxyPort, with Network false, is the one TCP port the program may
	// connect to: otter's filtering proxy's, which lets it reach the hosts
	// of its list and no other. Landlock's network rules name a port, not
	// an address: unless Isolated, any local service listening on that
	// port number (on another address of this machine) is reachable too,
	// and so is that port on any remote host, should the program know its
	// address — which without DNS (no UDP) it must be given.
	ProxyPort int `json:"proxy_port,omitempty"`
	// Isolated runs the program in a network namespace of its own, with
	// only a loopback interface (isolate_linux.go: Isolate starts the
	// launcher so): with Network false it reaches nothing, and with a
	// ProxyPort only otter's proxy, which listens on 127.0.0.1:ProxyPort in
	// that namespace — no other host has that port there.
	Isolated bool `json:"isolated,omitempty"`
	// OwnUsers starts the program in a user namespace of its own (with
	// Isolated it always is): see SeparateRoot.
	OwnUsers bool `json:"own_users,omitempty"`
}

// Namespaced reports whether a program confined by p is started through
// Isolate.
func (p Policy) Namespaced() bool { return p.Isolated || p.OwnUsers }

// SecretPaths are the user's folders and files that no confined program
// reads by default: keys, cloud credentials, password stores (relative to
// the home directory).
var SecretPaths = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker",
	".netrc", ".git-credentials", ".password-store", ".npmrc", ".pypirc",
	".config/gh", ".config/op", ".local/share/keyrings",
}

// devices are the device files any program may read and write.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// runnerCaches are the folders, relative to the home directory, that a
// package runner writes its downloads and installs to, by the runner's
// command name.
var runnerCaches = map[string][]string{
	"npx":    {".npm"},
	"npm":    {".npm"},
	"pnpm":   {".local/share/pnpm", ".cache/pnpm"},
	"bunx":   {".bun"},
	"bun":    {".bun"},
	"uvx":    {".cache/uv", ".local/share/uv"},
	"uv":     {".cache/uv", ".local/share/uv"},
	"pipx":   {".local/share/pipx", ".local/pipx", ".cache/pip"},
	"docker": {".docker"},
}

// Default is the policy of a program started as command (its name as the
// config writes it: "npx", "/usr/bin/uvx") that works in the directories
// project, for a user whose home is home: read everything but
// SecretPaths and otter's own folders (own: config, data, state and
// cache, which hold keys, tokens and sessions), write in project, the
// temporary directory and the caches of command's package runner (made
// if missing, so that a first `npx -y` can fill it), network on.
func Default(home string, own, project []string, command string) Policy {
	p := Policy{Read: []string{"/"}, Network: true}
	if home != "" {
		for _, s := range SecretPaths {
			p.Deny = append(p.Deny, filepath.Join(home, s))
		}
	}
	p.Deny = append(p.Deny, own...)
	p.Write = append(p.Write, project...)
	p.Write = append(p.Write, os.TempDir())
	if home != "" {
		for _, c := range runnerCaches[filepath.Base(command)] {
			dir := filepath.Join(home, c)
			if c == ".docker" {
				continue // docker's folder holds its credentials: read through the daemon
			}
			_ = os.MkdirAll(dir, 0o755)
			p.Write = append(p.Write, dir)
		}
		// The XDG cache, which most other programs write to.
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			cache = filepath.Join(home, ".cache")
		}
		p.Write = append(p.Write, cache)
	}
	return p
}

// commandCaches are the folders, relative to the home directory, that
// the build tools and package managers a command may run write their
// downloads to (besides every runner's of runnerCaches and the XDG
// cache): Go's module cache, Cargo's registry, Maven's and Gradle's.
// Cargo's and Docker's own folders are not among them: they hold
// credentials.
var commandCaches = []string{"go/pkg/mod", ".cargo/registry", ".cargo/git", ".m2/repository", ".gradle/caches", ".gradle/wrapper"}

// ForCommands is the policy of the commands otter runs for the model
// (run_command): as Default's, but writing in the caches of every
// package runner and build tool that exist (a command may be any of them:
// npm install, go build, cargo test), none of them made.
func ForCommands(home string, own, project []string) Policy {
	p := Default(home, own, project, "")
	if home == "" {
		return p
	}
	seen := map[string]bool{}
	var rels []string
	for _, cs := range runnerCaches {
		rels = append(rels, cs...)
	}
	rels = append(rels, commandCaches...)
	if gomod := os.Getenv("GOMODCACHE"); gomod != "" {
		p.Write = append(p.Write, gomod)
	}
	for _, rel := range rels {
		if rel == ".docker" || seen[rel] {
			continue
		}
		seen[rel] = true
		if _, err := os.Stat(filepath.Join(home, rel)); err == nil {
			p.Write = append(p.Write, filepath.Join(home, rel))
		}
	}
	slices.Sort(p.Write[len(project)+1:]) // a stable order past the project and the temporary directory
	return p
}

// SecretOf is the folder of SecretPaths under home that holds path, or "".
func SecretOf(home, path string) string {
	if home == "" {
		return ""
	}
	for _, rel := range SecretPaths {
		if d := filepath.Join(home, rel); inside(path, d) {
			return d
		}
	}
	return ""
}

// deniedPath finds the path in a line where the system refused one
// ("EACCES: permission denied, open '/home/me/.ssh/id_rsa'", "cannot
// create /home/me/x: Permission denied"). Compiled at first use, not in
// the launcher's start, which never needs it (3 ms of its 10).
var deniedPath = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(/[^\s'":,()]+)`) })

// RefusedPath finds, in a confined program's output lines, the last path
// the system refused it ("permission denied", EACCES, "operation not
// permitted"), or "".
func RefusedPath(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		low := strings.ToLower(l)
		if !strings.Contains(low, "permission denied") && !strings.Contains(low, "eacces") && !strings.Contains(low, "operation not permitted") {
			continue
		}
		if m := deniedPath().FindString(l); m != "" {
			return m
		}
	}
	return ""
}

// Command returns the program and arguments that start path (argv0 and
// args) confined by p: Launcher(self) — self being otter's own executable —
// as the launcher.
func Command(self string, p Policy, path, argv0 string, args []string) (string, []string, error) {
	data, err := json.Marshal(p)
	if err != nil {
		return "", nil, err
	}
	l := Launcher(self)
	return l, append([]string{l, LauncherArg, string(data), path, argv0}, args...), nil
}

// ErrUnavailable is wrapped by Available's error and Main's when the
// system cannot confine a program.
var ErrUnavailable = errors.New("the sandbox is not available")

// Main is the launcher: args are what follows LauncherArg. It confines
// itself by the policy and execs the program; it returns only on failure,
// with the exit status to use (having said why on stderr).
func Main(args []string) int {
	if len(args) == 1 && args[0] == probeArg {
		if err := probeMain(); err != nil {
			fmt.Fprintf(os.Stderr, "otter sandbox: %v\n", err)
			return 126
		}
		return 0
	}
	if len(args) < 3 {
		fmt.Fprintln(os.Stderr, "otter sandbox: want POLICY PATH ARGV0 [ARGS…]")
		return 2
	}
	var p Policy
	if err := json.Unmarshal([]byte(args[0]), &p); err != nil {
		fmt.Fprintf(os.Stderr, "otter sandbox: the policy: %v\n", err)
		return 2
	}
	if err := confineAndExec(p, args[1], args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "otter sandbox: %v\n", err)
		return 126
	}
	return 0 // not reached: exec replaced the process
}

// inside reports whether p is dir or lies below it (both clean, absolute).
func inside(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// absolute makes each path absolute; "" and a path that cannot be made
// absolute are left out.
func absolute(paths []string) []string {
	var out []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			out = append(out, abs)
		}
	}
	return out
}

// resolve makes each path absolute and resolves its links; those that do
// not exist are left out.
func resolve(paths []string) []string {
	var out []string
	for _, abs := range absolute(paths) {
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// grant is one path a rule names, with its kind.
type grant struct {
	path  string
	dir   bool
	write bool
}

// grants lists the rules of p: each Read and Write tree, resolved, that
// holds no Deny tree; one that holds some is replaced by its entries,
// down to the denied paths, which are left out.
//
// The launcher runs this before every server starts, and a tree that holds
// a denied path may have hundreds of entries (a home in /tmp, a busy home):
// an entry that is not a symlink is already resolved (its directory is) and
// its kind comes with the listing, so it costs no system call; only a
// symlink is resolved and stat'ed (a home in /tmp with 296 neighbours, 626
// grants: 13 ms when every entry was, 1.6 ms now; TestGrants).
func grants(p Policy) []grant {
	deny := resolve(p.Deny)
	var out []grant
	var walk func(real string, isDir bool, write bool, depth int)
	walk = func(real string, isDir bool, write bool, depth int) {
		for _, d := range deny {
			if inside(real, d) {
				return
			}
		}
		holds := slices.ContainsFunc(deny, func(d string) bool { return inside(d, real) })
		if !holds || !isDir || depth > 32 {
			out = append(out, grant{path: real, dir: isDir, write: write})
			return
		}
		entries, err := os.ReadDir(real)
		if err != nil {
			return
		}
		for _, e := range entries {
			path := filepath.Join(real, e.Name())
			if e.Type()&fs.ModeSymlink == 0 {
				walk(path, e.IsDir(), write, depth+1)
				continue
			}
			if r, dir, ok := resolveOne(path); ok {
				walk(r, dir, write, depth+1)
			}
		}
	}
	for _, r := range p.Read {
		if real, dir, ok := resolveOne(r); ok {
			walk(real, dir, false, 0)
		}
	}
	for _, w := range p.Write {
		if real, dir, ok := resolveOne(w); ok {
			walk(real, dir, true, 0)
		}
	}
	return withoutCovered(out)
}

// withoutCovered leaves out each read grant that a write grant covers — on
// the same path, or on a folder above it — since writing includes reading:
// /tmp is split entry by entry for reading (it holds the home) and again
// for writing, and every rule is three system calls in the launcher.
func withoutCovered(gs []grant) []grant {
	writable := map[string]bool{} // path → whether it is a folder
	for _, g := range gs {
		if g.write {
			writable[g.path] = writable[g.path] || g.dir
		}
	}
	covered := func(p string) bool {
		if _, ok := writable[p]; ok {
			return true
		}
		for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
			if writable[dir] {
				return true
			}
			if dir == "/" || dir == "." {
				return false
			}
		}
	}
	out := gs[:0]
	for _, g := range gs {
		if g.write || !covered(g.path) {
			out = append(out, g)
		}
	}
	return out
}

// resolveOne resolves path's links and says whether the result is a
// directory; ok is false when it does not exist.
func resolveOne(path string) (real string, dir, ok bool) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", false, false
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", false, false
	}
	return real, fi.IsDir(), true
}
