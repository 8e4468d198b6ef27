package session

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/record"
)

// parts is the JSON of the messages.parts column: what a message holds
// besides its text.
type parts struct {
	Images    []imageRef `json:"images,omitempty"`
	ToolCalls []callPart `json:"tool_calls,omitempty"`
	Result    *result    `json:"result,omitempty"`
	// Reasoning is an assistant message's thinking, kept whole (signed,
	// redacted or encrypted) since the provider wants it back as it was.
	Reasoning []reasoningPart `json:"reasoning,omitempty"`
	// Typed and Short are how a user message was shown (record.Shown).
	Typed  string `json:"typed,omitempty"`
	Short  string `json:"short,omitempty"`
	Hidden bool   `json:"hidden,omitempty"`
	// Notice is a notice's kind (record.NoticeKind); absent: information.
	Notice string `json:"notice,omitempty"`
}

// rowMeta is what a row keeps besides its message: how it was shown.
type rowMeta struct {
	shown  record.Shown
	notice record.NoticeKind
}

type reasoningPart struct {
	Text      string `json:"text,omitempty"`
	Signature string `json:"sig,omitempty"`
	Redacted  string `json:"redacted,omitempty"`
	ID        string `json:"id,omitempty"`
	Encrypted string `json:"enc,omitempty"`
}

type callPart struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
	// Item is the provider's own id of the call (llm.ToolCall.ItemID),
	// which pairs it with the reasoning stored with the message.
	Item string `json:"item,omitempty"`
}

type result struct {
	CallID  string     `json:"call_id"`
	Name    string     `json:"name"`
	IsError bool       `json:"is_error,omitempty"`
	Images  []imageRef `json:"images,omitempty"`
	// ElapsedUS is how long the tool ran, in microseconds (0: not known).
	ElapsedUS int64 `json:"elapsed_us,omitempty"`
	// Denied: the call was never run (llm.ToolResult.Denied).
	Denied bool `json:"denied,omitempty"`
}

// imageRef is an image stored as a file next to the database (images are
// not kept in the database itself).
type imageRef struct {
	MIMEType string `json:"mime"`
	File     string `json:"file"` // name in the images directory
	Bytes    int    `json:"bytes"`
}

// imageDir is where images are stored.
func (s *Store) imageDir() string { return filepath.Join(filepath.Dir(s.path), "images") }

// saveImages writes images as files named by their SHA-256 (0600, in a
// 0700 directory) and returns their references.
func (s *Store) saveImages(imgs []llm.Image) ([]imageRef, error) {
	if len(imgs) == 0 {
		return nil, nil
	}
	dir := s.imageDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	refs := make([]imageRef, 0, len(imgs))
	for _, img := range imgs {
		sum := sha256.Sum256(img.Data)
		ext := ".bin"
		if exts, _ := mime.ExtensionsByType(img.MIMEType); len(exts) > 0 {
			ext = exts[len(exts)-1]
		}
		name := hex.EncodeToString(sum[:16]) + ext
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			tmp, err := os.CreateTemp(dir, ".img-*")
			if err != nil {
				return nil, err
			}
			_, werr := tmp.Write(img.Data)
			cerr := tmp.Close()
			if err := errors.Join(werr, cerr, os.Rename(tmp.Name(), p)); err != nil {
				os.Remove(tmp.Name())
				return nil, err
			}
		}
		refs = append(refs, imageRef{MIMEType: img.MIMEType, File: name, Bytes: len(img.Data)})
	}
	return refs, nil
}

// loadImages reads images back; one whose file is gone is left out and
// noted in the returned text.
func (s *Store) loadImages(refs []imageRef) ([]llm.Image, string) {
	var imgs []llm.Image
	var missing strings.Builder
	for _, r := range refs {
		data, err := os.ReadFile(filepath.Join(s.imageDir(), filepath.Base(r.File)))
		if err != nil {
			fmt.Fprintf(&missing, "\n[%s image, %d bytes, no longer available]", r.MIMEType, r.Bytes)
			continue
		}
		imgs = append(imgs, llm.Image{MIMEType: r.MIMEType, Data: data})
	}
	return imgs, missing.String()
}

// encode returns the text and parts columns of a message and how it was
// shown.
func (s *Store) encode(m llm.Message, meta rowMeta) (text string, partsJSON any, err error) {
	p := parts{Typed: meta.shown.Typed, Short: meta.shown.Short, Hidden: meta.shown.Hidden, Notice: string(meta.notice)}
	text = m.Text
	if m.Role == llm.RoleTool {
		if len(m.ToolResults) != 1 {
			return "", nil, fmt.Errorf("a stored tool message holds one result, not %d", len(m.ToolResults))
		}
		r := m.ToolResults[0]
		text = r.Text
		p.Result = &result{CallID: r.CallID, Name: r.Name, IsError: r.IsError, ElapsedUS: r.Elapsed.Microseconds(), Denied: r.Denied}
		if p.Result.Images, err = s.saveImages(r.Images); err != nil {
			return "", nil, err
		}
	}
	for _, c := range m.ToolCalls {
		p.ToolCalls = append(p.ToolCalls, callPart{ID: c.ID, Name: c.Name, Args: c.Args, Item: c.ItemID})
	}
	for _, r := range m.Reasoning {
		p.Reasoning = append(p.Reasoning, reasoningPart(r))
	}
	if p.Images, err = s.saveImages(m.Images); err != nil {
		return "", nil, err
	}
	if p.Result == nil && len(p.ToolCalls) == 0 && len(p.Images) == 0 && len(p.Reasoning) == 0 && p.Typed == "" && p.Short == "" && !p.Hidden && p.Notice == "" {
		return text, nil, nil // a plain text message: no JSON to decode later
	}
	b, err := json.Marshal(p)
	if err != nil {
		return "", nil, err
	}
	return text, string(b), nil
}

// decode rebuilds a row's message, and how it was shown, from its
// columns into e. The parts are read with gjson, without reflection:
// resuming a long session decodes thousands.
func (s *Store) decode(e *record.Entry, role, text string, partsJSON sql.NullString, interrupted int64) error {
	m, err := s.decodeMessage(e, role, text, partsJSON, interrupted)
	e.Message = m
	return err
}

func (s *Store) decodeMessage(e *record.Entry, role, text string, partsJSON sql.NullString, interrupted int64) (llm.Message, error) {
	m := llm.Message{Role: llm.Role(role), Text: text, Interrupted: interrupted != 0, Abandoned: interrupted == interruptedAbandoned}
	if !partsJSON.Valid || partsJSON.String == "" {
		if m.Role == llm.RoleTool {
			return m, fmt.Errorf("a tool result without its call")
		}
		return m, nil
	}
	if !gjson.Valid(partsJSON.String) {
		return m, fmt.Errorf("its parts are not valid JSON")
	}
	// One pass over each object (a Get per key would scan it again for
	// every key): resuming decodes thousands of these.
	var calls, res, imgs gjson.Result
	gjson.Parse(partsJSON.String).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "reasoning":
			v.ForEach(func(_, r gjson.Result) bool {
				m.Reasoning = append(m.Reasoning, llm.Reasoning{Text: r.Get("text").String(), Signature: r.Get("sig").String(),
					Redacted: r.Get("redacted").String(), ID: r.Get("id").String(), Encrypted: r.Get("enc").String()})
				return true
			})
		case "images":
			imgs = v
		case "tool_calls":
			calls = v
		case "result":
			res = v
		case "typed":
			e.Shown.Typed = v.String()
		case "short":
			e.Shown.Short = v.String()
		case "hidden":
			e.Shown.Hidden = v.Bool()
		case "notice":
			e.Notice = record.NoticeKind(v.String())
		}
		return true
	})
	if imgs.Exists() {
		var missing string
		m.Images, missing = s.loadImages(imageRefs(imgs))
		m.Text += missing
	}
	if calls.IsArray() {
		calls.ForEach(func(_, c gjson.Result) bool {
			var tc llm.ToolCall
			c.ForEach(func(k, v gjson.Result) bool {
				switch k.Str {
				case "id":
					tc.ID = v.String()
				case "name":
					tc.Name = v.String()
				case "args":
					tc.Args = json.RawMessage(v.Raw)
				case "item":
					tc.ItemID = v.String()
				}
				return true
			})
			m.ToolCalls = append(m.ToolCalls, tc)
			return true
		})
	}
	if res.Exists() {
		r := llm.ToolResult{Text: text}
		var rimgs gjson.Result
		res.ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "call_id":
				r.CallID = v.String()
			case "name":
				r.Name = v.String()
			case "is_error":
				r.IsError = v.Bool()
			case "elapsed_us":
				r.Elapsed = time.Duration(v.Int()) * time.Microsecond
			case "denied":
				r.Denied = v.Bool()
			case "images":
				rimgs = v
			}
			return true
		})
		if rimgs.Exists() {
			var missing string
			r.Images, missing = s.loadImages(imageRefs(rimgs))
			r.Text += missing
		}
		m.Text = ""
		m.ToolResults = []llm.ToolResult{r}
	} else if m.Role == llm.RoleTool {
		return m, fmt.Errorf("a tool result without its call")
	}
	return m, nil
}

// imageRefs reads a JSON array of imageRef.
func imageRefs(v gjson.Result) []imageRef {
	var refs []imageRef
	for _, r := range v.Array() {
		refs = append(refs, imageRef{MIMEType: r.Get("mime").String(), File: r.Get("file").String(), Bytes: int(r.Get("bytes").Int())})
	}
	return refs
}

// insertMessageSQL adds a message at the end of a session; the
// messages_count trigger updates the session's counters in the same
// statement.
const insertMessageSQL = `INSERT INTO messages (session_id, seq, role, text, parts, interrupted, input_tokens, output_tokens, created)
	VALUES (?1, (SELECT messages + 1 FROM sessions WHERE id = ?1), ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING seq`

// Append saves a message at the end of a session and returns its sequence
// number. A llm.RoleTool message must hold exactly one result (save each
// result as it arrives); RoleNotice saves a notice. Images are saved as
// files next to the database.
func (s *Store) Append(ctx context.Context, id string, m llm.Message, u llm.Usage) (int64, error) {
	return s.appendRow(ctx, id, m, u, rowMeta{})
}

// appendRow is Append with how the message was shown.
func (s *Store) appendRow(ctx context.Context, id string, m llm.Message, u llm.Usage, meta rowMeta) (int64, error) {
	text, p, err := s.encode(m, meta)
	if err != nil {
		return 0, s.fail("save a message", err)
	}
	ins, err := s.stmt(ctx, insertMessageSQL)
	if err != nil {
		return 0, s.fail("save a message", err)
	}
	// The statement is stepped to its end, not reset after its row (as
	// QueryRow does): SQLite runs its automatic checkpoint only when a
	// statement completes. Reset after its row, the INSERT committed
	// without it, the write-ahead log grew by every message (500 MB for
	// 10,000) and the next read to complete — resuming — paid for
	// copying all of it back into the database.
	seq := int64(-1)
	rows, err := ins.QueryContext(ctx, id, string(m.Role), text, p, interruptedColumn(m), u.InputTokens, u.OutputTokens, millis(time.Now()))
	if err == nil {
		for rows.Next() {
			if err == nil {
				err = rows.Scan(&seq)
			}
		}
		err = errors.Join(err, rows.Err(), rows.Close())
	}
	if err == nil && seq < 0 {
		err = errors.New("the database returned no sequence number for the message")
	}
	if err != nil && strings.Contains(err.Error(), "NOT NULL constraint failed: messages.seq") {
		err = fmt.Errorf("%w %q (was it deleted?)", record.ErrNotFound, id)
	}
	if err != nil {
		return 0, s.fail("save a message", err)
	}
	return seq, nil
}

// The interrupted column: 0, 1 (llm.Message.Interrupted) or
// interruptedAbandoned (Abandoned too: a draft, see Recorder.RecordDraft).
const interruptedAbandoned = 2

func interruptedColumn(m llm.Message) int64 {
	switch {
	case m.Abandoned:
		return interruptedAbandoned
	case m.Interrupted:
		return 1
	}
	return 0
}

// Rewrite replaces the message at seq of a session with m and its usage:
// an answer saved as a draft while it streamed becomes the answer. The
// search index and the session's token counts follow.
func (s *Store) Rewrite(ctx context.Context, id string, seq int64, m llm.Message, u llm.Usage) error {
	text, p, err := s.encode(m, rowMeta{})
	if err != nil {
		return s.fail("save a message", err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail("save a message", err)
	}
	defer tx.Rollback()
	var row, oldIn, oldOut int64
	var old string
	err = tx.QueryRowContext(ctx, "SELECT id, text, input_tokens, output_tokens FROM messages WHERE session_id = ? AND seq = ?", id, seq).Scan(&row, &old, &oldIn, &oldOut)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: message %d of session %q (was it deleted?)", record.ErrNotFound, seq, id)
	}
	for _, st := range []struct {
		q    string
		args []any
	}{
		{"INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', ?, ?)", []any{row, old}},
		{"UPDATE messages SET text = ?, parts = ?, interrupted = ?, input_tokens = ?, output_tokens = ? WHERE id = ?",
			[]any{text, p, interruptedColumn(m), u.InputTokens, u.OutputTokens, row}},
		{"INSERT INTO messages_fts(rowid, text) VALUES (?, ?)", []any{row, text}},
		{"UPDATE sessions SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, updated = max(updated, ?) WHERE id = ?",
			[]any{u.InputTokens - oldIn, u.OutputTokens - oldOut, millis(time.Now()), id}},
	} {
		if err != nil {
			break
		}
		_, err = tx.ExecContext(ctx, st.q, st.args...)
	}
	if err != nil {
		return s.fail("save a message", err)
	}
	return s.fail("save a message", tx.Commit())
}

// entriesSQL reads a session's rows after a sequence number, in order
// (the UNIQUE (session_id, seq) index gives them sorted: no sort step).
const entriesSQL = `SELECT seq, role, text, parts, interrupted, input_tokens, output_tokens, created
	FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq`

// Entries returns a session's stored rows in order, those with Seq > after.
//
// Resuming a long session reads thousands of rows, so the loop allocates
// nothing per row of its own: each row is scanned straight into its place
// in the result (a local Entry handed to Scan would escape to the heap and
// be copied), into scan variables shared by all rows.
func (s *Store) Entries(ctx context.Context, id string, after int64) ([]record.Entry, error) {
	var n int // the number of rows, to size the slice (one connection: read it first)
	s.db.QueryRowContext(ctx, "SELECT messages FROM sessions WHERE id = ?", id).Scan(&n)
	q, err := s.stmt(ctx, entriesSQL)
	if err != nil {
		return nil, s.fail("read a session", err)
	}
	rows, err := q.QueryContext(ctx, id, after)
	if err != nil {
		return nil, s.fail("read a session", err)
	}
	defer rows.Close()
	out := make([]record.Entry, 0, n)
	var (
		role, text           string
		p                    sql.NullString
		interrupted, created int64
	)
	for rows.Next() {
		out = append(out, record.Entry{})
		e := &out[len(out)-1]
		if err := rows.Scan(&e.Seq, &role, &text, &p, &interrupted, &e.Usage.InputTokens, &e.Usage.OutputTokens, &created); err != nil {
			return nil, s.fail("read a session", err)
		}
		e.Time = fromMillis(created)
		if err := s.decode(e, role, text, p, interrupted); err != nil {
			return nil, s.fail(fmt.Sprintf("read message %d of session %s", e.Seq, id), err)
		}
	}
	return out, s.fail("read a session", rows.Err())
}

// History turns stored rows into the conversation a provider accepts:
// notices are left out, the tool results after an assistant message are
// grouped into one llm.RoleTool message in the order of its calls, a call
// without a result gets an InterruptedResult error result, and a prompt
// whose answer was never saved gets an empty answer marked Interrupted.
func History(entries []record.Entry) []llm.Message {
	return appendHistory(make([]llm.Message, 0, len(entries)), entries)
}

// appendHistory appends History(entries) to out: a caller that puts a
// compaction's summary first sizes out once instead of copying the whole
// conversation behind it.
func appendHistory(out []llm.Message, entries []record.Entry) []llm.Message {
	start := len(out) // what out holds already is not this conversation's
	for i := 0; i < len(entries); {
		m := entries[i].Message
		i++
		switch m.Role {
		case record.RoleNotice:
			continue
		case llm.RoleTool:
			continue // a result without its call (before a compaction boundary)
		}
		if m.Role == llm.RoleUser && unanswered(out[start:]) {
			out = append(out, interruptedAnswer)
		}
		out = append(out, m)
		if m.Role != llm.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		// The results that follow, in the order of the calls (a call has
		// a few results at most: a scan beats a map).
		results := make([]llm.ToolResult, len(m.ToolCalls))
		found := make([]bool, len(m.ToolCalls))
		for ; i < len(entries); i++ {
			e := entries[i].Message
			if e.Role == record.RoleNotice {
				continue
			}
			if e.Role != llm.RoleTool {
				break
			}
			for _, r := range e.ToolResults {
				for j, c := range m.ToolCalls {
					if c.ID == r.CallID {
						results[j], found[j] = r, true
					}
				}
			}
		}
		for j, c := range m.ToolCalls {
			if !found[j] {
				results[j] = llm.ToolResult{CallID: c.ID, Name: c.Name, Text: record.InterruptedResult, IsError: true}
			}
		}
		out = append(out, llm.Message{Role: llm.RoleTool, ToolResults: results})
	}
	if unanswered(out[start:]) {
		out = append(out, interruptedAnswer)
	}
	return out
}

// interruptedAnswer stands for an answer otter never saved (it stopped
// while the answer streamed), so that the model is told and the roles keep
// alternating.
var interruptedAnswer = llm.Message{Role: llm.RoleAssistant, Interrupted: true, Abandoned: true}

// unanswered reports whether the conversation ends with a user message.
func unanswered(h []llm.Message) bool {
	return len(h) > 0 && h[len(h)-1].Role == llm.RoleUser
}

// History returns a session's whole conversation as a provider accepts it
// (see the function History).
func (s *Store) History(ctx context.Context, id string) ([]llm.Message, error) {
	e, err := s.Entries(ctx, id, 0)
	if err != nil {
		return nil, err
	}
	return History(e), nil
}
