package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// logSetup says where a command's logs go when --log-file is not given.
type logSetup struct {
	// stderr receives the logs of headless commands. Nil means the command
	// owns the terminal (the TUI): logs then go to defaultFile.
	stderr      io.Writer
	defaultFile string
	// level applies unless --log-level is given.
	level slog.Level
	json  bool // JSON lines (otter mcp serve) instead of text
}

// setupLogging builds the command's logger, makes it slog's default and
// returns a function that closes the log file, if one was opened. Logs
// never go to stdout: that carries results, the TUI or an MCP stream.
func setupLogging(cmd *cobra.Command, s logSetup) (*slog.Logger, func(), error) {
	path := flags.logFile
	if path == "" && s.stderr == nil {
		path = s.defaultFile
	}
	level := s.level
	if f := cmd.Flags().Lookup("log-level"); (f != nil && f.Changed) || path != "" {
		if err := level.UnmarshalText([]byte(strings.ToLower(flags.logLevel))); err != nil {
			return nil, nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", flags.logLevel)
		}
	}
	w, closeFn := s.stderr, func() {}
	if path != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, nil, fmt.Errorf("creating the log directory: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("opening the log file: %w (choose another with --log-file)", err)
		}
		w, closeFn = f, func() { f.Close() }
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if s.json {
		h = slog.NewJSONHandler(w, opts)
	}
	logger := slog.New(h)
	slog.SetDefault(logger)
	return logger, closeFn, nil
}

// mcpLogger is the logger of headless commands: warnings and errors on
// stderr, so that results are not buried; --log-level or --log-file for more.
func mcpLogger(cmd *cobra.Command) (*slog.Logger, func(), error) {
	return setupLogging(cmd, logSetup{stderr: cmd.ErrOrStderr(), level: slog.LevelWarn})
}
