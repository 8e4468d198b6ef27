package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
)

// TestThirtyTurnsInASmallWindow is issue 19's "done when", through the real
// binary: 30 consecutive `otter -c -p` turns of long answers against a
// model with a 4,000-token window (the fake APIs refuse what does not fit,
// in each provider's words) all succeed; after the first compaction no
// request passes the window; `otter sessions show --json` still holds all
// 30 questions, the compactions, and their notices.
func TestThirtyTurnsInASmallWindow(t *testing.T) {
	t.Parallel()
	bin := testpeer.Otter(t)
	for _, kind := range llmtest.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			const window, turns = 4000, 30
			srv := llmtest.New(t, kind)
			srv.ContextWindow = window
			answerNumbered(srv, func(n int) llmtest.Reply {
				line := fmt.Sprintf("Answer %d: sea otters wrap themselves in kelp so that they do not drift while they sleep. ", n)
				text := strings.Repeat(line, 2400/len(line)+1)[:2400]
				return llmtest.Reply{Text: []string{text[:1200], text[1200:]}}
			})
			cfg := promptConfig(t, srv, fmt.Sprintf("context_window = %d\nmax_output_tokens = 1000\n", window))
			home := t.TempDir()
			env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_DATA_HOME="+filepath.Join(home, "data"),
				"XDG_STATE_HOME="+filepath.Join(home, "state"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"))
			otter := func(args ...string) ([]byte, error) {
				cmd := exec.Command(bin, append([]string{"--config", cfg}, args...)...)
				cmd.Env, cmd.Dir = env, home
				var stderr strings.Builder
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					return out, fmt.Errorf("%w\n%s", err, stderr.String())
				}
				return out, nil
			}
			for i := range turns {
				args := []string{"-c", "-p", fmt.Sprintf("Question %d: tell me at length about otters.", i+1), "--output-format", "json"}
				if i == 0 {
					args = args[1:]
				}
				out, err := otter(args...)
				if err != nil {
					t.Fatalf("turn %d: %v", i+1, err)
				}
				var res struct {
					IsError bool            `json:"is_error"`
					Usage   map[string]int  `json:"usage"`
					Cost    json.RawMessage `json:"cost_usd"`
				}
				if err := json.Unmarshal(out, &res); err != nil || res.IsError || res.Usage["input_tokens"] == 0 || string(res.Cost) != "null" {
					t.Fatalf("turn %d: %s (%v)", i+1, out, err)
				}
			}
			compacted := false
			for i, r := range srv.Requests() {
				if r.Refused != "" {
					t.Errorf("request %d was refused: %s", i, r.Refused)
				}
				if compacted && r.InputTokens+r.MaxTokens > window {
					t.Errorf("request %d after the first compaction: %d + %d tokens > %d", i, r.InputTokens, r.MaxTokens, window)
				}
				compacted = compacted || strings.Contains(r.System, "You compact a conversation")
			}
			if !compacted {
				t.Fatal("30 long turns in a 4,000-token window were never compacted")
			}
			out, err := otter("sessions", "list", "--json")
			var list []struct {
				ID string `json:"id"`
			}
			if err != nil || json.Unmarshal(out, &list) != nil || len(list) != 1 {
				t.Fatalf("sessions list: %v\n%s", err, out)
			}
			out, err = otter("sessions", "show", "--json", list[0].ID)
			var show struct {
				Messages []struct {
					Role    string `json:"role"`
					Content string `json:"content"`
				} `json:"messages"`
				Compactions []struct {
					UpTo    int64  `json:"upto_seq"`
					Summary string `json:"summary"`
				} `json:"compactions"`
			}
			if err != nil || json.Unmarshal(out, &show) != nil {
				t.Fatalf("sessions show: %v\n%s", err, out)
			}
			var questions []string
			noticed := false
			for _, m := range show.Messages {
				if m.Role == "user" {
					questions = append(questions, m.Content)
				}
				// otter -p saves the compaction's notice as the TUI does
				// (app saves it), so a resumed conversation says why the
				// model forgot the details.
				noticed = noticed || (m.Role == "notice" && strings.HasPrefix(m.Content, "compacted the conversation because it neared the model's context window"))
			}
			if !noticed {
				t.Errorf("sessions show holds no notice of the automatic compaction: %+v", show.Messages)
			}
			if len(questions) != turns || !strings.HasPrefix(questions[0], "Question 1:") || !strings.HasPrefix(questions[turns-1], "Question 30:") {
				t.Errorf("sessions show holds %d user messages, want all %d: %q", len(questions), turns, questions)
			}
			if len(show.Compactions) == 0 || show.Compactions[0].UpTo <= 0 || !strings.Contains(show.Compactions[0].Summary, "Goals") {
				t.Errorf("sessions show --json has no compaction with its boundary and summary: %+v", show.Compactions)
			}
			t.Logf("%d requests, %d compactions", len(srv.Requests()), len(show.Compactions))
		})
	}
}

// answerNumbered makes srv answer each request with answer(n), n counting
// the answers from 1, and a compaction request with a short summary of a
// conversation about otters.
func answerNumbered(srv *llmtest.Server, answer func(n int) llmtest.Reply) {
	var mu sync.Mutex
	n := 0
	srv.Respond = func(r llmtest.Request) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(r.System, "You compact a conversation") {
			return llmtest.Reply{Text: []string{"## Goals\nThe user asks about otters, one numbered question per turn.\n## Open tasks\nAnswer the next one."}}
		}
		n++
		return answer(n)
	}
}
