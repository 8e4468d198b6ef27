package serve

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/webdata"
)

// Every answer otter serves for its built-in tools, refusals included,
// matches the output schema the tool advertises: clients such as the
// official TypeScript SDK reject a call whose structuredContent does not.
func TestErrorAnswersMatchTheOutputSchema(t *testing.T) {
	builtins, err := webdata.Tools(webdata.Options{Config: config.Tools{
		RateLimits: map[string]config.RateLimit{webdata.NameListPresets: {RPM: 1, Burst: 1}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	set := tool.NewSet(tool.Options{SpillDir: t.TempDir()})
	set.SetBuiltins(builtins)
	s := newTestServer(t, Options{Tools: set, WithClient: webdata.WithClient, DailyQuota: 3})
	cs := connectInMemory(t, s, nil)
	ctx := t.Context()

	schemas := map[string]*jsonschema.Resolved{}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range lt.Tools {
		raw, _ := json.Marshal(tl.OutputSchema)
		var sch jsonschema.Schema
		if err := json.Unmarshal(raw, &sch); err != nil {
			t.Fatalf("%s: output schema: %v", tl.Name, err)
		}
		rs, err := sch.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: output schema: %v", tl.Name, err)
		}
		schemas[tl.Name] = rs
	}

	for _, c := range []struct {
		what, tool, code string
		args             map[string]any
	}{
		{"first call", webdata.NameListPresets, "", nil},
		{"rate limited", webdata.NameListPresets, webdata.CodeRateLimited, nil},
		{"invalid arguments", webdata.NameScrapePage, webdata.CodeInvalidParams, map[string]any{"url": 42}},
		{"over the daily quota", webdata.NameGetStatus, webdata.CodeQuotaExceeded, nil},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		if res.StructuredContent == nil {
			t.Errorf("%s: no structuredContent", c.what)
			continue
		}
		// Round-trip through JSON as a client sees it.
		raw, _ := json.Marshal(res.StructuredContent)
		var inst any
		json.Unmarshal(raw, &inst)
		if err := schemas[c.tool].Validate(inst); err != nil {
			t.Errorf("%s: structuredContent does not match %s's output schema: %v\n%s", c.what, c.tool, err, raw)
		}
		code, _ := errorCode(res)
		if code != c.code || res.IsError != (c.code != "") {
			t.Errorf("%s: code %q isError %v, want %q", c.what, code, res.IsError, c.code)
		}
	}
}
