package webdata

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/tool"
)

const getStatusSchema = `{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "recent": {"type": "integer", "minimum": 0, "maximum": 100, "default": 10, "description": "How many recent tool calls to list."}
  }
}`

// StatusReport is get_status's result.
type StatusReport struct {
	Servers     []ServerStatus `json:"servers"`
	RecentCalls []CallStatus   `json:"recent_calls"`
	// Quotas are the calling client's rate limits, by tool, as the store
	// that keeps them (Limits.Store) has them.
	Quotas []Quota `json:"quotas"`
	// Limits says where the client's limits are kept, and its daily quota.
	Limits LimitsStatus `json:"limits"`
	Client string       `json:"client"`
}

// Where a client's limits are kept (LimitsStatus.Store).
const (
	// LimitsStoreMemory: in this process.
	LimitsStoreMemory = "memory"
	// LimitsStoreRedis: in the Redis store that the replicas of `otter
	// mcp serve` share ([serve.store]); the figures are the store's, for
	// every replica.
	LimitsStoreRedis = "redis"
)

// LimitsStatus is where the calling client's limits are kept, and its
// daily quota.
type LimitsStatus struct {
	// Store is LimitsStoreMemory or LimitsStoreRedis.
	Store string `json:"store"`
	// Error says why the store could not be read; the figures it keeps
	// are missing then.
	Error string `json:"error,omitempty"`
	// DailyQuota is the client's quota of tool calls a day; nil: none.
	DailyQuota *DailyQuota `json:"daily_quota,omitempty"`
}

// DailyQuota is what is left of a client's tool calls for the day.
type DailyQuota struct {
	Limit     int       `json:"limit"`
	Used      int       `json:"used"`
	Remaining int       `json:"remaining"`
	ResetAt   time.Time `json:"reset_at"` // when the next quota day starts
}

// LimitsReport is what a server enforcing limits around the tools (`otter
// mcp serve`) tells get_status of a client's limits.
type LimitsReport struct {
	LimitsStatus
	// Quotas are the tools' buckets when the server keeps them
	// (Options.CallerLimits); nil: the tools keep their own.
	Quotas []Quota
}

// LimitsReporter reports a client's limits (see WithLimitsReporter).
type LimitsReporter func(ctx context.Context, client string) LimitsReport

type limitsReporterKey struct{}

// WithLimitsReporter returns a context on which get_status reports the
// client's limits as r does. The server that enforces them passes it with
// each call, as it passes the client (WithClient): it alone knows its
// daily quota and, with a store shared by replicas, the buckets, which
// the tools' own are not then.
func WithLimitsReporter(ctx context.Context, r LimitsReporter) context.Context {
	return context.WithValue(ctx, limitsReporterKey{}, r)
}

// ServerStatus is one MCP server in get_status.
type ServerStatus struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	State     string `json:"state"`
	Error     string `json:"error,omitempty"`
	Tools     int    `json:"tools"`
	Calls     int64  `json:"calls"`
	Errors    int64  `json:"errors"`
}

// CallStatus is one recent tool call in get_status.
type CallStatus struct {
	Tool       string    `json:"tool"`
	Server     string    `json:"server,omitempty"`
	Start      time.Time `json:"start"`
	DurationMS int64     `json:"duration_ms"`
	IsError    bool      `json:"is_error"`
	Error      string    `json:"error,omitempty"`
}

// Quota is what is left of one tool's rate limit.
type Quota struct {
	Tool string `json:"tool"`
	RateLimitInfo
}

func (k *toolkit) getStatusDef() def {
	return def{
		name:        NameGetStatus,
		title:       "otter's status",
		description: "otter's own state: the MCP servers and their health, the most recent tool calls and their outcomes, and the calling client's remaining rate-limit quota per tool and daily quota, with where they are kept.",
		schema:      getStatusSchema,
		annotations: &mcp.ToolAnnotations{
			Title:          "otter's status",
			ReadOnlyHint:   true,
			IdempotentHint: true,
			OpenWorldHint:  ptr(false),
		},
		run: k.getStatus,
	}
}

func (k *toolkit) getStatus(ctx context.Context, raw json.RawMessage) outcome {
	var a struct {
		Recent *int `json:"recent"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return failed(invalidParams("", "%v", err))
	}
	n := 10
	if a.Recent != nil {
		n = *a.Recent
	}
	client := ClientFrom(ctx)
	rep := StatusReport{Servers: []ServerStatus{}, RecentCalls: []CallStatus{}, Quotas: []Quota{}, Client: client}
	if k.opts.Servers != nil {
		rep.Servers = append(rep.Servers, k.opts.Servers()...)
		sort.Slice(rep.Servers, func(i, j int) bool { return rep.Servers[i].Name < rep.Servers[j].Name })
	}
	if k.opts.Recent != nil && n > 0 {
		for _, c := range k.opts.Recent(tool.CallerFrom(ctx), n) { // a client sees its own calls only
			rep.RecentCalls = append(rep.RecentCalls, CallStatus{
				Tool: c.Tool, Server: c.Server, Start: c.Start.UTC(), DurationMS: c.Duration.Milliseconds(),
				IsError: c.IsError, Error: c.Err,
			})
		}
	}
	rep.Limits.Store = LimitsStoreMemory
	if r, _ := ctx.Value(limitsReporterKey{}).(LimitsReporter); r != nil {
		lr := r(ctx, client)
		rep.Limits = lr.LimitsStatus
		if lr.Quotas != nil {
			rep.Quotas = lr.Quotas
			return outcome{result: rep}
		}
	}
	for _, name := range k.limits.tools() {
		if ri := k.limits.peek(name, client); ri != nil {
			rep.Quotas = append(rep.Quotas, Quota{Tool: name, RateLimitInfo: *ri})
		}
	}
	return outcome{result: rep}
}

const listPresetsSchema = `{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "name": {"type": "string", "description": "Show only this preset."}
  }
}`

func (k *toolkit) listPresetsDef() def {
	return def{
		name:        NameListPresets,
		title:       "List extraction presets",
		description: "List the named extraction presets (article, product, links, metadata, …) that scrape_page accepts as preset, with the selectors of each field.",
		schema:      listPresetsSchema,
		annotations: &mcp.ToolAnnotations{
			Title:          "List extraction presets",
			ReadOnlyHint:   true,
			IdempotentHint: true,
			OpenWorldHint:  ptr(false),
		},
		run: k.listPresets,
	}
}

func (k *toolkit) listPresets(_ context.Context, raw json.RawMessage) outcome {
	var a struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return failed(invalidParams("", "%v", err))
	}
	var list []Preset
	for _, p := range Presets() {
		if a.Name == "" || p.Name == a.Name {
			list = append(list, p)
		}
	}
	if list == nil {
		_, _, e := k.fieldsFor(nil, a.Name)
		if e != nil {
			e.Field = "name"
			return failed(*e)
		}
	}
	return outcome{result: map[string]any{"presets": list}}
}
