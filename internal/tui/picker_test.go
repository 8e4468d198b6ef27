package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/record"
)

// TestSessionPicker: /resume alone opens the picker over a real session
// database, this directory's sessions first; typing a word that only an
// answer holds finds its session by the full-text index; enter continues it
// and its transcript shows; esc closes the picker without resuming.
func TestSessionPicker(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	proj := filepath.Join(base, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	b := &fakeHost{workDir: proj}
	h := start(t, b)
	ctx := context.Background()
	store, err := b.app.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Three sessions: two here, one elsewhere (saved last, the newest, so
	// only the picker's order puts it last).
	seed := func(cwd, title string, msgs ...string) record.Info {
		t.Helper()
		info, err := store.Create(ctx, record.Info{Cwd: cwd, Title: title, FirstPrompt: msgs[0]})
		if err != nil {
			t.Fatal(err)
		}
		for i, text := range msgs {
			role := llm.RoleUser
			if i%2 == 1 {
				role = llm.RoleAssistant
			}
			if _, err := store.Append(ctx, info.ID, llm.Message{Role: role, Text: text}, llm.Usage{}); err != nil {
				t.Fatal(err)
			}
		}
		return info
	}
	otters := seed(proj, "Otter facts", "tell me about otters", "They hold hands while they sleep, a habit called rafting.")
	seed(proj, "Beaver dams", "how do beavers build dams?", "With branches and mud.")
	seed(filepath.Join(base, "elsewhere"), "Elsewhere chat", "hello from elsewhere", "Hello.")

	h.enterLine("/resume")
	s := h.waitFor("Resume a conversation", "Otter facts", "Beaver dams", "Elsewhere chat", "tell me about otters", "2 msgs")
	if o, e := strings.Index(s, "Otter facts"), strings.Index(s, "Elsewhere chat"); e < o || strings.Index(s, "Beaver dams") > e {
		t.Errorf("this directory's sessions are not listed first:\n%s", s)
	}
	// Esc closes it and resumes nothing.
	h.press("esc")
	h.waitGone("Resume a conversation")
	if r, _ := b.conv.Resumed(); r.ID != "" {
		t.Fatalf("esc resumed %s", r.ID)
	}

	// "raft" is only inside an answer (as "rafting"): the search finds it.
	h.enterLine("/resume")
	h.waitFor("Resume a conversation", "Beaver dams")
	h.typeText("raft")
	s = h.waitGone("Beaver dams")
	if !strings.Contains(s, "Otter facts") || strings.Contains(s, "Elsewhere chat") {
		t.Fatalf("searching raft:\n%s", s)
	}
	h.typeText("zzz")
	h.waitFor(`no saved conversation mentions "raftzzz"`)
	for range 3 {
		h.tm.Send(tea.KeyPressMsg{Code: tea.KeyBackspace})
	}
	h.waitFor("Otter facts")
	h.press("enter")
	s = h.waitFor("Continuing session "+otters.ID[:8], "They hold hands while they sleep", "tell me about otters")
	if strings.Contains(s, "Resume a conversation") {
		t.Errorf("the picker stays open after enter:\n%s", s)
	}
	if r, _ := b.conv.Resumed(); r.ID != otters.ID {
		t.Errorf("resumed %q, want %q", r.ID, otters.ID)
	}
	if hist := b.conv.Messages(); len(hist) != 2 || hist[1].Text != "They hold hands while they sleep, a habit called rafting." {
		t.Errorf("the agent continues from %+v", hist)
	}
}

// TestSessionPickerAtStart: otter -r without an ID opens the picker first.
func TestSessionPickerAtStart(t *testing.T) {
	t.Parallel()
	h := start(t, &fakeHost{}, Options{PickSession: true, ImageDir: t.TempDir()})
	h.waitFor("Resume a conversation", "no saved conversation yet", "esc close")
	h.press("esc")
	h.waitGone("Resume a conversation")
}

// TestSessionPickerSessionsOff: with saving turned off, /resume says so
// instead of opening an empty picker.
func TestSessionPickerSessionsOff(t *testing.T) {
	t.Parallel()
	h := start(t, &fakeHost{config: "[sessions]\nenabled = false\n"})
	h.enterLine("/resume")
	if s := h.waitFor("saving conversations is turned off"); strings.Contains(s, "Resume a conversation") {
		t.Errorf("the picker opened:\n%s", s)
	}
}
