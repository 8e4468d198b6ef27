package serve

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/webdata"
)

// clientHeader carries the caller's identity from the HTTP layer to the
// tool handlers. The HTTP handler always overwrites it, so a client cannot
// choose its own identity.
const clientHeader = "Otter-Client"

// clientOf is the identity of the caller of req.
func clientOf(req *mcp.CallToolRequest) string {
	if req.Extra != nil && req.Extra.Header != nil {
		if c := req.Extra.Header.Get(clientHeader); c != "" {
			return c
		}
	}
	return ClientStdio
}

// toolHandler calls the named tool of the Set with governance around it:
// the per-client quota, the client identity for rate limits, progress
// notifications, metrics, the audit ledger, logs and a log message to the
// client.
func (s *Server) toolHandler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		client := clientOf(req)
		var (
			res     *mcp.CallToolResult
			err     error
			outcome string
			code    string
			errText string
		)
		v, lerr := s.limits.spend(ctx, name, client, start)
		switch {
		case lerr != nil:
			// The shared store is unreachable under on_store_error = "deny"
			// (or the client went away): a JSON-RPC error naming the cause.
			outcome, code, errText = OutcomeDenied, codeStoreUnavailable, lerr.Error()
			err = storeRPCError(lerr)
		case v.quota:
			res = quotaResult(name, s.opts.DailyQuota, v.reset, start)
			outcome, code = OutcomeDenied, codeQuotaExceeded
		case v.rate:
			rpm, burst, _ := s.opts.RateLimits.Spec(name)
			retry := max(1, int(math.Ceil(v.retryAfter.Seconds())))
			res = webdata.Refusal(name, start, webdata.RateLimitedRefusal(name, rpm, burst, retry, start))
			outcome, code = OutcomeRateLimited, webdata.CodeRateLimited
		default:
			callCtx := webdata.WithLimitsReporter(ctx, s.reporter)
			if s.opts.WithClient != nil {
				callCtx = s.opts.WithClient(callCtx, client)
			}
			if token := req.Params.GetProgressToken(); token != nil {
				callCtx = tool.WithProgress(callCtx, func(p tool.Progress) {
					err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						ProgressToken: token, Progress: p.Progress, Total: p.Total, Message: p.Message,
					})
					if err != nil {
						s.logger.Debug("progress notification not sent", "tool", name, "err", err)
					}
				})
			}
			callCtx, cancel := context.WithTimeout(callCtx, s.opts.CallTimeout)
			res, err = s.opts.Tools.Call(callCtx, name, req.Params.Arguments)
			timedOut := callCtx.Err() == context.DeadlineExceeded
			cancel()
			switch {
			case err != nil && ctx.Err() != nil:
				// The client cancelled: there is nobody to answer.
				outcome, errText = OutcomeError, err.Error()
			case err != nil && timedOut:
				outcome, code = OutcomeError, "TIMEOUT"
				errText = fmt.Sprintf("%s did not finish within %s", name, s.opts.CallTimeout)
				res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: errText +
					" (the server's limit for one call); try a smaller request"}}}
				err = nil
			case err != nil:
				// Could not be made or completed (timeout, transport):
				// a tool error the caller's model can read.
				outcome, errText = OutcomeError, err.Error()
				res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{
					&mcp.TextContent{Text: fmt.Sprintf("%s failed: %v", name, err)}}}
				err = nil
			default:
				var msg string
				code, msg = errorCode(res)
				outcome = OutcomeOK
				if res.IsError {
					outcome = OutcomeError
					// Only otter's own limit is a rate_limited outcome. A
					// site's 429 (UPSTREAM_RATE_LIMITED) is the tool failing,
					// an error like a site's 403 or 500.
					if code == webdata.CodeRateLimited {
						outcome = OutcomeRateLimited
					}
					errText = cmp.Or(msg, firstText(res))
				}
			}
		}
		markRecorded(ctx)
		s.record(ctx, req, name, client, outcome, code, errText, start)
		return res, err
	}
}

// reportLimits is what get_status shows of client's limits.
func (s *Server) reportLimits(ctx context.Context, client string) webdata.LimitsReport {
	return s.limits.report(ctx, s.toolNames(), client, time.Now())
}

// recordedKey marks, in the context of a tools/call request, that a tool
// handler recorded the call (see auditRejectedCalls).
type recordedKey struct{}

func markRecorded(ctx context.Context) {
	if f, ok := ctx.Value(recordedKey{}).(*atomic.Bool); ok {
		f.Store(true)
	}
}

// Error codes of tools/call requests the SDK refused before any tool ran.
const (
	codeUnknownTool   = "UNKNOWN_TOOL"   // no tool of that name is served
	codeInvalidParams = "INVALID_PARAMS" // JSON-RPC -32602 for a served tool
	codeRPCError      = "RPC_ERROR"      // any other JSON-RPC error
)

// maxAuditedName bounds a tool name as given by the client in the ledger
// (MCP tool names are at most 128 characters).
const maxAuditedName = 128

// auditRejectedCalls is receiving middleware that records in the audit
// ledger (and the log) the tools/call requests that no tool handler
// recorded: those the SDK refused itself, such as a call of a tool otter
// does not serve (JSON-RPC -32602 "unknown tool"). Calls that reached a
// tool handler are recorded there, never here.
func (s *Server) auditRejectedCalls(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if method != "tools/call" || !ok || call.Params == nil {
			return next(ctx, method, req)
		}
		start := time.Now()
		recorded := new(atomic.Bool)
		res, err := next(context.WithValue(ctx, recordedKey{}, recorded), method, req)
		if err == nil || recorded.Load() {
			return res, err
		}
		name := call.Params.Name
		code := codeRPCError
		var rpcErr *jsonrpc.Error
		switch {
		case !slices.Contains(s.toolNames(), name):
			code = codeUnknownTool
		case errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeInvalidParams:
			code = codeInvalidParams
		}
		if len(name) > maxAuditedName {
			name = strings.ToValidUTF8(name[:maxAuditedName], "") + "…"
		}
		client := clientOf(call)
		session := ""
		if call.Session != nil {
			session = call.Session.ID()
		}
		d := s.audit(call, name, client, session, OutcomeError, code, err.Error(), start)
		s.logger.Info("tool call", "tool", name, "client", client, "session", session, "outcome", OutcomeError,
			"duration_ms", d.Milliseconds(), "code", code)
		return res, err
	}
}

// record accounts for one finished call everywhere it is accounted for.
func (s *Server) record(ctx context.Context, req *mcp.CallToolRequest, name, client, outcome, code, errText string, start time.Time) {
	session := ""
	if req.Session != nil {
		session = req.Session.ID()
	}
	d := s.audit(req, name, client, session, outcome, code, errText, start)
	s.metrics.toolCall(name, outcome, d)
	attrs := []any{"tool", name, "client", client, "session", session, "outcome", outcome, "duration_ms", d.Milliseconds()}
	if code != "" {
		attrs = append(attrs, "code", code)
	}
	s.logger.Info("tool call", attrs...)

	// Tell the client too, at the level it asked for with logging/setLevel.
	level := mcp.LoggingLevel("info")
	switch outcome {
	case OutcomeError:
		level = "error"
	case OutcomeDenied, OutcomeRateLimited:
		level = "warning"
	}
	if req.Session != nil {
		data := map[string]any{"tool": name, "outcome": outcome, "duration_ms": d.Milliseconds()}
		if code != "" {
			data["code"] = code
		}
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Logger: "otter", Level: level, Data: data}); err != nil {
			s.logger.Debug("log message to client not sent", "err", err)
		}
	}
}

// audit appends one call to the audit ledger, with its arguments and
// error text masked, and returns the call's duration.
func (s *Server) audit(req *mcp.CallToolRequest, name, client, session, outcome, code, errText string, start time.Time) time.Duration {
	d := time.Since(start)
	// The error may quote the arguments (a refused URL, say): it gets the
	// same masking before it is stored.
	args, secrets := maskArguments(req.Params.Arguments)
	errText = maskText(errText, secrets)
	cut := ""
	if len(args) > MaxAuditArgBytes {
		cut = fmt.Sprintf("%d bytes, over the %d a record keeps", len(args), MaxAuditArgBytes)
		args = nil
	}
	if len(errText) > 500 {
		errText = strings.ToValidUTF8(errText[:500], "") + "…"
	}
	if s.ledger != nil {
		err := s.ledger.Append(AuditRecord{
			Time: start.UTC(), Replica: s.opts.ReplicaID, Client: client, Session: session, Tool: name,
			Arguments: args, ArgumentsCut: cut, Outcome: outcome, Code: code, Error: errText,
			DurationMS: float64(d.Microseconds()) / 1000,
		})
		if err != nil {
			s.logger.Error("audit ledger write failed", "err", err)
		}
	}
	return d
}

// errorCode finds the first error code and message of otter's response
// envelope ({"status":"failed","errors":[{"code":"RATE_LIMITED",…}]}) in
// the structured content or the first text content of res.
func errorCode(res *mcp.CallToolResult) (code, message string) {
	if res == nil {
		return "", ""
	}
	var raw []byte
	if res.StructuredContent != nil {
		raw, _ = json.Marshal(res.StructuredContent)
	} else if t := firstText(res); strings.HasPrefix(strings.TrimSpace(t), "{") {
		raw = []byte(t)
	}
	if raw == nil {
		return "", ""
	}
	type entry struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	var env struct {
		entry
		Errors []entry `json:"errors"`
	}
	if json.Unmarshal(raw, &env) != nil {
		return "", ""
	}
	if len(env.Errors) > 0 {
		return env.Errors[0].Code, env.Errors[0].Message
	}
	return env.Code, env.Message
}

func firstText(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}

// codeQuotaExceeded is the error code of a call refused by the per-client quota.
const codeQuotaExceeded = webdata.CodeQuotaExceeded

// quotaResult is the envelope (seed 000 §3.2) of a call refused by the quota.
func quotaResult(name string, limit int, reset, now time.Time) *mcp.CallToolResult {
	return webdata.Refusal(name, now, webdata.ErrorInfo{
		Code:        codeQuotaExceeded,
		Message:     fmt.Sprintf("this client has used its %d tool calls for today", limit),
		Details:     map[string]any{"limit": limit, "remaining": 0, "reset_at": reset.UTC().Format(time.RFC3339), "retry_after": int(reset.Sub(now).Seconds()) + 1},
		Suggestion:  "wait until reset_at, or ask the operator to raise the daily quota",
		Recoverable: true,
	})
}

// codeStoreUnavailable is the ledger's code of a call refused because the
// shared limits store was unreachable (on_store_error = "deny").
const codeStoreUnavailable = "STORE_UNAVAILABLE"

// quotas counts tool calls per client per day (from midnight in loc).
type quotas struct {
	limit int
	loc   *time.Location
	mu    sync.Mutex
	day   time.Time
	used  map[string]int
}

func newQuotas(limit int, loc *time.Location) *quotas {
	if loc == nil {
		loc = time.UTC
	}
	return &quotas{limit: limit, loc: loc, used: make(map[string]int)}
}

// peek reports how many calls client made today and when the quota
// resets; ok is false without a quota.
func (q *quotas) peek(client string, now time.Time) (used int, reset time.Time, ok bool) {
	if q.limit <= 0 {
		return 0, time.Time{}, false
	}
	day, next := dayOf(now, q.loc)
	q.mu.Lock()
	defer q.mu.Unlock()
	if day.Equal(q.day) {
		used = q.used[client]
	}
	return used, next, true
}

// take spends one call of client's quota; it reports false and the time
// the quota resets when none is left.
func (q *quotas) take(client string, now time.Time) (bool, time.Time) {
	if q.limit <= 0 {
		return true, time.Time{}
	}
	day, next := dayOf(now, q.loc)
	q.mu.Lock()
	defer q.mu.Unlock()
	if !day.Equal(q.day) {
		q.day, q.used = day, make(map[string]int)
	}
	if q.used[client] >= q.limit {
		return false, next
	}
	q.used[client]++
	return true, time.Time{}
}
