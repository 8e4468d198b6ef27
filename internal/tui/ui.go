package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/ask"
)

// Options configure the UI.
type Options struct {
	// OpenURL opens a URL in the browser (URL-mode elicitation). Nil: the
	// URL is only shown.
	OpenURL func(url string) error
	// ImageDir is where images from tool results are saved. "" disables
	// saving (the placeholder still names type and size).
	ImageDir string
	// Version is shown in the welcome line.
	Version string
	// HistoryFile keeps the inputs across sessions (↑/↓). "" keeps them
	// for this session only.
	HistoryFile string
	// PickSession opens the saved-conversation picker at start (/resume
	// without an ID) when the backend saves conversations.
	PickSession bool
	// Prompt is sent as the first message, as if typed (`otter "PROMPT"`);
	// while a question (the trust prompt) is open it waits in the input.
	Prompt string
	// Input and Output default to the terminal (stdin/stdout).
	Input  io.Reader
	Output io.Writer
	// LookupEnv reads the environment that decides how images are shown
	// (TERM, TERM_PROGRAM, OTTER_IMAGES, …). Nil: os.LookupEnv.
	LookupEnv func(key string) (string, bool)
}

// ErrClosed is returned by the Asker methods once the UI has exited.
var ErrClosed = errors.New("the TUI has exited")

// UI is otter's terminal interface. It implements ask.Asker: the core calls
// those methods from its own goroutines and they block until the person
// answers in a form (or ctx is done). Create it with New before the core
// (which needs the Asker), then call Run.
type UI struct {
	opts Options

	mu      sync.Mutex
	prog    interface{ Send(tea.Msg) }
	ready   chan struct{} // closed once prog is set
	done    chan struct{} // closed when the program has exited
	refresh chan struct{} // coalesced "re-read the backend" signal
	nextID  int
	clock   frameClock // the renderer's ticker, asleep while nothing changes
	// outsideAsked are the @paths outside the project the person was told
	// of once (allowOutside).
	outsideAsked map[string]bool
}

var _ ask.Asker = (*UI)(nil)

// New returns a UI that is not running yet.
func New(opts Options) *UI {
	return &UI{
		opts:    opts,
		ready:   make(chan struct{}),
		done:    make(chan struct{}),
		refresh: make(chan struct{}, 1),
	}
}

// Run shows conv (opened with NewConversation) until the person quits or
// ctx is done.
func (u *UI) Run(ctx context.Context, conv *app.Conversation) error {
	m := newModel(u, conv)
	// The program ends when ctx does: the caller owns the signals. Bubble
	// Tea's own handler of SIGINT and SIGTERM would block sending its quit
	// message to a program that already stopped on ctx (a hang).
	//
	// The person's quit (model.quit) ends it the same way, by canceling
	// progCtx, not with tea.Quit alone: after tea.Quit Bubble Tea (2.0.10,
	// and 2.1.1) waits up to 0.5 s for its input reader to stop, and the
	// reader cannot stop while it holds input read after the quitting key
	// (a key typed just after Enter, an Esc it waits to complete, a mouse
	// event): it blocks handing it to the event loop that has stopped. A
	// canceled program skips that wait, and its last frame, which nobody
	// sees: otter draws on the alternate screen, which the exit leaves.
	// The terminal is restored the same way either way.
	progCtx, endProgram := context.WithCancel(ctx)
	defer endProgram()
	m.endProgram = endProgram
	opts := []tea.ProgramOption{tea.WithContext(progCtx), tea.WithoutSignalHandler()}
	if u.opts.Input != nil {
		opts = append(opts, tea.WithInput(u.opts.Input))
	}
	if u.opts.Output != nil {
		opts = append(opts, tea.WithOutput(u.opts.Output))
	}
	p := tea.NewProgram(m, opts...)
	u.clock.prog = p
	u.attach(p)
	defer u.finish()
	_, err := p.Run()
	u.clock.close()
	if errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, tea.ErrProgramPanic) && progCtx.Err() != nil {
		return nil // quit, or interrupted from outside (SIGTERM): not an error of the UI
	}
	if err != nil {
		return fmt.Errorf("terminal UI: %w", err)
	}
	return nil
}

// attach connects the UI to a running program (tests attach a teatest
// program) and starts forwarding refresh signals.
func (u *UI) attach(p interface{ Send(tea.Msg) }) {
	u.mu.Lock()
	u.prog = p
	u.mu.Unlock()
	close(u.ready)
	go func() {
		for {
			select {
			case <-u.done:
				return
			case <-u.refresh:
				u.send(refreshMsg{})
			}
		}
	}()
}

// finish marks the UI as exited: pending and future questions fail.
func (u *UI) finish() {
	select {
	case <-u.done:
	default:
		close(u.done)
	}
}

// send delivers msg to the program; it returns false when the UI is gone.
func (u *UI) send(msg tea.Msg) bool {
	select {
	case <-u.ready:
	case <-u.done:
		return false
	}
	u.mu.Lock()
	p := u.prog
	u.mu.Unlock()
	p.Send(msg) // returns once the program has exited
	select {
	case <-u.done:
		return false
	default:
		return true
	}
}

// Notify tells the UI that something changed in the core. It accepts
// mcp.Event values (server state, tool list changes) and Reloaded notices.
// It never blocks, so it can be the core's OnEvent callback.
func (u *UI) Notify(ev any) {
	switch ev := ev.(type) {
	case Reloaded:
		go u.send(reloadedMsg{diff: ev.Diff, err: ev.Err, auto: ev.Auto})
	case app.ServerLog:
		// Server log messages go to the log file, not the screen.
	case app.ResourceUpdated:
		go u.send(resourceChanged(ev))
	default:
		select {
		case u.refresh <- struct{}{}:
		default:
		}
	}
}

// question is a modal prompt the core is waiting on.
type question struct {
	id     int
	ctx    context.Context
	build  func(m *model) modal // runs on the event loop
	cancel func()               // answers "cancel" (ctx done, UI quitting)
}

type questionMsg struct{ q *question }
type dismissMsg struct{ id int }

// askQuestion shows a modal built by build and waits for its answer on
// reply. The answer is sent by the modal; on ctx done the modal is
// dismissed and ctx.Err() returned.
func askQuestion[T any](u *UI, ctx context.Context, cancelValue T, build func(m *model, reply func(T)) modal) (T, error) {
	replies := make(chan T, 1)
	reply := func(v T) {
		select {
		case replies <- v:
		default:
		}
	}
	u.mu.Lock()
	u.nextID++
	id := u.nextID
	u.mu.Unlock()
	q := &question{
		id:     id,
		ctx:    ctx,
		build:  func(m *model) modal { return build(m, reply) },
		cancel: func() { reply(cancelValue) },
	}
	if !u.send(questionMsg{q}) {
		return cancelValue, ErrClosed
	}
	select {
	case v := <-replies:
		return v, nil
	case <-ctx.Done():
		go u.send(dismissMsg{id})
		return cancelValue, ctx.Err()
	case <-u.done:
		select {
		case v := <-replies:
			return v, nil
		default:
		}
		return cancelValue, ErrClosed
	}
}

// Elicit implements ask.Eliciter with a modal form built from the schema
// (form mode) or a prompt to open the URL (url mode).
func (u *UI) Elicit(ctx context.Context, req ask.Elicitation) (ask.ElicitReply, error) {
	cancel := ask.ElicitReply{Action: ask.Cancel}
	return askQuestion(u, ctx, cancel, func(m *model, reply func(ask.ElicitReply)) modal {
		if req.Mode == "url" {
			return newURLElicitModal(m, req, u.opts.OpenURL, reply)
		}
		return newElicitModal(m, req, reply)
	})
}

// Login implements ask.LoginPrompter.
func (u *UI) Login(ctx context.Context, req ask.Login) (ask.LoginReply, error) {
	return askQuestion(u, ctx, ask.LoginReply{Choice: ask.LoginLater}, func(m *model, reply func(ask.LoginReply)) modal {
		return newLoginModal(m, req, reply)
	})
}

// ApproveTool implements ask.Approver: Allow once / for this session /
// always / Deny.
func (u *UI) ApproveTool(ctx context.Context, req ask.Permission) (ask.PermissionDecision, error) {
	return askQuestion(u, ctx, ask.Deny, func(m *model, reply func(ask.PermissionDecision)) modal {
		return newPermissionModal(m, req, reply)
	})
}

// ApproveSampling implements ask.Approver for sampling/createMessage.
func (u *UI) ApproveSampling(ctx context.Context, req ask.Sampling) (bool, error) {
	return askQuestion(u, ctx, false, func(m *model, reply func(bool)) modal {
		return newSamplingModal(m, req, reply)
	})
}
