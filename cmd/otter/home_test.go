package main

import (
	"bytes"
	"os"
	"os/exec"
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

// runIn runs the otter binary bin in dir with env and returns what it
// wrote on stdout and stderr.
func runIn(bin, dir string, env []string, args ...string) (stdout, stderr string, err error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}
