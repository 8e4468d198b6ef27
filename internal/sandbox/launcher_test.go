package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLauncherRunsOnlyTheCompanionBuiltWithOtter: the otter-sandbox beside
// otter is started only when its build ID is the one otter recorded; a
// stale build, a script of that name, a folder or nothing at all leave
// otter as its own launcher.
func TestLauncherRunsOnlyTheCompanionBuiltWithOtter(t *testing.T) {
	// Stand-ins: this test binary plays the companion built with otter,
	// /bin/true (not a Go binary) and a copy of another Go program (the go
	// command) play the wrong ones.
	test, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	trueBin, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(goBin, "tool", "buildid", test).Output()
	if err != nil {
		t.Fatalf("go tool buildid: %v", err)
	}
	want := strings.TrimSpace(string(out))
	if id, err := buildID(test); err != nil || id != want {
		t.Fatalf("buildID(test binary) = %q, %v; go tool buildid says %q", id, err, want)
	}

	place := func(t *testing.T, companion func(path string)) (self string) {
		dir := t.TempDir()
		self = filepath.Join(dir, "otter")
		copyFile(t, trueBin, self)
		if companion != nil {
			companion(filepath.Join(dir, CompanionName))
		}
		return self
	}
	for _, c := range []struct {
		name      string
		recorded  string
		companion func(path string)
		useIt     bool
	}{
		{"the one built with otter", want, func(p string) { copyFile(t, test, p) }, true},
		{"none beside otter", want, nil, false},
		{"another build", want, func(p string) { copyFile(t, goBin, p) }, false},
		{"not a Go program", want, func(p string) { copyFile(t, trueBin, p) }, false},
		{"a script", want, func(p string) {
			if err := os.WriteFile(p, []byte("#!/bin/sh\necho pwned\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a folder", want, func(p string) {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a FIFO", want, func(p string) {
			if err := syscall.Mkfifo(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a link to the one built with otter", want, func(p string) {
			real := filepath.Join(t.TempDir(), "elsewhere")
			copyFile(t, test, real)
			if err := os.Symlink(real, p); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"not executable", want, func(p string) { copyFile(t, test, p); _ = os.Chmod(p, 0o644) }, false},
		{"otter built without one", "", func(p string) { copyFile(t, test, p) }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func(old string) { companionBuildID = old }(companionBuildID)
			companionBuildID = c.recorded
			self := place(t, c.companion)
			wantL := self
			if c.useIt {
				wantL = filepath.Join(filepath.Dir(self), CompanionName)
			}
			if got := Launcher(self); got != wantL {
				t.Errorf("Launcher = %s, want %s", got, wantL)
			}
			exe, argv, err := Command(self, Policy{Network: true}, trueBin, "true", nil)
			if err != nil || exe != wantL || argv[0] != wantL || argv[1] != LauncherArg {
				t.Errorf("Command = %s %q, %v; want %s as the launcher", exe, argv, err, wantL)
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
}
