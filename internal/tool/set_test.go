package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/render"
	"github.com/otter-sh/otter/internal/toolname"
)

// fakeTool is a tool whose behaviour a test sets.
type fakeTool struct {
	info  Info
	calls atomic.Int32
	call  func(args json.RawMessage) (*Result, error)
}

func (f *fakeTool) Info() Info { return f.info }

func (f *fakeTool) Call(ctx context.Context, args json.RawMessage) (*Result, error) {
	f.calls.Add(1)
	if f.call != nil {
		return f.call(args)
	}
	return &Result{Content: []mcp.Content{&mcp.TextContent{Text: "ok " + string(args)}}}, nil
}

func newTool(server, name string) *fakeTool {
	return &fakeTool{info: Info{Name: name, Server: server, InputSchema: json.RawMessage(`{"type":"object"}`)}}
}

func names(entries []Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Name)
	}
	return out
}

func TestSetOrderAndCollisions(t *testing.T) {
	s := NewSet(Options{})
	changes := 0
	s.OnChange(func() { changes++ })
	s.SetBuiltins([]Tool{newTool("", "scrape_page"), newTool("", "export_data"), newTool("", "mcp__web__fetch")})
	s.SetServerTools("web", []Tool{newTool("", "fetch"), newTool("", "a.b"), newTool("", "a_b")})
	s.SetServerTools("alpha", []Tool{newTool("", "zzz")})

	dotted := toolname.WithHash("mcp__web__a_b", "web", "a.b")
	want := []string{"export_data", "mcp__web__fetch", "scrape_page", "mcp__alpha__zzz", "mcp__web__a_b", dotted}
	if got := names(s.Entries()); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("entries = %v, want %v", got, want)
	}
	if !regexp.MustCompile(`^mcp__web__a_b_[0-9a-f]{8}$`).MatchString(dotted) {
		t.Errorf("the second tool's name %q does not end in a short hash", dotted)
	}
	cols := s.Collisions()
	if len(cols) != 1 {
		t.Fatalf("collisions = %+v, want 1 (built-in vs web/fetch; a.b and a_b are both offered)", cols)
	}
	want1 := `tool fetch of server "web" is not offered: its name mcp__web__fetch is taken by the built-in mcp__web__fetch; rename the server`
	if c := cols[0]; c.Name != "mcp__web__fetch" || c.Kept.Server != "" || c.Dropped.Server != "web" || c.String() != want1 {
		t.Errorf("the built-in should keep a contested name: %+v\n%s", c, c.String())
	}
	if got := s.ServerToolCounts(); len(got) != 2 || got["web"] != 2 || got["alpha"] != 1 {
		t.Errorf("ServerToolCounts = %v, want web:2 alpha:1 (built-ins are not counted)", got)
	}
	if e, ok := s.Lookup("mcp__web__a_b"); !ok || e.Info.Name != "a_b" {
		t.Errorf("the tool whose name needs no normalising should keep the plain name, got %+v", e.Info)
	}
	if e, ok := s.Lookup(dotted); !ok || e.Info.Name != "a.b" {
		t.Errorf("a.b is not offered as %s: %+v", dotted, e.Info)
	}

	// a.b and a/b: the first in sorted order keeps the name, in every
	// run, whatever order the server lists them in.
	for _, order := range [][]string{{"a.b", "a/b"}, {"a/b", "a.b"}} {
		s2 := NewSet(Options{})
		s2.SetServerTools("many", []Tool{newTool("", order[0]), newTool("", order[1])})
		if got := names(s2.Entries()); len(got) != 2 || got[0] != "mcp__many__a_b" || got[1] != toolname.WithHash("mcp__many__a_b", "many", "a/b") || len(s2.Collisions()) != 0 {
			t.Errorf("listed %v: entries %v, collisions %v", order, got, s2.Collisions())
		}
		if e, _ := s2.Lookup("mcp__many__a_b"); e.Info.Name != "a.b" {
			t.Errorf("listed %v: mcp__many__a_b is %q, want a.b", order, e.Info.Name)
		}
	}

	s.SetServerTools("web", nil)
	if _, ok := s.Lookup("mcp__web__a_b"); ok {
		t.Error("a removed server's tools are still offered")
	}
	if len(s.Collisions()) != 0 {
		t.Errorf("collisions after removal: %+v", s.Collisions())
	}
	if changes != 4 {
		t.Errorf("OnChange ran %d times, want 4", changes)
	}
}

// Servers named my.srv and my_srv give a tool they both have the same
// qualified name. The Set rebuilds at every change of any server (connects,
// list_changed, reconnects): the clash must be logged once, and Collisions
// must say which tool was not offered and which one holds its name.
func TestCollisionLoggedOnce(t *testing.T) {
	var logs bytes.Buffer
	s := NewSet(Options{})
	s.logger = slog.New(slog.NewTextHandler(&logs, nil))
	s.SetServerTools("my.srv", []Tool{newTool("", "echo"), newTool("", "only_dot")})
	s.SetServerTools("my_srv", []Tool{newTool("", "echo")})
	for range 5 {
		s.SetServerTools("other", []Tool{newTool("", "x")})
		s.SetServerTools("other", nil)
		s.SetServerTools("my_srv", []Tool{newTool("", "echo")}) // a reconnect: new tool values
	}
	if n := strings.Count(logs.String(), "two tools have the same name"); n != 1 {
		t.Errorf("the clash was logged %d times, want once:\n%s", n, logs.String())
	}
	cols := s.Collisions()
	if len(cols) != 1 || cols[0].Name != "mcp__my_srv__echo" || cols[0].Kept.Server != "my.srv" || cols[0].Dropped.Server != "my_srv" {
		t.Fatalf("collisions = %+v, want mcp__my_srv__echo kept from my.srv, dropped from my_srv", cols)
	}
	if got := names(s.Entries()); strings.Join(got, ",") != "mcp__my_srv__echo,mcp__my_srv__only_dot" {
		t.Errorf("entries = %v", got)
	}
	want := `tool echo of server "my_srv" is not offered: its name mcp__my_srv__echo is taken by tool echo of server "my.srv"; rename one of the servers`
	if got := cols[0].String(); got != want {
		t.Errorf("collision says\n%s\nwant\n%s", got, want)
	}
	// Counts are of tools offered: my_srv's echo lost its name.
	if got := s.ServerToolCounts(); len(got) != 1 || got["my.srv"] != 2 {
		t.Errorf("ServerToolCounts = %v, want my.srv:2 (my_srv offers none)", got)
	}

	// A different clash is news: it is logged too.
	s.SetServerTools("my_srv", []Tool{newTool("", "echo"), newTool("", "only_dot")})
	if n := strings.Count(logs.String(), "two tools have the same name"); n != 2 {
		t.Errorf("a second, different clash: %d log lines, want 2:\n%s", n, logs.String())
	}
}

func TestCallValidatesArguments(t *testing.T) {
	sum := newTool("calc", "add")
	sum.info.InputSchema = json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`)
	s := NewSet(Options{})
	s.SetServerTools("calc", []Tool{sum})

	res, err := s.Call(context.Background(), "mcp__calc__add", json.RawMessage(`{"a":"two"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || sum.calls.Load() != 0 {
		t.Fatalf("invalid arguments reached the tool (calls=%d, isError=%v)", sum.calls.Load(), res.IsError)
	}
	msg := render.Model(res)
	for _, want := range []string{"invalid arguments for mcp__calc__add", `"required"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("validation message %q lacks %q", msg, want)
		}
	}

	res, err = s.Call(context.Background(), "mcp__calc__add", json.RawMessage(`{"a":2,"b":3}`))
	if err != nil || res.IsError || sum.calls.Load() != 1 {
		t.Fatalf("valid call: res=%+v err=%v calls=%d", res, err, sum.calls.Load())
	}
	if _, err := s.Call(context.Background(), "nope", nil); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("unknown tool error = %v", err)
	}
	rec := s.Recent(10)
	if len(rec) != 2 || rec[0].IsError || !rec[1].IsError || rec[0].Server != "calc" {
		t.Errorf("recent calls (newest first) = %+v", rec)
	}
}

func TestCallWithUnusableSchemaStillRuns(t *testing.T) {
	odd := newTool("x", "odd")
	odd.info.InputSchema = json.RawMessage(`{"type":"object","$ref":"http://example.invalid/remote.json"}`)
	s := NewSet(Options{})
	s.SetServerTools("x", []Tool{odd})
	res, err := s.Call(context.Background(), "mcp__x__odd", nil)
	if err != nil || res.IsError || odd.calls.Load() != 1 {
		t.Fatalf("a tool whose schema cannot be resolved must still be callable: res=%+v err=%v", res, err)
	}
}

func TestRecentRingKeepsNewest(t *testing.T) {
	s := NewSet(Options{})
	s.SetBuiltins([]Tool{newTool("", "t")})
	for range recentCalls + 5 {
		s.Call(context.Background(), "t", nil)
	}
	s.Call(context.Background(), "t", json.RawMessage(`[]`)) // invalid: marks the newest
	got := s.Recent(recentCalls + 50)
	if len(got) != recentCalls {
		t.Fatalf("kept %d records, want %d", len(got), recentCalls)
	}
	if !got[0].IsError || got[1].IsError {
		t.Fatalf("newest record should come first: %+v %+v", got[0], got[1])
	}
}

func TestTextForModelCapsAndSpills(t *testing.T) {
	dir := t.TempDir()
	s := NewSet(Options{MaxOutputChars: 1000, SpillDir: dir})
	big := strings.Repeat("é", 5000) // multi-byte: the cut must fall on a character
	res := &Result{Content: []mcp.Content{&mcp.TextContent{Text: big}}}
	out := s.TextForModel(res)
	m := regexp.MustCompile(`showing 1000 of 5000 characters; the full output is in (\S+)\]$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("cut text does not name the spill file: ...%s", out[len(out)-200:])
	}
	if !strings.HasPrefix(out, strings.Repeat("é", 1000)+"\n") {
		t.Errorf("the first 1000 characters are not kept whole")
	}
	full, err := os.ReadFile(m[1])
	if err != nil || string(full) != big {
		t.Fatalf("spill file does not hold the full output (err=%v, %d bytes)", err, len(full))
	}
	small := &Result{Content: []mcp.Content{&mcp.TextContent{Text: "short"}}}
	if got := s.TextForModel(small); got != "short" {
		t.Errorf("short output changed: %q", got)
	}
}

func TestAllowedByFilter(t *testing.T) {
	cases := []struct {
		allowed, denied []string
		name            string
		want            bool
	}{
		{nil, nil, "anything", true},
		{[]string{"get-*"}, nil, "get-sum", true},
		{[]string{"get-*"}, nil, "echo", false},
		{nil, []string{"*delete*"}, "bulk_delete_rows", false},
		{[]string{"*"}, []string{"rm"}, "rm", false},
	}
	for _, c := range cases {
		if got := AllowedByFilter(c.allowed, c.denied, c.name); got != c.want {
			t.Errorf("AllowedByFilter(%v, %v, %q) = %v, want %v", c.allowed, c.denied, c.name, got, c.want)
		}
	}
}

func TestAnnotations(t *testing.T) {
	f := false
	cases := []struct {
		a                     *mcp.ToolAnnotations
		readOnly, destructive bool
	}{
		{nil, false, true},
		{&mcp.ToolAnnotations{ReadOnlyHint: true}, true, false},
		{&mcp.ToolAnnotations{DestructiveHint: &f}, false, false},
		{&mcp.ToolAnnotations{}, false, true},
	}
	for _, c := range cases {
		i := Info{Annotations: c.a}
		if i.ReadOnly() != c.readOnly || i.Destructive() != c.destructive {
			t.Errorf("%+v: ReadOnly=%v Destructive=%v, want %v %v", c.a, i.ReadOnly(), i.Destructive(), c.readOnly, c.destructive)
		}
	}
}

func TestProgressTravelsInContext(t *testing.T) {
	ctx := context.Background()
	if WantsProgress(ctx) {
		t.Fatal("a bare context wants progress")
	}
	var got []Progress
	ctx = WithProgress(ctx, func(p Progress) { got = append(got, p) })
	if !WantsProgress(ctx) {
		t.Fatal("WithProgress context does not want progress")
	}
	ReportProgress(ctx, Progress{Progress: 1, Total: 4, Message: "a quarter"})
	ReportProgress(context.Background(), Progress{Progress: 2}) // no listener: dropped
	if len(got) != 1 || got[0].Message != "a quarter" {
		t.Fatalf("progress reports = %+v", got)
	}
}

// A validation error names the property and its bound as a person would
// write them, not the validator's nesting and number formats.
func TestValidationMessageIsReadable(t *testing.T) {
	fetch := newTool("web", "fetch")
	fetch.info.InputSchema = json.RawMessage(`{"type":"object","properties":{
		"timeout":{"type":"integer","minimum":5,"maximum":120},
		"opts":{"type":"object","properties":{"depth":{"type":"number","maximum":2.5}}}},
		"required":["timeout"]}`)
	s := NewSet(Options{})
	s.SetServerTools("web", []Tool{fetch})
	for _, tc := range []struct{ args, want string }{
		{`{"timeout":1000}`, "invalid arguments for mcp__web__fetch: timeout: must be at most 120, got 1000. The input schema is: {"},
		{`{"timeout":-3}`, "invalid arguments for mcp__web__fetch: timeout: must be at least 5, got -3. "},
		{`{"timeout":10,"opts":{"depth":3.75}}`, "invalid arguments for mcp__web__fetch: opts.depth: must be at most 2.5, got 3.75. "},
		{`{}`, `invalid arguments for mcp__web__fetch: timeout: missing. `},
		{`{"timeout":"soon"}`, `invalid arguments for mcp__web__fetch: timeout: want integer, got string. `},
		// Every problem, in the schema's order, not only the first.
		{`{"opts":{"depth":"deep"}}`, `invalid arguments for mcp__web__fetch: timeout: missing; opts.depth: want number, got string. `},
	} {
		res, err := s.Call(context.Background(), "mcp__web__fetch", json.RawMessage(tc.args))
		if err != nil {
			t.Fatal(err)
		}
		if msg := render.Model(res); !res.IsError || !strings.HasPrefix(msg, tc.want) {
			t.Errorf("%s: message\n%q\nwant prefix\n%q", tc.args, msg, tc.want)
		}
	}
	if fetch.calls.Load() != 0 {
		t.Errorf("invalid arguments reached the tool %d times", fetch.calls.Load())
	}
}

// CheckArguments names every problem of a call's arguments, each once and
// in the schema's order, as an *ArgumentsError, without calling the tool;
// a problem of the object as a whole has no property to name.
func TestCheckArgumentsNamesEveryProblem(t *testing.T) {
	sum := newTool("ts", "sum")
	sum.info.InputSchema = json.RawMessage(`{"type":"object","properties":{"b":{"type":"number"},"a":{"type":"number"},
		"opts":{"type":"object","properties":{"x":{"type":"string"}},"required":["x"],"additionalProperties":false}},
		"required":["b","a"],"additionalProperties":false}`)
	either := newTool("ts", "either")
	either.info.InputSchema = json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"},"name":{"type":"string"}},
		"oneOf":[{"required":["id"]},{"required":["name"]}]}`)
	s := NewSet(Options{})
	s.SetServerTools("ts", []Tool{sum, either})
	for _, tc := range []struct{ tool, args, want string }{
		{"mcp__ts__sum", `{"a":"two"}`, "b: missing; a: want number, got string"},
		{"mcp__ts__sum", `{"a":1,"b":2,"c":3,"opts":{"x":"1","y":1}}`, "opts.y: not a property the schema allows; c: not a property the schema allows"},
		{"mcp__ts__sum", `{"a":1,"b":2,"opts":{}}`, "opts.x: missing"},
		{"mcp__ts__sum", `[1]`, "want a JSON object, got an array"},
		{"mcp__ts__either", `{}`, "must have id or name"},
	} {
		err := s.CheckArguments(tc.tool, json.RawMessage(tc.args))
		var ae *ArgumentsError
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), "the arguments do not match the input schema of "+tc.tool+": "+tc.want) {
			t.Errorf("%s %s: err = %v, want the problems %q", tc.tool, tc.args, err, tc.want)
		}
	}
	if err := s.CheckArguments("mcp__ts__sum", json.RawMessage(`{"a":1,"b":2.5}`)); err != nil {
		t.Errorf("valid arguments: %v", err)
	}
	if err := s.CheckArguments("mcp__ts__either", json.RawMessage(`{"name":"x"}`)); err != nil {
		t.Errorf("valid arguments: %v", err)
	}
	if err := s.CheckArguments("nope", nil); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("unknown tool: %v", err)
	}
	if sum.calls.Load()+either.calls.Load() != 0 || len(s.Recent(10)) != 0 {
		t.Error("CheckArguments called a tool or recorded a call")
	}
}

// Each caller of a Set shared by several clients (otter mcp serve over
// HTTP) sees only its own calls.
func TestRecentByCaller(t *testing.T) {
	s := NewSet(Options{})
	s.SetBuiltins([]Tool{newTool("", "t")})
	alice := WithCaller(context.Background(), "key:alice")
	bob := WithCaller(context.Background(), "key:bob")
	s.Call(alice, "t", nil)
	s.Call(bob, "t", json.RawMessage(`[]`)) // invalid: bob's call is an error
	s.Call(alice, "t", nil)
	s.Call(context.Background(), "t", nil)
	if got := s.RecentBy("key:alice", 10); len(got) != 2 || got[0].Caller != "key:alice" || got[0].IsError || got[1].IsError {
		t.Errorf("alice's calls = %+v, want her two", got)
	}
	if got := s.RecentBy("key:bob", 10); len(got) != 1 || !got[0].IsError {
		t.Errorf("bob's calls = %+v, want his one failed call", got)
	}
	if got := s.RecentBy("", 10); len(got) != 1 || got[0].Caller != "" {
		t.Errorf("otter's own calls = %+v, want the one made without a caller", got)
	}
	if got := s.RecentBy("key:alice", 1); len(got) != 1 {
		t.Errorf("RecentBy(alice, 1) = %d records", len(got))
	}
}
