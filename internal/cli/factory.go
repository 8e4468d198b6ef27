package cli

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/iostreams"
	"github.com/otter-sh/otter/internal/secret"
)

// Factory is what every command shares: its streams, otter's version and
// the global flags (--config, --cwd, --log-file, --log-level).
type Factory struct {
	IO      *iostreams.IOStreams
	Version string
	// Parts are the MCP client and session database an App is built on
	// (internal/appparts' Default, given by cmd/otter).
	Parts app.Parts

	ConfigFile string // --config: an extra config file, above every scope
	WorkDir    string // --cwd
	LogFile    string // --log-file: where slog writes (default: stderr for headless commands, a file for the TUI)
	LogLevel   string // --log-level
	// LogLevelSet is true when --log-level was given.
	LogLevelSet bool
	// SandboxLauncher is otter's own executable, which confines stdio
	// servers (package sandbox); "" runs them unconfined (in-process
	// tests, whose binary is no launcher).
	SandboxLauncher string
}

// LoadOptions are the config.LoadOptions of the global flags.
func (f *Factory) LoadOptions() config.LoadOptions {
	return config.LoadOptions{Paths: config.DefaultPaths(), WorkDir: f.WorkDir, Extra: f.ConfigFile, ExtraHint: configFileHint}
}

// AppOptions are the app.Options of the global flags; the command adds
// the rest.
func (f *Factory) AppOptions(logger *slog.Logger) app.Options {
	return app.Options{Parts: f.Parts, WorkDir: f.WorkDir, ConfigFile: f.ConfigFile, ConfigFileHint: configFileHint, Logger: logger, Version: f.Version,
		SandboxLauncher: f.SandboxLauncher}
}

// configFileHint is what to do when the --config file does not exist.
const configFileHint = "check the path given to --config"

// ExitError carries a process exit code: 1 means "the tool (or the turn)
// reported an error", 2 "usage, config or connection error".
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode wraps err so that otter exits with code; nil stays nil.
func ExitCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &ExitError{Code: code, Err: err}
}

// Reported is an error the user was already told about on stderr: main
// prints nothing more for it.
type Reported struct{ Err error }

func (Reported) Error() string   { return "" }
func (r Reported) Unwrap() error { return r.Err }

// LogSetup says where a command's logs go when --log-file is not given.
type LogSetup struct {
	// Stderr receives the logs of headless commands. Nil means the command
	// owns the terminal (the TUI): logs then go to DefaultFile.
	Stderr      io.Writer
	DefaultFile string
	// Level applies unless --log-level is given.
	Level slog.Level
	JSON  bool // JSON lines (otter mcp serve) instead of text
}

// Logger builds the command's logger, makes it slog's default and returns
// a function that closes the log file, if one was opened. Logs never go
// to stdout: that carries results, the TUI or an MCP stream.
func (f *Factory) Logger(s LogSetup) (*slog.Logger, func(), error) {
	path := f.LogFile
	if path == "" && s.Stderr == nil {
		path = s.DefaultFile
	}
	level := s.Level
	if f.LogLevelSet || path != "" {
		if err := level.UnmarshalText([]byte(strings.ToLower(f.LogLevel))); err != nil {
			return nil, nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", f.LogLevel)
		}
	}
	w, closeFn := s.Stderr, func() {}
	if path != "" {
		if f.LogFile == "" { // otter's own directory; not one --log-file names
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return nil, nil, fmt.Errorf("creating the log directory: %w", err)
			}
		}
		file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("opening the log file: %w (choose another with --log-file)", err)
		}
		w, closeFn = file, func() { file.Close() }
	}
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: maskLogAttr}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if s.JSON {
		h = slog.NewJSONHandler(w, opts)
	}
	logger := slog.New(h)
	slog.SetDefault(logger)
	return logger, closeFn, nil
}

// maskLogAttr masks secrets by their structure (secret.MaskText) in each
// string and error of a log record, the message included, before the log
// file sees them: whichever package logged a URL or an error quoting one.
func maskLogAttr(_ []string, a slog.Attr) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindString:
		a.Value = slog.StringValue(secret.MaskText(a.Value.String()))
	case slog.KindAny:
		if err, ok := a.Value.Any().(error); ok {
			a.Value = slog.StringValue(secret.MaskText(err.Error()))
		}
	}
	return a
}

// headlessLogger is the logger of headless commands: warnings and errors
// on stderr, so that results are not buried; --log-level or --log-file for
// more.
func (f *Factory) headlessLogger() (*slog.Logger, func(), error) {
	return f.Logger(LogSetup{Stderr: f.IO.ErrOut, Level: slog.LevelWarn})
}
