package mcphost

// Cancellations on close, one of the SDK work-arounds (see
// sdkobserver.go). When a request's context ends, the go-sdk (v1.8)
// retires the request at once and sends notifications/cancelled from a
// goroutine of its own, off the caller's path. Should the session close
// before that goroutine has begun to write (the headless CLI returns from
// a timed-out call and exits; a server is turned off right after a call
// was interrupted), the notification is never sent and the server works on
// for nobody. So a connection keeps count: a client middleware counts the
// requests that ended with their context (each one owes the server a
// notification) and knows the requests under way (one whose context has
// ended is about to owe one), the transport counts the
// notifications/cancelled it has written, and close first gives the owed
// ones a bounded moment to go out. (MCPGODEBUG=blockingcancelnotify=1
// would make the SDK send them before the call returns, but it is read
// when the SDK's package is initialised, before otter could set it.)

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	methodCancelled = "notifications/cancelled"
	// cancelFlushTimeout bounds how long closing a connection waits for the
	// notifications/cancelled still owed, all of them together.
	cancelFlushTimeout = time.Second
	// cancelLostAfter is when an owed notification is given up on: one not
	// written by then never will be (the SDK gives up after 5 s; one it
	// refuses before the transport, the connection being broken, is never
	// counted as sent).
	cancelLostAfter = 6 * time.Second
	// cancelMaxBody bounds the HTTP bodies looked into for a cancellation,
	// which is a small message.
	cancelMaxBody = 1024
)

var markCancelled = []byte(`"` + methodCancelled + `"`)

// cancelWatch counts one connection's owed and written cancellations.
type cancelWatch struct {
	mu        sync.Mutex
	cancelled int       // requests that ended with their context
	sent      int       // notifications/cancelled written (or failed to be)
	last      time.Time // when the latest such request ended
	nextID    uint64
	underWay  map[uint64]context.Context // requests not yet returned
	change    chan struct{}              // closed and replaced at each change, while watched
	watched   bool                       // a flush is waiting on change
}

func newCancelWatch() *cancelWatch {
	return &cancelWatch{change: make(chan struct{}), underWay: make(map[uint64]context.Context)}
}

func (w *cancelWatch) update(fn func()) {
	w.mu.Lock()
	fn()
	if w.watched { // no channel churn on every call, only while closing
		close(w.change)
		w.change = make(chan struct{})
	}
	w.mu.Unlock()
}

// begin records a request under way; end(id, cancelled) its return, and
// whether it ended with its context.
func (w *cancelWatch) begin(ctx context.Context) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.nextID++
	w.underWay[w.nextID] = ctx
	return w.nextID
}

func (w *cancelWatch) end(id uint64, cancelled bool) {
	w.update(func() {
		delete(w.underWay, id)
		if cancelled {
			w.cancelled++
			w.last = time.Now()
		}
	})
}

// notificationSent counts a notifications/cancelled the transport wrote,
// or tried to write and failed: either way it is no longer on its way.
func (w *cancelWatch) notificationSent() {
	w.update(func() { w.sent++ })
}

// owed reports whether notifications are still on their way, and the
// channel that is closed at the next change. A request whose context has
// ended but that has not returned yet counts as owing one (its
// notification may even be written already: then sent is ahead of
// cancelled by one, and it evens out). Counted ones not written within
// cancelLostAfter are given up on.
func (w *cancelWatch) owed() (bool, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.watched = true
	ending := 0
	for _, ctx := range w.underWay {
		if ctx.Err() != nil {
			ending++
		}
	}
	if ending == 0 && time.Since(w.last) >= cancelLostAfter {
		return false, w.change
	}
	return w.cancelled-w.sent+ending > 0, w.change
}

// flush waits until no notification is owed, timeout has passed, or the
// connection is gone (ended or exited is closed; either may be nil).
// Without an owed notification it returns at once.
func (w *cancelWatch) flush(timeout time.Duration, ended, exited <-chan struct{}) {
	if w == nil {
		return
	}
	owed, change := w.owed()
	if !owed {
		return
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for owed {
		select {
		case <-change:
		case <-timer.C:
			return
		case <-ended:
			return
		case <-exited:
			return
		}
		owed, change = w.owed()
	}
}

// middleware is a client sending middleware that counts the requests that
// end with their context, as the SDK's call does when it sends
// notifications/cancelled: not a notification, not subscriptions/listen
// (cancelled separately, when the session closes), not a request cut off by
// the connection closing.
func (w *cancelWatch) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if strings.HasPrefix(method, "notifications/") || method == "subscriptions/listen" {
			return next(ctx, method, req)
		}
		id := w.begin(ctx)
		res, err := next(ctx, method, req)
		w.end(id, err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) && !errors.Is(err, sdk.ErrConnectionClosed))
		return res, err
	}
}

// isCancelled reports whether msg is a notifications/cancelled.
func isCancelled(msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	return ok && !req.IsCall() && req.Method == methodCancelled
}

// postsCancelled reports whether req, a POST to an HTTP or SSE server,
// carries a notifications/cancelled. Only small bodies are looked into.
func postsCancelled(req *http.Request) bool {
	if req.Method != http.MethodPost || req.GetBody == nil || req.ContentLength <= 0 || req.ContentLength > cancelMaxBody {
		return false
	}
	body, err := req.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, cancelMaxBody))
	if err != nil || !bytes.Contains(data, markCancelled) {
		return false
	}
	msg, err := jsonrpc.DecodeMessage(data)
	return err == nil && isCancelled(msg)
}
