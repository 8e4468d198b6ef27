package app

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/otter-sh/otter/internal/shellline"
)

// RunShell runs a `!` line in the working directory, its output capped like
// a tool's ([tools] max_output_chars) and spilled beside tools' outputs,
// and keeps the command and its output for the next message the person
// sends, which the model gets them with. onOutput hears the output as it
// comes. Cancelling ctx kills the command and its children.
func (c *Conversation) RunShell(ctx context.Context, line string, onOutput func(string)) (shellline.Result, error) {
	res, err := shellline.Run(ctx, line, shellline.Options{
		Dir:      c.app.WorkDir,
		MaxBytes: c.app.cfg.Tools.MaxOutputChars,
		SpillDir: c.app.spillDir(),
		OnOutput: onOutput,
	})
	if err != nil {
		return res, err
	}
	c.mu.Lock()
	c.shell = append(c.shell, res.ForModel())
	c.mu.Unlock()
	return res, nil
}

// takeShellContext returns the `!` lines run since the last message, as
// context for the model, and forgets them.
func (c *Conversation) takeShellContext() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.shell) == 0 {
		return ""
	}
	s := "\n\nShell commands the user ran (with !) before this message, and their output:\n\n" + strings.Join(c.shell, "\n\n")
	c.shell = nil
	return s
}

// spillDir is where the whole of an output cut for the model is written:
// a tool's, a `!` line's, a hook's.
func (a *App) spillDir() string { return filepath.Join(a.Paths.CacheDir, "outputs") }
