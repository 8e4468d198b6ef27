package tui

// AppBackend's part of the person's project: `!` lines run by
// internal/shellline, @path completion, the instruction files.

import (
	"cmp"
	"context"
	"path/filepath"
	"strings"

	"github.com/otter-sh/otter/internal/attach"
	"github.com/otter-sh/otter/internal/instructions"
	"github.com/otter-sh/otter/internal/shellline"
)

var (
	_ ShellBackend  = (*AppBackend)(nil)
	_ FileBackend   = (*AppBackend)(nil)
	_ MemoryBackend = (*AppBackend)(nil)
)

// RunShell runs a `!` line in the working directory, its output capped like
// a tool's ([tools] max_output_chars) and spilled beside tools' outputs,
// and keeps the command and its output for the next message.
func (b *AppBackend) RunShell(ctx context.Context, line string, onOutput func(string)) (shellline.Result, error) {
	res, err := shellline.Run(ctx, line, shellline.Options{
		Dir:      b.app.WorkDir,
		MaxBytes: b.app.Config.Tools.MaxOutputChars,
		SpillDir: filepath.Join(b.app.Paths.CacheDir, "outputs"),
		OnOutput: onOutput,
	})
	if err != nil {
		return res, err
	}
	b.mu.Lock()
	b.shell = append(b.shell, res.ForModel())
	b.mu.Unlock()
	return res, nil
}

// takeShellContext returns the `!` lines run since the last message, as
// context for the model, and forgets them.
func (b *AppBackend) takeShellContext() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.shell) == 0 {
		return ""
	}
	s := "\n\nShell commands the user ran (with !) before this message, and their output:\n\n" + strings.Join(b.shell, "\n\n")
	b.shell = nil
	return s
}

func (b *AppBackend) CompletePath(prefix string) []string {
	return attach.CompletePath(context.Background(), b.app.WorkDir, prefix)
}

func (b *AppBackend) Instructions() instructions.Set { return b.app.Instructions() }

// fileOptions are where @paths resolve: the project is the git root (else
// the directory with .otter/), else the working directory. A path outside
// it fails the message once; sent again, it is attached.
func (b *AppBackend) fileOptions() *attach.FileOptions {
	return &attach.FileOptions{
		WorkDir: b.app.WorkDir,
		Root:    cmp.Or(b.app.ProjectRoot(), b.app.WorkDir),
		AllowOutside: func(_ context.Context, path string) (bool, error) {
			b.mu.Lock()
			defer b.mu.Unlock()
			if b.outsideAsked[path] {
				return true, nil
			}
			if b.outsideAsked == nil {
				b.outsideAsked = map[string]bool{}
			}
			b.outsideAsked[path] = true
			return false, nil
		},
	}
}
