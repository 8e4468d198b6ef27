package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DrainTimeout bounds how long a stdio session waits, once its input has
// ended, for the tool calls already running to answer.
const DrainTimeout = 5 * time.Second

// RunStdio serves one session over in and out (os.Stdin and os.Stdout)
// until in ends or ctx is cancelled.
//
// It differs from the go-sdk's StdioTransport in two ways a client relies
// on: a line that is not a JSON-RPC message, or is a batch, gets a JSON-RPC
// error answer (-32700 or -32600) and the session goes on, where the SDK
// would end it;
// and when in ends, the calls already running may finish (for at most
// DrainTimeout) and their answers are written before the session closes.
func (s *Server) RunStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	w := &lineWriter{w: out, open: make(map[string]bool)}
	r := &stdioReader{
		lines:  bufio.NewReaderSize(in, 64*1024),
		out:    w,
		logger: s.logger,
		drain:  DrainTimeout,
	}
	// stdioReader refuses a longer line before the SDK sees it.
	return s.Run(ctx, &mcp.IOTransport{Reader: r, Writer: w, MaxLineLength: MaxMessageBytes + 1<<20})
}

// MaxMessageBytes bounds one message a client sends over stdio, as the
// HTTP transport bounds a request body: a longer line is read to its end
// without being kept and answered with a JSON-RPC error, and the session
// goes on.
const MaxMessageBytes = 4 << 20

// lineWriter serializes the SDK's writes (one whole message per Write) with
// the error answers stdioReader writes itself, and keeps the IDs of the
// client's requests not answered yet.
type lineWriter struct {
	mu   sync.Mutex
	w    io.Writer
	open map[string]bool // request IDs (as JSON) awaiting an answer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	answered := ""
	if json.Unmarshal(p, &m) == nil && m.Method == "" && len(m.ID) > 0 {
		answered = string(m.ID)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.w.Write(p)
	if answered != "" {
		delete(l.open, answered)
	}
	return n, err
}

// requested notes a request of the client that expects an answer.
func (l *lineWriter) requested(id json.RawMessage) {
	l.mu.Lock()
	l.open[string(id)] = true
	l.mu.Unlock()
}

// unanswered is the number of the client's requests not answered yet.
func (l *lineWriter) unanswered() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.open)
}

func (l *lineWriter) Close() error { return nil }

// stdioReader hands the SDK only lines that are JSON-RPC messages (not
// batches), answers the others itself, and holds back the end of input
// while tool calls are in flight.
type stdioReader struct {
	lines  *bufio.Reader
	out    *lineWriter
	logger *slog.Logger
	drain  time.Duration

	pending []byte // the rest of the line being handed over
	closed  atomic.Bool
}

func (r *stdioReader) Read(p []byte) (int, error) {
	for len(r.pending) == 0 {
		line, n, tooLong, err := r.readLine()
		if tooLong {
			r.refuse(jsonrpc.CodeInvalidRequest, "Invalid Request", fmt.Sprintf("the message is longer than %d MiB, the limit of this server", MaxMessageBytes>>20), n)
		} else if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			if r.accept(trimmed) {
				r.pending = append(trimmed, '\n')
			}
		}
		if err != nil && len(r.pending) == 0 {
			if errors.Is(err, io.EOF) {
				r.awaitCalls()
			}
			return 0, err
		}
		if err != nil {
			break // hand over the last line; the error comes back next Read
		}
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// accept reports whether line is a message for the SDK; when it is not,
// the client gets the JSON-RPC error answer and the session goes on.
func (r *stdioReader) accept(line []byte) bool {
	code, problem := jsonrpc.CodeParseError, ""
	switch {
	case !json.Valid(line):
		problem = "the line is not valid JSON"
	case line[0] == '[':
		// MCP since 2025-06-18 has no batches, and the SDK ends the
		// session on one: refuse it as any other line that is no message.
		code, problem = jsonrpc.CodeInvalidRequest, "JSON-RPC batches are not supported: send one message a line"
	case nullID(line):
		// JSON-RPC 2.0 answers an invalid request with an error whose id
		// is null; MCP forbids a null id. The SDK read it as a
		// notification and the client waited forever for an answer.
		code, problem = jsonrpc.CodeInvalidRequest, `a request's "id" must be a string or a number, not null (MCP forbids null ids)`
	default:
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			code, problem = jsonrpc.CodeInvalidRequest, "the line is not a JSON-RPC 2.0 message: "+err.Error()
			break
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			if id, err := json.Marshal(req.ID.Raw()); err == nil {
				r.out.requested(id)
			}
		}
		return true
	}
	msg := "Parse error"
	if code == jsonrpc.CodeInvalidRequest {
		msg = "Invalid Request"
	}
	r.refuse(code, msg, problem, len(line))
	return false
}

// readLine reads one line of at most MaxMessageBytes; of a longer one it
// keeps nothing (tooLong) and reads on to its end.
func (r *stdioReader) readLine() (line []byte, n int, tooLong bool, err error) {
	for {
		chunk, err := r.lines.ReadSlice('\n')
		n += len(chunk)
		if !tooLong && len(line)+len(chunk) > MaxMessageBytes {
			tooLong, line = true, nil
		}
		if !tooLong {
			line = append(line, chunk...)
		}
		if err != bufio.ErrBufferFull {
			return line, n, tooLong, err
		}
	}
}

// refuse answers a line that is no message for the SDK with a JSON-RPC
// error; the session goes on.
func (r *stdioReader) refuse(code int, msg, problem string, n int) {
	r.logger.Warn("ignored a malformed line on stdin", "problem", problem, "bytes", n)
	answer, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error":   map[string]any{"code": code, "message": fmt.Sprintf("%s: %s", msg, problem)},
	})
	if _, err := r.out.Write(append(answer, '\n')); err != nil {
		r.logger.Warn("could not answer a malformed line", "err", err)
	}
}

// awaitCalls waits, at most r.drain, for the client's requests in flight
// to be answered before the session ends.
func (r *stdioReader) awaitCalls() {
	n := r.out.unanswered()
	if r.closed.Load() || n == 0 {
		return
	}
	r.logger.Info("input ended; waiting for the requests in flight", "requests", n, "at_most", r.drain.String())
	deadline := time.Now().Add(r.drain)
	for r.out.unanswered() > 0 && time.Now().Before(deadline) && !r.closed.Load() {
		time.Sleep(10 * time.Millisecond)
	}
	if n := r.out.unanswered(); n > 0 {
		r.logger.Warn("input ended; requests left unanswered", "requests", n)
	}
}

// Close is called by the SDK when the session ends; a Read blocked in
// stdin cannot be interrupted, as with the SDK's own stdio transport.
func (r *stdioReader) Close() error {
	r.closed.Store(true)
	return nil
}

// nullID reports whether line is a request (it has a method) whose "id"
// member is present and null.
func nullID(line []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return false
	}
	id, hasID := m["id"]
	_, hasMethod := m["method"]
	return hasMethod && hasID && string(bytes.TrimSpace(id)) == "null"
}
