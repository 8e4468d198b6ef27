package llm

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"
)

// The SDKs retry 408, 409, 429, 5xx and connection errors themselves,
// silently. sdkRetryNotice watches each attempt (the SDKs' middleware runs
// once per attempt) and tells the person through a Retrying event that a
// retry is coming, so a slow answer is not a mystery.

type retryNoticeKey struct{}

// withRetryNotice makes the SDK attempts made under ctx report their
// retries to emit.
func withRetryNotice(ctx context.Context, emit func(Event)) context.Context {
	return context.WithValue(ctx, retryNoticeKey{}, emit)
}

// sdkRetryNotice returns the middleware for an SDK configured with
// maxRetries; next sends one attempt.
func sdkRetryNotice(maxRetries int) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		res, err := next(req)
		emit, _ := req.Context().Value(retryNoticeKey{}).(func(Event))
		if emit == nil || req.Context().Err() != nil {
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
		emit(Retrying{Attempt: attempt + 1, Delay: sdkRetryDelay(res, attempt), Err: why})
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
