package tui

// AppBackend's part of the person's project: `!` lines run by
// internal/shellline, @path completion, the instruction files.

import (
	"context"

	"github.com/otter-sh/otter/internal/attach"
	"github.com/otter-sh/otter/internal/instructions"
	"github.com/otter-sh/otter/internal/shellline"
)

var (
	_ ShellBackend  = (*AppBackend)(nil)
	_ FileBackend   = (*AppBackend)(nil)
	_ MemoryBackend = (*AppBackend)(nil)
)

// RunShell runs a `!` line (app.Conversation.RunShell): its output goes
// with the next message.
func (b *AppBackend) RunShell(ctx context.Context, line string, onOutput func(string)) (shellline.Result, error) {
	return b.conv.RunShell(ctx, line, onOutput)
}

func (b *AppBackend) CompletePath(prefix string) []string {
	return attach.CompletePath(context.Background(), b.app.WorkDir, prefix)
}

func (b *AppBackend) Instructions() instructions.Set { return b.app.Instructions() }

// allowOutside is the TUI's answer for an @path outside the project (the
// git root, else the directory with .otter/, else the working directory):
// the message fails once, saying so; sent again, the file is attached.
func (b *AppBackend) allowOutside(_ context.Context, path string) (bool, error) {
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
}
