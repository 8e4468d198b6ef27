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
	path, err := s.spill(text)
	if err != nil {
		s.logger.Warn("could not save a long tool output", "err", err)
	}
	return truncated(cut, limit, int64(total), spillWhere(path, err))
}

// truncated is cut, the first limit of total characters of an output, with
// the note that says so and where the whole is (spillWhere).
func truncated(cut string, limit int, total int64, where string) string {
	return cut + "\n\n" + truncNote(limit, total, where)
}

// truncNote is the note a cut output ends with. Its wording is what
// internal/compact looks for to point at the file.
func truncNote(limit int, total int64, where string) string {
	return fmt.Sprintf("[output truncated: showing %d of %d characters; %s]", limit, total, where)
}

// spillWhere words where the whole of a cut output is: the file path, or
// why it was not saved.
func spillWhere(path string, err error) string {
	if err != nil {
		return fmt.Sprintf("it could not be saved (%v)", err)
	}
	return "the full output is in " + path
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
	f, err := CreateSpillFile(s.opts.SpillDir, ".txt")
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("save tool output: %w", err)
	}
	return f.Name(), nil
}

// SpillFile creates a new file in the Set's SpillDir, named like the files
// Spill writes, with suffix (".json") at the end: for an output written as
// it arrives rather than held whole first.
func (s *Set) SpillFile(suffix string) (*os.File, error) {
	return CreateSpillFile(s.opts.SpillDir, suffix)
}

// CreateSpillFile creates a new file (mode 0600) for a tool's output in dir
// ("": otter-outputs in the temporary directory), named for the time and a
// random part so that outputs never overwrite each other.
func CreateSpillFile(dir, suffix string) (*os.File, error) {
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "otter-outputs")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create output directory: %w", err)
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	name := fmt.Sprintf("output-%s-%s%s", time.Now().Format("20060102-150405"), hex.EncodeToString(rnd[:]), suffix)
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("save tool output: %w", err)
	}
	return f, nil
}
