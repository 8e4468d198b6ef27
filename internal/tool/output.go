package tool

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"
	"unicode/utf8"

	"github.com/otter-sh/otter/internal/render"
)

// TextForModel renders a result as text for a model's context, capped at
// the Set's MaxOutputChars. A longer output is cut; the full text is
// written to a file in SpillDir and the cut text ends with a note naming
// that file, so neither the model nor the person loses anything.
func (s *Set) TextForModel(res *Result) string {
	text := render.Model(res)
	limit := s.opts.MaxOutputChars
	if len(text) <= limit { // bytes ≥ characters
		return text
	}
	total := utf8.RuneCountInString(text)
	if total <= limit {
		return text
	}
	cut := text[:runeOffset(text, limit)]
	where := "it could not be saved"
	if path, err := s.spill(text); err != nil {
		s.logger.Warn("could not save a long tool output", "err", err)
		where = fmt.Sprintf("it could not be saved (%v)", err)
	} else {
		where = "the full output is in " + path
	}
	return fmt.Sprintf("%s\n\n[output truncated: showing %d of %d characters; %s]", cut, limit, total, where)
}

// runeOffset returns the byte offset of the n-th rune of s.
func runeOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// Spill writes text to a new file in the Set's SpillDir and returns its
// path: where the whole of an output lives when a model is shown less of
// it (a cut result, a result elided by a compaction).
func (s *Set) Spill(text string) (string, error) { return s.spill(text) }

func (s *Set) spill(text string) (string, error) {
	dir := s.opts.SpillDir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "otter-outputs")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create output directory: %w", err)
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	name := fmt.Sprintf("output-%s-%s.txt", time.Now().Format("20060102-150405"), hex.EncodeToString(rnd[:]))
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return "", fmt.Errorf("save tool output: %w", err)
	}
	return path, nil
}
