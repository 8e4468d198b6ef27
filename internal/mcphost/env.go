package mcphost

import (
	"runtime"
	"slices"
	"strings"
)

// A stdio server gets only what it needs from otter's environment: the
// variables named here (when otter has them), then its own env table —
// `env = { GITHUB_TOKEN = "${GITHUB_TOKEN}" }` passes a secret on purpose.
// Everything else otter's environment holds (ANTHROPIC_API_KEY,
// OPENAI_API_KEY, AWS_SECRET_ACCESS_KEY, a shell's exported tokens) stays
// out: a server is a program from the internet (`npx -y some-package`) and
// would otherwise read every key its user has exported.
//
// The list is what a program needs to run as the user on this machine
// (PATH, HOME, the user's name and shell, the terminal, the locale and
// time zone, the temporary and XDG directories), to reach the network the
// way the user does (proxies and extra CA certificates), and to let the
// package runners that start most servers (npx, uvx, pipx, bunx, docker,
// go run) find their installs and caches. Not on it: registry and index
// URLs with their credentials (NPM_TOKEN, npm_config_//…:_authToken,
// UV_INDEX_URL, PIP_INDEX_URL), which a server needs only if its own
// package lives in a private registry — pass them in its env table.
var baseEnvNames = []string{
	// The user, the machine, the terminal.
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "COLORTERM", "NO_COLOR",
	"LANG", "LANGUAGE", "TZ", "TMPDIR", "TMP", "TEMP",
	// The network as the user reaches it.
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
	"http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
	// Node: version managers and npm's own folders.
	"NVM_DIR", "NVM_BIN", "NVM_INC", "VOLTA_HOME", "FNM_DIR", "FNM_MULTISHELL_PATH", "PNPM_HOME",
	"BUN_INSTALL", "npm_config_cache", "npm_config_prefix", "NPM_CONFIG_CACHE", "NPM_CONFIG_PREFIX",
	// Python: pyenv, virtual environments, pipx and uv's folders.
	"PYENV_ROOT", "VIRTUAL_ENV", "CONDA_PREFIX", "PIPX_HOME", "PIPX_BIN_DIR",
	"UV_CACHE_DIR", "UV_TOOL_DIR", "UV_TOOL_BIN_DIR", "UV_PYTHON_INSTALL_DIR",
	// Go, Rust, Java.
	"GOROOT", "GOPATH", "GOMODCACHE", "GOCACHE", "CARGO_HOME", "RUSTUP_HOME", "JAVA_HOME",
	// Docker: which daemon, which context.
	"DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG",
	// Windows: what any program there needs to start.
	"SYSTEMROOT", "WINDIR", "COMSPEC", "PATHEXT", "APPDATA", "LOCALAPPDATA", "USERPROFILE",
	"PROGRAMDATA", "PROGRAMFILES", "PROGRAMFILES(X86)", "HOMEDRIVE", "HOMEPATH",
}

// baseEnvPrefixes are the families passed whole: the locale's categories
// and the XDG base directories.
var baseEnvPrefixes = []string{"LC_", "XDG_"}

// serverEnv is a stdio server's environment: the base variables of
// environ (otter's, os.Environ's form), then own (the server's env
// table), whose values win.
func serverEnv(environ []string, own map[string]string) []string {
	env := make([]string, 0, len(baseEnvNames)+len(own))
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if ok && passedToServers(name) {
			env = append(env, kv)
		}
	}
	names := make([]string, 0, len(own))
	for k := range own {
		names = append(names, k)
	}
	slices.Sort(names) // a stable order, for a reader of /proc/PID/environ
	for _, k := range names {
		env = append(env, k+"="+own[k])
	}
	return env
}

// passedToServers says whether otter's variable name reaches stdio
// servers without their env table naming it.
func passedToServers(name string) bool {
	if runtime.GOOS == "windows" {
		name = strings.ToUpper(name) // names are case-insensitive there
	}
	if slices.Contains(baseEnvNames, name) {
		return true
	}
	for _, p := range baseEnvPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
