package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/localtools"
	"github.com/otter-sh/otter/internal/record"
)

// Undo and rewind. Before edit_file or write_file changes a file, the
// Conversation keeps the file as it was with the saved session (one
// record.Checkpoint per file and turn, the turn being the person's message
// that began it), so that a turn can be taken back: its files put back and
// the turn taken out of the conversation. Changes made by run_command are
// not kept (a command may change anything); the person is told when a turn
// ran commands. Nothing is kept for a conversation that is not saved.

// MaxUndoBytes is the largest file otter keeps to undo a change. edit_file
// and write_file refuse to change a larger file (the model is told why), so
// that every change they make can be undone.
const MaxUndoBytes = 4 << 20

// Errors of Undo and Rewind.
var (
	// ErrNothingToUndo: the conversation has no message of the person's
	// to go back to.
	ErrNothingToUndo = errors.New("there is nothing to undo: the conversation has no message of yours")
	// ErrNotUndoable: the conversation is not saved (saving is off, or
	// the session database cannot be used), and undo keeps what it
	// restores with the saved session.
	ErrNotUndoable = errors.New("this conversation is not saved, so otter kept nothing to undo")
	// ErrNoSuchMessage: Rewind was given a Seq that is none of the
	// person's messages in the conversation.
	ErrNoSuchMessage = errors.New("no such message of yours in this conversation")
)

// ChangedOnDiskError is the refusal of Undo or Rewind to put back files
// that changed on disk since the conversation's turns changed them:
// putting them back would lose those changes. Nothing was changed; forced,
// they are put back anyway.
type ChangedOnDiskError struct {
	Paths []string // absolute
}

func (e *ChangedOnDiskError) Error() string {
	it := "it"
	if len(e.Paths) > 1 {
		it = "them"
	}
	return fmt.Sprintf("%s changed on disk since otter changed %s, so nothing was undone: putting %s back would lose those changes",
		strings.Join(e.Paths, ", "), it, it)
}

// TooLargeToUndoError is why a change of a file larger than MaxUndoBytes
// was refused: otter could not keep the file to undo the change.
type TooLargeToUndoError struct {
	Path string
	Size int
}

func (e *TooLargeToUndoError) Error() string {
	return fmt.Sprintf("%s is %s, and otter keeps at most %s of a file to undo a change", e.Path, mib(e.Size), mib(MaxUndoBytes))
}

func mib(n int) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// Restore says what Rewind takes back.
type Restore int

const (
	// RestoreBoth takes back the conversation and the files.
	RestoreBoth Restore = iota
	// RestoreConversation takes back the conversation and leaves the
	// files as they are; what the turns changed can no longer be undone.
	RestoreConversation
	// RestoreFiles puts the files back and keeps the conversation.
	RestoreFiles
)

// UserMessage is a message of the person's in the conversation, as Rewind
// offers to go back to before it, with what its turn did to files.
type UserMessage struct {
	Seq  int64
	Text string // as typed (record.Entry.ShownText)
	// Short is Text with its long pastes as placeholders; "" when it had
	// none.
	Short string
	Time  time.Time
	// Files are the files the turn changed with edit_file and write_file
	// (absolute, sorted): those Rewind puts back.
	Files []string
	// Commands is how many commands the turn ran (run_command), whose
	// changes are not kept and cannot be undone.
	Commands int
}

// Rewound is what Undo or Rewind did.
type Rewound struct {
	// To is the message the conversation went back to before.
	To UserMessage
	// Conversation: the conversation was taken back (To and what
	// followed it are gone); Entries are its rows now, to show it.
	Conversation bool
	Entries      []record.Entry
	// Restored are the files written back as they were, Removed those the
	// turns had created, now deleted (absolute, sorted).
	Restored []string
	Removed  []string
	// Commands is how many commands the turns taken back ran: what they
	// changed stays as it is.
	Commands int
}

// checkpoints is the Conversation's localtools.Checkpointer: it keeps a
// file with the saved session before a tool changes it.
type checkpoints struct{ c *Conversation }

// BeforeChange keeps fc's file as it was, under the person's message that
// began the turn. Nothing is kept while nothing of the conversation is
// saved; a file larger than MaxUndoBytes, or one the database cannot keep,
// is an error, and the tool leaves the file as it was.
func (k checkpoints) BeforeChange(ctx context.Context, fc localtools.FileChange) error {
	k.c.mu.Lock()
	s := k.c.session
	k.c.mu.Unlock()
	if s == nil || s.Recorder == nil {
		return nil
	}
	id, seq := s.Recorder.ID(), s.Recorder.PromptSeq()
	if id == "" || seq == 0 {
		return nil // the turn is not saved: there is nothing to undo it from
	}
	if fc.Existed && len(fc.Before) > MaxUndoBytes {
		return &TooLargeToUndoError{Path: fc.Path, Size: len(fc.Before)}
	}
	store, err := k.c.app.Sessions(ctx)
	if err != nil {
		return err
	}
	return store.SaveCheckpoint(ctx, id, record.Checkpoint{Seq: seq, Path: fc.Path, Existed: fc.Existed, Before: fc.Before, After: hashOf(fc.After)})
}

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// running reports whether a turn (or a compaction) runs.
func (c *Conversation) running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.emit != nil
}

// savedSession is the store and ID of the conversation's saved session,
// or ErrNotUndoable / ErrNothingToUndo.
func (c *Conversation) savedSession(ctx context.Context) (record.Store, string, error) {
	c.mu.Lock()
	s := c.session
	c.mu.Unlock()
	if s == nil || s.Recorder == nil {
		return nil, "", ErrNotUndoable
	}
	id := s.Recorder.ID()
	if id == "" {
		return nil, "", ErrNothingToUndo
	}
	store, err := c.app.Sessions(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrNotUndoable, err)
	}
	return store, id, nil
}

// UserMessages lists the person's messages in the conversation, oldest
// first, with the files each turn changed and the commands it ran: what
// Rewind can go back to before. Messages otter sent for the person (a
// Stop hook's feedback) belong to the turn they continue.
func (c *Conversation) UserMessages(ctx context.Context) ([]UserMessage, error) {
	store, id, err := c.savedSession(ctx)
	if errors.Is(err, ErrNothingToUndo) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return userMessages(ctx, store, id)
}

func userMessages(ctx context.Context, store record.Store, id string) ([]UserMessage, error) {
	entries, err := store.Entries(ctx, id, 0)
	if err != nil {
		return nil, err
	}
	cps, err := store.Checkpoints(ctx, id, 0, false)
	if err != nil {
		return nil, err
	}
	var out []UserMessage
	for _, e := range entries {
		m := e.Message
		switch {
		case m.Role == llm.RoleUser && !e.Shown.Hidden:
			out = append(out, UserMessage{Seq: e.Seq, Text: e.ShownText(), Short: e.Shown.Short, Time: e.Time})
		case m.Role == llm.RoleAssistant && len(out) > 0:
			for _, call := range m.ToolCalls {
				if call.Name == localtools.NameRunCommand {
					out[len(out)-1].Commands++
				}
			}
		}
	}
	for _, cp := range cps {
		// The turn of the latest message at or before the checkpoint's.
		i, found := slices.BinarySearchFunc(out, cp.Seq, func(m UserMessage, seq int64) int { return int(m.Seq - seq) })
		if !found {
			i--
		}
		if i >= 0 && !slices.Contains(out[i].Files, cp.Path) {
			out[i].Files = append(out[i].Files, cp.Path)
		}
	}
	return out, nil
}

// Undo takes back the conversation's last turn: the files it changed are
// put back as they were (those it created deleted), and the person's
// message and all that followed it leave the conversation, saved and as
// the model is sent it. Files changed on disk since the turn are a
// *ChangedOnDiskError, and nothing is changed, unless force. It returns
// ErrNothingToUndo, ErrNotUndoable, or agent.ErrBusy while a turn runs.
func (c *Conversation) Undo(ctx context.Context, force bool) (Rewound, error) {
	msgs, err := c.UserMessages(ctx)
	if err != nil {
		return Rewound{}, err
	}
	if len(msgs) == 0 {
		return Rewound{}, ErrNothingToUndo
	}
	return c.Rewind(ctx, msgs[len(msgs)-1].Seq, RestoreBoth, force)
}

// Rewind goes back to before the person's message at Seq toSeq (one of
// UserMessages): what restores the conversation (that message and all
// that followed it leave it), the files (those the turns from it on
// changed are put back as they were before it), or both. Files changed on
// disk since are a *ChangedOnDiskError, and nothing is changed, unless
// force. Commands the turns ran are counted, not undone.
func (c *Conversation) Rewind(ctx context.Context, toSeq int64, what Restore, force bool) (Rewound, error) {
	if c.running() {
		return Rewound{}, fmt.Errorf("going back in the conversation while it runs: %w", agent.ErrBusy)
	}
	store, id, err := c.savedSession(ctx)
	if err != nil {
		return Rewound{}, err
	}
	msgs, err := userMessages(ctx, store, id)
	if err != nil {
		return Rewound{}, err
	}
	i := slices.IndexFunc(msgs, func(m UserMessage) bool { return m.Seq == toSeq })
	if i < 0 {
		return Rewound{}, fmt.Errorf("%w (message %d)", ErrNoSuchMessage, toSeq)
	}
	out := Rewound{To: msgs[i], Conversation: what != RestoreFiles}
	for _, m := range msgs[i:] {
		out.Commands += m.Commands
	}
	if what != RestoreConversation {
		cps, err := store.Checkpoints(ctx, id, toSeq, true)
		if err != nil {
			return Rewound{}, err
		}
		if out.Restored, out.Removed, err = putBack(cps, force); err != nil {
			return out, err
		}
	}
	if what == RestoreFiles {
		// Put back, the files of those turns have nothing left to undo.
		return out, store.DropCheckpoints(ctx, id, toSeq)
	}
	if err := store.Truncate(ctx, id, toSeq); err != nil {
		return out, err
	}
	entries, history, err := store.Resume(ctx, id)
	if err != nil {
		return out, err
	}
	allowed, err := store.AllowedTools(ctx, id)
	if err != nil {
		return out, err
	}
	if err := c.agent.Load(history, allowed); err != nil {
		return out, err
	}
	// What the model read in the turns taken back is no longer in what it
	// is sent: it reads a file again before it changes it.
	c.local.Forget()
	c.mu.Lock()
	c.session.Entries = entries
	c.mu.Unlock()
	out.Entries = entries
	return out, nil
}

// fileBack is what a file goes back to: its state before the first of the
// turns, and the hash of what the last of them wrote.
type fileBack struct {
	existed bool
	before  []byte
	after   string
}

// putBack puts the files of cps (ordered by Seq) back as they were before
// the first turn that changed each. A file already as it was is left
// alone; one that is not as the last turn left it is refused, unless
// force, and then nothing is changed. On a failure to write, what was put
// back stays put back (a second try finds it as it was) and the error
// says which file failed.
func putBack(cps []record.Checkpoint, force bool) (restored, removed []string, err error) {
	files := map[string]*fileBack{}
	var paths []string
	for _, cp := range cps {
		f, ok := files[cp.Path]
		if !ok {
			f = &fileBack{existed: cp.Existed, before: cp.Before}
			files[cp.Path] = f
			paths = append(paths, cp.Path)
		}
		f.after = cp.After
	}
	slices.Sort(paths)
	var todo, changed []string
	for _, p := range paths {
		// Nothing is put back through a link put in the file's place, or
		// in one of its folders', since it was kept: forced or not, that
		// would write (or delete) where the link leads.
		if err := notThroughALink(p); err != nil {
			return nil, nil, err
		}
	}
	for _, p := range paths {
		f := files[p]
		now, exists, err := hashFile(p)
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s to put it back: %w", p, err)
		}
		switch {
		case exists == f.existed && (!exists || now == hashOf(f.before)):
			continue // as it was already
		case !exists || now != f.after:
			changed = append(changed, p)
		}
		todo = append(todo, p)
	}
	if len(changed) > 0 && !force {
		return nil, nil, &ChangedOnDiskError{Paths: changed}
	}
	for _, p := range todo {
		f := files[p]
		if !f.existed {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return restored, removed, putBackError(p, restored, removed, err)
			}
			removed = append(removed, p)
			continue
		}
		if err := writeBack(p, f.before); err != nil {
			return restored, removed, putBackError(p, restored, removed, err)
		}
		restored = append(restored, p)
	}
	return restored, removed, nil
}

func putBackError(p string, restored, removed []string, err error) error {
	done := ""
	if n := len(restored) + len(removed); n > 0 {
		done = fmt.Sprintf(" (%s put back already; undo again to finish)", strings.Join(append(slices.Clone(restored), removed...), ", "))
	}
	return fmt.Errorf("could not put %s back%s: %w", p, done, err)
}

// hashFile is the SHA-256 of the file at p, read as it streams; exists is
// false when there is no file there.
func hashFile(p string) (sum string, exists bool, err error) {
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", true, err
	}
	if !fi.Mode().IsRegular() {
		return "", true, nil // no hash matches: it changed
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", true, err
	}
	return hex.EncodeToString(h.Sum(nil)), true, nil
}

// writeBack writes content to the file at p, keeping the mode of a file
// that is there, creating it (and its directory) when it is not.
func writeBack(p string, content []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	}
	if err != nil {
		return err
	}
	_, err = io.Copy(f, bytes.NewReader(content))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// LinkedError says that a file to put back, kept with its links resolved,
// now leads elsewhere: a symbolic link stands where the file, or one of
// its folders, stood when the tool changed it.
type LinkedError struct {
	Path string // the file as kept
	Link string // the link in its way
}

func (e *LinkedError) Error() string {
	return fmt.Sprintf("nothing was undone: %s is a link now, where %s stood when it was changed; otter does not put files back through a link (remove the link, then undo again)", e.Link, e.Path)
}

// notThroughALink checks that p, kept with its links resolved, still
// resolves to itself: its folders (the nearest that exists) and the file
// itself are no symbolic links.
func notThroughALink(p string) error {
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return &LinkedError{Path: p, Link: p}
	}
	for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			if real != dir {
				return &LinkedError{Path: p, Link: dir}
			}
			return nil
		}
		if parent := filepath.Dir(dir); parent == dir || !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("could not check the folder of %s: %w", p, err)
		}
	}
}
