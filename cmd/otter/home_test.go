package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// otterHome is a temporary home with every XDG directory in it, as the
// environment of a real otter process.
func otterHome(t testing.TB) (home string, env []string) {
	t.Helper()
	home = t.TempDir()
	env = append(os.Environ(), "HOME="+home)
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"} {
		env = append(env, v+"="+filepath.Join(home, strings.ToLower(v)))
	}
	return home, env
}
