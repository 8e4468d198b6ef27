package localtools

import (
	"context"
	"fmt"
	"github.com/otter-sh/otter/internal/ask"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/otter-sh/otter/internal/shellline"
	"github.com/otter-sh/otter/internal/tool"
)

// FileChange is a change edit_file or write_file is about to make, as a
// Checkpointer is told of it.
type FileChange struct {
	Path    string // absolute, its symbolic links resolved
	Existed bool   // false: the call creates the file
	Before  []byte // the content on disk before the change (nil when it did not exist)
	After   []byte // the content the call writes
	Tool    string // NameEditFile or NameWriteFile
}

// Checkpointer keeps a file's content before a tool changes it, so that
// the change can be undone (the session's /undo and /rewind). An error
// stops the change: the model is told the file was left as it was. A
// change that then fails to be written is told again with After set to
// Before: the file is as it was, not as the change would have left it
// (else undo would take it for a file someone else changed since).
type Checkpointer interface {
	BeforeChange(ctx context.Context, c FileChange) error
}

// State is what the tools keep for one conversation: when the model last
// read each file, the files changed, the background commands. It is safe
// for concurrent use.
type State struct {
	t *Tools

	mu           sync.Mutex
	checkpointer Checkpointer
	unconfined   UnconfinedAsker
	reads        map[string]readMark // by resolved path
	changed      []string            // resolved paths, in the order first changed
	jobs         map[string]*job
	nextJob      int
}

// readMark is a file as the model last saw it.
type readMark struct {
	mod  time.Time
	size int64
}

func markOf(fi os.FileInfo) readMark { return readMark{mod: fi.ModTime(), size: fi.Size()} }

// job is a command running in the background.
type job struct {
	id      string
	command string
	run     *shellline.Running
	started time.Time
	cancel  context.CancelFunc // its timeout, if it has one
	read    int64              // output bytes the model has been shown
}

// NewState returns a State for a new conversation.
func (t *Tools) NewState() *State {
	s := &State{t: t, reads: map[string]readMark{}, jobs: map[string]*job{}}
	t.mu.Lock()
	t.states = append(t.states, s)
	t.mu.Unlock()
	return s
}

// UnconfinedAsker asks the person whether a command the sandbox refused
// may run once more outside it (ask.Permission with Unconfined set).
type UnconfinedAsker func(ctx context.Context, p ask.Permission) (ask.PermissionDecision, error)

// SetUnconfinedAsker sets who is asked to run a refused command outside
// the sandbox; nil: nobody, the refusal stands.
func (s *State) SetUnconfinedAsker(a UnconfinedAsker) {
	s.mu.Lock()
	s.unconfined = a
	s.mu.Unlock()
}

// SetCheckpointer sets what keeps files before they change; nil keeps
// nothing.
func (s *State) SetCheckpointer(c Checkpointer) {
	s.mu.Lock()
	s.checkpointer = c
	s.mu.Unlock()
}

// Forget forgets what the model read: a cleared or resumed conversation
// must read a file again before it edits it. Background commands go on.
func (s *State) Forget() {
	s.mu.Lock()
	s.reads = map[string]readMark{}
	s.mu.Unlock()
}

// FilesChanged lists the files edit_file and write_file changed in this
// conversation, absolute, in the order first changed.
func (s *State) FilesChanged() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.changed)
}

// Close stops the State's background commands and forgets it.
func (s *State) Close() {
	s.stopJobs()
	t := s.t
	t.mu.Lock()
	t.states = slices.DeleteFunc(t.states, func(x *State) bool { return x == s })
	t.mu.Unlock()
}

func (s *State) stopJobs() {
	s.mu.Lock()
	jobs := make([]*job, 0, len(s.jobs))
	for _, j := range s.jobs {
		jobs = append(jobs, j)
	}
	s.mu.Unlock()
	for _, j := range jobs {
		j.run.Stop()
	}
	for _, j := range jobs {
		<-j.run.Done()
	}
}

type stateKey struct{}

// WithState returns a context whose local tool calls use st.
func WithState(ctx context.Context, st *State) context.Context {
	return context.WithValue(ctx, stateKey{}, st)
}

// state is ctx's State, or the Tools' own.
func (t *Tools) state(ctx context.Context) *State {
	if st, ok := ctx.Value(stateKey{}).(*State); ok && st != nil {
		return st
	}
	return t.fallback
}

// sawRead notes that the model read path (resolved) as fi.
func (s *State) sawRead(path string, fi os.FileInfo) {
	s.mu.Lock()
	s.reads[path] = markOf(fi)
	s.mu.Unlock()
}

// staleness says why the model may not change path (resolved), which is
// now fi: it never read it, or the file changed since; "" when it may.
func (s *State) staleness(path, shown string, fi os.FileInfo) string {
	s.mu.Lock()
	m, ok := s.reads[path]
	s.mu.Unlock()
	switch {
	case !ok:
		return fmt.Sprintf("%s has not been read in this conversation: read it with read_file first, so that the change is made to what is there", shown)
	case m != markOf(fi):
		return fmt.Sprintf("%s changed on disk since it was last read (now %d bytes, modified %s): read it again with read_file, then make the change", shown, fi.Size(), fi.ModTime().Format(time.RFC3339))
	}
	return ""
}

// changedFile notes a change made to path (resolved), now fi.
func (s *State) changedFile(path string, fi os.FileInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fi != nil {
		s.reads[path] = markOf(fi)
	}
	if !slices.Contains(s.changed, path) {
		s.changed = append(s.changed, path)
	}
}

// MetaChange is the key of a result's _meta under which edit_file and
// write_file say what they changed (see ChangeOf).
const MetaChange = "otter/change"

// Change is what a call of edit_file or write_file changed.
type Change struct {
	Path    string `json:"path"`    // absolute, its links resolved
	Created bool   `json:"created"` // the file was new
	Diff    string `json:"diff"`    // unified diff of before and after
}

// ChangeOf is the change res reports, for a front end (a transcript's
// diff, -p's list of files changed); ok is false for a result of another
// tool or of a call that changed nothing.
func ChangeOf(res *tool.Result) (Change, bool) {
	if res == nil || res.Meta == nil {
		return Change{}, false
	}
	switch c := res.Meta[MetaChange].(type) {
	case Change:
		return c, true
	case *Change:
		return *c, c != nil
	case map[string]any: // decoded from JSON
		p, _ := c["path"].(string)
		created, _ := c["created"].(bool)
		d, _ := c["diff"].(string)
		return Change{Path: p, Created: created, Diff: d}, p != ""
	}
	return Change{}, false
}
