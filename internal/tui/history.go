package tui

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
)

// maxHistory is how many inputs the history file keeps.
const maxHistory = 1000

// loadHistory reads the input history: one JSON string per line (inputs
// may span lines). A missing file is an empty history.
func loadHistory(path string) []string {
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		if !os.IsNotExist(err) {
			slog.Warn("reading the input history", "path", path, "err", err)
		}
		return nil
	}
	defer f.Close()
	var h []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		var s string
		if json.Unmarshal(sc.Bytes(), &s) == nil && s != "" {
			h = append(h, s)
		}
	}
	if len(h) > maxHistory {
		h = h[len(h)-maxHistory:]
	}
	return h
}

// appendHistory adds one input to the history file, rewriting the file
// when it has grown well past maxHistory.
func appendHistory(path string, all []string) {
	if path == "" || len(all) == 0 {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		slog.Warn("saving the input history", "err", err)
		return
	}
	flag := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	lines := all[len(all)-1:]
	if len(all) >= maxHistory && len(all)%100 == 0 {
		flag = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		lines = all[max(len(all)-maxHistory, 0):]
	}
	f, err := os.OpenFile(path, flag, 0o600)
	if err != nil {
		slog.Warn("saving the input history", "err", err)
		return
	}
	w := bufio.NewWriter(f)
	for _, l := range lines {
		b, _ := json.Marshal(l)
		w.Write(append(b, '\n'))
	}
	if err := w.Flush(); err != nil {
		slog.Warn("saving the input history", "err", err)
	}
	f.Close()
}
