package llm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// The SDKs retry 408, 409, 429, 5xx and connection errors themselves,
// silently. sdkRetryNotice watches each attempt (the SDKs' middleware runs
// once per attempt) and tells the person through a Retrying event that a
// retry is coming, so a slow answer is not a mystery.

type retryNoticeKey struct{}

// retryNotice is what the SDK attempts made under one Stream share: where
// to announce a retry, and how to stop the SDK retrying a local server
// that refused the connection (it is not running; retrying only delays
// saying so).
type retryNotice struct {
	emit   func(Event)
	cancel context.CancelFunc

	mu      sync.Mutex
	refused error
}

// withRetryNotice makes the SDK attempts made under ctx report their
// retries to emit. Call done when the stream is over: it returns the
// refusal that stopped the attempts early, if one did.
func withRetryNotice(ctx context.Context, emit func(Event)) (context.Context, *retryNotice) {
	ctx, cancel := context.WithCancel(ctx)
	rn := &retryNotice{emit: emit, cancel: cancel}
	return context.WithValue(ctx, retryNoticeKey{}, rn), rn
}

// done ends the stream's context and returns the local refusal, if any.
func (rn *retryNotice) done() error {
	rn.cancel()
	rn.mu.Lock()
	defer rn.mu.Unlock()
	return rn.refused
}

// stopRefused ends the attempts when a loopback server refused the
// connection: the SDK sees its context done and does not retry.
func (rn *retryNotice) stopRefused(req *http.Request, err error) bool {
	if err == nil || !errors.Is(err, syscall.ECONNREFUSED) || !loopback(req.URL.Hostname()) {
		return false
	}
	rn.mu.Lock()
	rn.refused = err
	rn.mu.Unlock()
	rn.cancel()
	return true
}

// loopback reports whether host names this machine.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sdkRetryNotice returns the middleware for an SDK configured with
// maxRetries; next sends one attempt.
func sdkRetryNotice(maxRetries int) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		res, err := next(req)
		rn, _ := req.Context().Value(retryNoticeKey{}).(*retryNotice)
		if rn == nil || req.Context().Err() != nil || rn.stopRefused(req, err) {
			return res, err
		}
		attempt, convErr := strconv.Atoi(req.Header.Get("X-Stainless-Retry-Count"))
		if convErr != nil || attempt >= maxRetries || !sdkWillRetry(res) {
			return res, err
		}
		why := err
		if res != nil {
			why = fmt.Errorf("HTTP %d %s", res.StatusCode, http.StatusText(res.StatusCode))
		}
		rn.emit(Retrying{Attempt: attempt + 1, Delay: sdkRetryDelay(res, attempt), Err: why})
		return res, err
	}
}

// sdkWillRetry reports whether the SDKs retry an attempt that ended with
// res (nil: no response, a connection error), by their documented rules.
func sdkWillRetry(res *http.Response) bool {
	if res == nil {
		return true
	}
	switch res.Header.Get("x-should-retry") {
	case "true":
		return true
	case "false":
		return false
	}
	s := res.StatusCode
	return s == http.StatusRequestTimeout || s == http.StatusConflict || s == http.StatusTooManyRequests || s >= 500
}

// sdkRetryDelay is about how long the SDKs wait before retry attempt+1:
// what the server asked for (Retry-After), else 0.5 s doubling to 8 s.
func sdkRetryDelay(res *http.Response, attempt int) time.Duration {
	if res != nil {
		if ms, err := strconv.ParseFloat(res.Header.Get("retry-after-ms"), 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
		if s, err := strconv.ParseFloat(res.Header.Get("Retry-After"), 64); err == nil && s >= 0 {
			return time.Duration(s * float64(time.Second))
		}
		if t, err := http.ParseTime(res.Header.Get("Retry-After")); err == nil {
			return max(0, time.Until(t))
		}
	}
	return min(time.Duration(0.5*float64(time.Second)*math.Pow(2, float64(attempt))), 8*time.Second)
}
