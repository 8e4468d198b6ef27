// Package record is the vocabulary of saved conversations as the rest of
// otter sees them: a session's [Info], its stored [Entry] rows, search hits,
// compactions, the errors a session database returns, and the [Store] and
// [Recorder] a session database offers.
//
// internal/session implements them in SQLite; the App opens a store
// through a function it is given, so the App and the front ends over it
// name these values without linking the database in (see internal/app's
// Parts).
//
// It imports only llm of otter's packages.
package record

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/otter-sh/otter/internal/llm"
)

// Info describes a session.
type Info struct {
	ID          string
	Cwd         string // the project directory otter ran in
	Title       string // set by Rename; the first prompt until then
	FirstPrompt string
	Created     time.Time
	Updated     time.Time
	Provider    string
	Model       string
	ParentID    string // the session this one was forked from
	Messages    int    // stored messages (each tool result counts as one)
	Usage       llm.Usage
}

// ListOptions select sessions for List.
type ListOptions struct {
	Cwd   string // only sessions of this directory; "" = all
	Limit int    // 0 = no limit
}

// Age says how long ago t was, shortly: "just now", "5m ago", "3h ago",
// "2d ago", or the date for more than a month.
func Age(t, now time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	case d < 31*24*time.Hour:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	}
	return t.Format("2006-01-02")
}

// RoleNotice is the role of a stored notice: a line a front end showed in
// the transcript (an error, a cancellation, a model change), kept so that a
// resumed transcript looks as it did. Notices are never sent to a model.
const RoleNotice llm.Role = "notice"

// NoticeKind says how a stored notice was shown.
type NoticeKind string

const (
	// NoticeInfo is a line of information (the kind of every notice saved
	// before notices had kinds).
	NoticeInfo NoticeKind = ""
	// NoticeError says that something failed: a model call, a hook.
	NoticeError NoticeKind = "error"
	// NoticeAttached lists what was attached to the person's message
	// (@-mentions), one item a line, shown as chips.
	NoticeAttached NoticeKind = "attached"
)

// Shown is how a front end showed the person's message, where it differs
// from the text the model was sent: the model gets a custom command's
// expanded body, what hooks and @-mentions added, and pastes whole; the
// person saw what they typed.
type Shown struct {
	// Typed is the message as typed (pastes included); "" when the model
	// was sent just that.
	Typed string
	// Short is Typed with its long pastes as placeholders ("[pasted 80
	// lines #1]"); "" when it had none.
	Short string
	// Hidden: the person was not shown it as a message of theirs; otter
	// sent it on their behalf (a Stop hook's feedback).
	Hidden bool
}

// Entry is one stored row of a conversation. A tool row holds exactly one
// ToolResult (each result is saved as it arrives); History groups them
// into the llm.RoleTool messages a provider expects.
type Entry struct {
	Seq     int64
	Time    time.Time
	Message llm.Message // Role may be RoleNotice; then Text is the notice
	Usage   llm.Usage   // of the model call that produced an assistant message
	// Shown is how a user message was shown (zero: as its text, which is
	// all a session saved before otter kept it).
	Shown Shown
	// Notice is how a RoleNotice row was shown.
	Notice NoticeKind
}

// ShownText is what the person saw of a user message: as typed, or the
// text the model was sent when that is all the session holds.
func (e Entry) ShownText() string {
	if e.Shown.Typed != "" {
		return e.Shown.Typed
	}
	return e.Message.Text
}

// InterruptedResult is the text of the result given to a tool call that
// has none in the stored conversation (otter stopped while it ran).
const InterruptedResult = "interrupted: otter stopped before this tool call finished, so its result is unknown; run it again if it is still needed"

// Hit is a message that matched a search.
type Hit struct {
	Session Info
	Seq     int64
	Role    llm.Role
	Time    time.Time
	// Snippet is the matching part of the text, the matched words between
	// « and ».
	Snippet string
}

// SearchOptions narrow a search.
type SearchOptions struct {
	Cwd   string // only sessions of this directory; "" = all
	Limit int    // 0 = 50
}

// Found is a session that Find found, with what matched.
type Found struct {
	Info
	// Match is the title (when it holds the words) or the best matching
	// message's snippet, the matched words between « and ».
	Match string
}

// Compaction records that a session's history up to a message was replaced,
// for the model, by a summary. The messages themselves stay stored: a
// compaction changes what the model is sent, never what was said.
type Compaction struct {
	UpTo         int64 // messages with Seq <= UpTo are replaced by Summary
	Summary      string
	TokensBefore int64
	TokensAfter  int64
	Time         time.Time
}

// Checkpoint is a file as it was before a turn of a conversation first
// changed it (edit_file, write_file), kept with the session so that the
// turn can be undone: the file written back, or deleted when the turn
// created it.
type Checkpoint struct {
	// Seq is the person's message that began the turn.
	Seq int64
	// Path is the file, absolute, its links resolved.
	Path string
	// Existed is false when the turn created the file.
	Existed bool
	// Before is the file's content before the turn's first change (nil
	// when it did not exist, and when read without content).
	Before []byte
	// After is the SHA-256 (hex) of what the turn last wrote, to tell
	// whether the file changed on disk since.
	After string
	Time  time.Time
}

// FileName is the database's name in otter's data directory.
const FileName = "otter.db"

// DefaultPath is the database in otter's data directory
// ($XDG_DATA_HOME/otter, see config.Paths.DataDir).
func DefaultPath(dataDir string) string { return filepath.Join(dataDir, FileName) }

// Errors of Open and of the Store's methods; each is wrapped in an *Error
// that names the file and says what to do.
var (
	// ErrCorrupt: the file is not a database otter can read.
	ErrCorrupt = errors.New("the session database is damaged or not a database")
	// ErrNewer: the database was written by a newer otter.
	ErrNewer = errors.New("the session database was written by a newer otter")
	// ErrReadOnly: the file or its directory cannot be written.
	ErrReadOnly = errors.New("the session database cannot be written")
	// ErrFull: the disk is full.
	ErrFull = errors.New("the disk holding the session database is full")
	// ErrNotFound: no session has the ID (or ID prefix) given.
	ErrNotFound = errors.New("no such session")
	// ErrAmbiguous: an ID prefix matches more than one session.
	ErrAmbiguous = errors.New("the session ID prefix matches more than one session")
)

// Error is a failure of the session database, written for the person who
// reads it: what failed, which file, and what to do.
type Error struct {
	Path string // the database file
	Op   string // what otter was doing: "open", "save a message", ...
	Kind error  // ErrCorrupt, ErrNewer, ErrReadOnly, ErrFull, or nil
	Hint string // what to do
	Err  error  // the underlying error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "session database %s: %s", e.Path, e.Op)
	if e.Kind != nil {
		fmt.Fprintf(&b, ": %v", e.Kind)
	}
	if e.Err != nil && (e.Kind == nil || e.Err.Error() != e.Kind.Error()) {
		fmt.Fprintf(&b, " (%v)", e.Err)
	}
	if e.Hint != "" {
		b.WriteString("; ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

func (e *Error) Unwrap() []error {
	if e.Kind == nil {
		return []error{e.Err}
	}
	return []error{e.Kind, e.Err}
}

// Store is an open session database. Its methods are safe for concurrent
// use; their errors wrap an *[Error] that names the file and says what to
// do.
type Store interface {
	// Create adds a session described by info (ID, Created and Updated
	// are set when empty) and returns it.
	Create(ctx context.Context, info Info) (Info, error)
	// Get finds a session by its ID or a unique prefix of it
	// ([ErrNotFound], [ErrAmbiguous]).
	Get(ctx context.Context, idOrPrefix string) (Info, error)
	// List returns sessions with a message, the most recently updated
	// first.
	List(ctx context.Context, opts ListOptions) ([]Info, error)
	// Latest is the most recently updated session of a directory.
	Latest(ctx context.Context, cwd string) (Info, error)
	// Search finds the messages holding every word of query.
	Search(ctx context.Context, query string, opts SearchOptions) ([]Hit, error)
	// Find finds the sessions a person means by words, best first.
	Find(ctx context.Context, words string, limit int) ([]Found, error)
	Rename(ctx context.Context, id, title string) error
	SetModel(ctx context.Context, id, provider, model string) error
	Delete(ctx context.Context, id string) error
	// Prune deletes the sessions not updated for keepDays days.
	Prune(ctx context.Context, keepDays int) (int, error)
	// Fork copies a session; the copy's ParentID names the original.
	Fork(ctx context.Context, id string) (Info, error)
	// Append stores a message and returns its Seq.
	Append(ctx context.Context, id string, m llm.Message, u llm.Usage) (int64, error)
	// Entries are a session's rows after Seq after.
	Entries(ctx context.Context, id string, after int64) ([]Entry, error)
	// History is the conversation a provider accepts (see Entry).
	History(ctx context.Context, id string) ([]llm.Message, error)
	// Resume returns a session's rows and, for the model, its history
	// after the last compaction.
	Resume(ctx context.Context, id string) (entries []Entry, model []llm.Message, err error)
	Compactions(ctx context.Context, id string) ([]Compaction, error)
	AllowedTools(ctx context.Context, id string) ([]string, error)
	// SaveCheckpoint keeps a file before a turn changes it. The first
	// version of a path in a turn (Seq) is the one kept; a later change of
	// it in the same turn updates only After.
	SaveCheckpoint(ctx context.Context, id string, c Checkpoint) error
	// Checkpoints are a session's checkpoints of the turns from the
	// message at Seq from on, by Seq then Path; without content, Before is
	// left nil (to list them).
	Checkpoints(ctx context.Context, id string, from int64, content bool) ([]Checkpoint, error)
	// Truncate takes a conversation back to before its message at Seq
	// from: that message and every row after it, the compactions that
	// summarised any of them and the checkpoints of their turns are
	// deleted, and the session's counts follow.
	Truncate(ctx context.Context, id string, from int64) error
	// DropCheckpoints deletes the checkpoints of the turns from the
	// message at Seq from on (their files were put back).
	DropCheckpoints(ctx context.Context, id string, from int64) error
	// SetState and State keep small values of a session under a key
	// (JSON).
	SetState(ctx context.Context, id, key string, value any) error
	State(ctx context.Context, id, key string, value any) (found bool, err error)
	// Record returns a Recorder that saves a conversation to the session
	// info; onError hears of what it could not save.
	Record(info Info, onError func(error)) Recorder
	// Path is the database file.
	Path() string
	Close() error
}

// Recorder saves a conversation as it grows, to one session of a [Store];
// an agent's recorder. It reports its own failures (see Store.Record).
type Recorder interface {
	// ID is the session's ID.
	ID() string
	RecordMessage(m llm.Message, u llm.Usage)
	// RecordPrompt saves the person's message with how it was shown.
	RecordPrompt(m llm.Message, shown Shown)
	// PromptSeq is the Seq of the person's latest message this Recorder
	// saved (not one otter sent for them); 0 when none was saved.
	PromptSeq() int64
	RecordToolResult(r llm.ToolResult)
	RecordAllowed(tool string)
	// RecordDraft saves an answer while it streams.
	RecordDraft(text string)
	RecordState(key string, value any)
	RecordCompaction(summary string, kept []llm.Message, before, after int64)
	// Notice stores a line a front end showed (RoleNotice), of kind.
	Notice(kind NoticeKind, text string)
	SetModel(provider, model string)
}
