package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/record"
	"github.com/otter-sh/otter/internal/termtext"
)

// ResumePicker is the value of --resume given without an ID: the TUI
// opens its session picker. It cannot be an ID or an ID's prefix (those
// are hex digits), and it is what `otter --help` shows (--resume ID[=pick]).
const ResumePicker = "pick"

// SessionsOptions are the options of `otter sessions`.
type SessionsOptions struct {
	All      bool   // list: every directory's sessions, not only this one's
	JSON     bool   // list, show, search: JSON on stdout
	Markdown bool   // show: Markdown (as export)
	ID       string // show, rm, export: an ID or unique ID prefix
	Query    string // search
}

// sessionDB is the session database opened through the App, so that
// [sessions] settings (enabled, keep_days and its pruning) apply as they
// do to a conversation. Close closes both.
type sessionDB struct {
	app.SessionStore
	app      *app.App
	closeLog func()
}

func (d sessionDB) Close() error {
	defer d.closeLog()
	return d.app.Close()
}

// openSessions opens the session database for the sessions commands; it
// returns the working directory too.
func (f *Factory) openSessions(ctx context.Context) (sessionDB, string, error) {
	logger, closeLog, err := f.headlessLogger()
	if err != nil {
		return sessionDB{}, "", ExitCode(2, err)
	}
	a, err := app.New(ctx, f.AppOptions(logger))
	if err != nil {
		closeLog()
		return sessionDB{}, "", ExitCode(2, err)
	}
	s, degraded, err := a.SessionsToRead(ctx)
	if err != nil {
		a.Close()
		closeLog()
		return sessionDB{}, "", ExitCode(2, withSessionsHint(err))
	}
	if errors.Is(degraded, app.ErrSessionsDamaged) {
		fmt.Fprintf(f.IO.ErrOut, "otter: %v\notter: reading it read-only: what still reads is listed and can be exported\n", degraded)
	}
	return sessionDB{SessionStore: s, app: a, closeLog: closeLog}, a.WorkDir, nil
}

// withSessionsHint adds to a damaged database's error how to save what it
// still holds: the file is kept, and `otter sessions` reads it read-only.
func withSessionsHint(err error) error {
	if errors.Is(err, app.ErrSessionsDamaged) {
		return fmt.Errorf("%w; %s", err, damagedSessionsHint)
	}
	return err
}

// damagedSessionsHint says how to save what a damaged database holds.
const damagedSessionsHint = "the file is kept: `otter sessions list` and `otter sessions export ID` read what it still holds"

// openSession opens the database and finds the session with the ID or
// unique ID prefix id; the caller closes the store.
func (f *Factory) openSession(ctx context.Context, id string) (sessionDB, app.SessionInfo, error) {
	s, _, err := f.openSessions(ctx)
	if err != nil {
		return sessionDB{}, app.SessionInfo{}, err
	}
	info, err := s.Get(ctx, id)
	if err != nil {
		s.Close()
		return sessionDB{}, app.SessionInfo{}, notFound(err)
	}
	return s, info, nil
}

// sessionJSON is a session in `otter sessions list --json` and, with its
// messages, `otter sessions show --json`.
type sessionJSON struct {
	ID           string    `json:"id"`
	Title        string    `json:"title"`
	Cwd          string    `json:"cwd"`
	Created      time.Time `json:"created"`
	Updated      time.Time `json:"updated"`
	Messages     any       `json:"messages"` // a count in list, the messages in show
	Provider     string    `json:"provider,omitempty"`
	Model        string    `json:"model"`
	ParentID     string    `json:"parent_id,omitempty"`
	InputTokens  int64     `json:"input_tokens"`
	OutputTokens int64     `json:"output_tokens"`
	FirstPrompt  string    `json:"first_prompt,omitempty"`
	// Compactions (show only): where the model's view of the conversation
	// was replaced by a summary; the messages themselves are all kept.
	Compactions []compactionJSON `json:"compactions,omitempty"`
	messages    []messageJSON    `json:"-"`
}

// compactionJSON is one compaction in `otter sessions show --json`: the
// messages up to UpToSeq are, for the model, replaced by Summary.
type compactionJSON struct {
	UpToSeq      int64     `json:"upto_seq"`
	Summary      string    `json:"summary"`
	TokensBefore int64     `json:"tokens_before"`
	TokensAfter  int64     `json:"tokens_after"`
	Time         time.Time `json:"time"`
}

// messageJSON is one stored message in `otter sessions show --json`.
type messageJSON struct {
	Seq     int64  `json:"seq"`
	Role    string `json:"role"`    // user, assistant, tool or notice
	Content string `json:"content"` // what the model was sent
	// Typed is a user message as the person typed it, when the model was
	// sent more (a command's body, hooks' context, attachments); Short is
	// how it was shown, long pastes as placeholders.
	Typed string `json:"typed,omitempty"`
	Short string `json:"short,omitempty"`
	// SentForYou marks a user message otter sent on the person's behalf
	// (a Stop hook's feedback).
	SentForYou bool `json:"sent_for_you,omitempty"`
	// Kind is a notice's: "error", "attached", or absent for information.
	Kind        string         `json:"kind,omitempty"`
	ToolCalls   []toolCallJSON `json:"tool_calls,omitempty"`
	CallID      string         `json:"call_id,omitempty"` // a tool result's call
	Tool        string         `json:"tool,omitempty"`
	IsError     bool           `json:"is_error,omitempty"`
	Denied      bool           `json:"denied,omitempty"` // the call was never run: a permission, rule or hook refused it
	Images      int            `json:"images,omitempty"`
	Interrupted bool           `json:"interrupted,omitempty"`
	Time        time.Time      `json:"time"`
}

type toolCallJSON struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

func infoJSON(i app.SessionInfo) sessionJSON {
	return sessionJSON{ID: i.ID, Title: i.Title, Cwd: i.Cwd, Created: i.Created.UTC(), Updated: i.Updated.UTC(), Messages: i.Messages,
		Provider: i.Provider, Model: i.Model, ParentID: i.ParentID, InputTokens: i.Usage.InputTokens, OutputTokens: i.Usage.OutputTokens}
}

func entryJSON(e app.SessionEntry) messageJSON {
	m := e.Message
	out := messageJSON{Seq: e.Seq, Role: string(m.Role), Content: m.Text, Images: len(m.Images), Interrupted: m.Interrupted, Time: e.Time.UTC(),
		Typed: e.Shown.Typed, Short: e.Shown.Short, SentForYou: e.Shown.Hidden, Kind: string(e.Notice)}
	for _, c := range m.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, toolCallJSON{ID: c.ID, Name: c.Name, Args: c.Args})
	}
	for _, r := range m.ToolResults {
		out.Content, out.CallID, out.Tool, out.IsError, out.Images = r.Text, r.CallID, r.Name, r.IsError, len(r.Images)
		out.Denied = agent.Denial(r) != nil
	}
	return out
}

// writeJSON writes v as indented JSON for a script or a person: &, < and >
// as they are, not as \u0026 (this is not HTML).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(termtext.Raw(w)) // exact: JSON escapes the controls
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// notFound makes an unknown or ambiguous ID a usage error (exit 2).
func notFound(err error) error {
	if errors.Is(err, app.ErrSessionNotFound) || errors.Is(err, app.ErrSessionAmbiguous) {
		return ExitCode(2, err)
	}
	return ExitCode(1, err)
}

// SessionsList is `otter sessions list`: this directory's sessions (all
// with All), the latest first.
func SessionsList(ctx context.Context, f *Factory, o SessionsOptions) error {
	s, cwd, err := f.openSessions(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	lo := app.SessionListOptions{Cwd: cwd}
	if o.All {
		lo.Cwd = ""
	}
	list, err := s.List(ctx, lo)
	if err != nil {
		return ExitCode(1, err)
	}
	if o.JSON {
		out := make([]sessionJSON, 0, len(list))
		for _, i := range list {
			out = append(out, infoJSON(i))
		}
		return writeJSON(f.IO.Out, out)
	}
	if len(list) == 0 {
		where := "in " + cwd + " (otter sessions list --all lists every directory's)"
		if o.All {
			where = "yet"
		}
		fmt.Fprintf(f.IO.ErrOut, "no saved conversations %s\n", where)
		return nil
	}
	tw := tabwriter.NewWriter(f.IO.Out, 0, 0, 2, ' ', 0)
	head := "ID\tUPDATED\tMESSAGES\tTITLE"
	if o.All {
		head += "\tDIRECTORY"
	}
	fmt.Fprintln(tw, head)
	now := time.Now()
	for _, i := range list {
		line := fmt.Sprintf("%s\t%s\t%d\t%s", i.ID[:8], app.SessionAge(i.Updated, now), i.Messages, truncateLine(i.Title, 60))
		if o.All {
			line += "\t" + i.Cwd
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// SessionsShow is `otter sessions show ID`: the conversation as Markdown
// (the default, and with Markdown) or JSON.
func SessionsShow(ctx context.Context, f *Factory, o SessionsOptions) error {
	s, info, err := f.openSession(ctx, o.ID)
	if err != nil {
		return err
	}
	defer s.Close()
	entries, err := s.Entries(ctx, info.ID, 0)
	if err != nil {
		return ExitCode(1, err)
	}
	cs, err := s.Compactions(ctx, info.ID)
	if err != nil {
		return ExitCode(1, err)
	}
	if o.JSON {
		j := infoJSON(info)
		msgs := make([]messageJSON, 0, len(entries))
		for _, e := range entries {
			msgs = append(msgs, entryJSON(e))
		}
		j.Messages = msgs
		j.FirstPrompt = info.FirstPrompt
		for _, c := range cs {
			j.Compactions = append(j.Compactions, compactionJSON{UpToSeq: c.UpTo, Summary: c.Summary, TokensBefore: c.TokensBefore, TokensAfter: c.TokensAfter, Time: c.Time.UTC()})
		}
		return writeJSON(f.IO.Out, j)
	}
	_, err = io.WriteString(f.IO.Out, record.Markdown(info, entries, cs))
	return err
}

// SessionsExport is `otter sessions export ID`: Markdown on stdout, or
// with JSON what `show --json` prints.
func SessionsExport(ctx context.Context, f *Factory, o SessionsOptions) error {
	o.Markdown = !o.JSON
	return SessionsShow(ctx, f, o)
}

// SessionsRemove is `otter sessions rm ID`.
func SessionsRemove(ctx context.Context, f *Factory, o SessionsOptions) error {
	s, info, err := f.openSession(ctx, o.ID)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.Delete(ctx, info.ID); err != nil {
		return notFound(err)
	}
	fmt.Fprintf(f.IO.ErrOut, "deleted session %s (%s, %d messages)\n", info.ID, info.Title, info.Messages)
	return nil
}

// searchHitJSON is one match of `otter sessions search --json`.
type searchHitJSON struct {
	SessionID string    `json:"session_id"`
	Title     string    `json:"title"`
	Cwd       string    `json:"cwd"`
	Seq       int64     `json:"seq"`
	Role      string    `json:"role"`
	Snippet   string    `json:"snippet"`
	Time      time.Time `json:"time"`
}

// SessionsSearch is `otter sessions search QUERY`: the messages of every
// session that hold all its words, best first.
func SessionsSearch(ctx context.Context, f *Factory, o SessionsOptions) error {
	if strings.TrimSpace(o.Query) == "" {
		return ExitCode(2, errors.New("give the words to search for: otter sessions search WORDS"))
	}
	s, _, err := f.openSessions(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	hits, err := s.Search(ctx, o.Query, app.SessionSearchOptions{})
	if err != nil {
		return ExitCode(1, err)
	}
	if o.JSON {
		out := make([]searchHitJSON, 0, len(hits))
		for _, h := range hits {
			out = append(out, searchHitJSON{SessionID: h.Session.ID, Title: h.Session.Title, Cwd: h.Session.Cwd, Seq: h.Seq, Role: string(h.Role), Snippet: h.Snippet, Time: h.Time.UTC()})
		}
		return writeJSON(f.IO.Out, out)
	}
	if len(hits) == 0 {
		fmt.Fprintf(f.IO.ErrOut, "no saved message holds %q\n", o.Query)
		return nil
	}
	now := time.Now()
	for _, h := range hits {
		fmt.Fprintf(f.IO.Out, "%s  %s  (%s, %s)\n    %s\n", h.Session.ID[:8], truncateLine(h.Session.Title, 60), h.Role, app.SessionAge(h.Time, now), truncateLine(h.Snippet, 160))
	}
	return nil
}
