package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/ask"
)

// sep1034Schema is the form of the conformance scenario
// elicitation-sep1034-client-defaults.
const sep1034Schema = `{"type":"object","properties":{
	"name":{"type":"string","description":"User name","default":"John Doe"},
	"age":{"type":"integer","description":"User age","default":30},
	"score":{"type":"number","description":"User score","default":95.5},
	"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
	"verified":{"type":"boolean","description":"Verification status","default":true}},"required":[]}`

func formRequest(schema string) ask.Elicitation {
	return ask.Elicitation{Server: "srv", Message: "Please fill in", Mode: "form", Schema: json.RawMessage(schema)}
}

func TestParseElicitPolicy(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"ask", "accept-defaults", "decline", "cancel"} {
		if p, err := ParseElicitPolicy(s); err != nil || string(p) != s {
			t.Errorf("ParseElicitPolicy(%q) = %q, %v", s, p, err)
		}
	}
	if _, err := ParseElicitPolicy("yes"); err == nil || !strings.Contains(err.Error(), "accept-defaults") {
		t.Errorf("ParseElicitPolicy(yes): err = %v, want one listing the policies", err)
	}
}

func TestPolicyFixed(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	for _, tc := range []struct {
		policy ElicitPolicy
		req    ask.Elicitation
		want   string
		said   string // what the person is told on stderr
	}{
		{ElicitAcceptDefaults, formRequest(sep1034Schema), "accept map[age:30 name:John Doe score:95.5 status:active verified:true]", ""},
		{ElicitAcceptDefaults, formRequest(`{"type":"object","properties":{"a":{"type":"string"}}}`), "accept map[]", ""},
		{ElicitAcceptDefaults, formRequest(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`), "decline map[]", `"a" is required and has no default`},
		{ElicitAcceptDefaults, ask.Elicitation{Mode: "url", URL: "https://example.com/pay"}, "decline map[]", "request to open https://example.com/pay"},
		{ElicitDecline, formRequest(sep1034Schema), "decline map[]", "(--elicit decline)"},
		{ElicitCancel, formRequest(sep1034Schema), "cancel map[]", "(--elicit cancel)"},
	} {
		var out strings.Builder
		p := NewPolicyAsker(tc.policy, nil, &out, nil)
		r, err := p.Elicit(ctx, tc.req)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(r.Action, " ", r.Content); got != tc.want {
			t.Errorf("%s on %s: got %q, want %q", tc.policy, tc.req.Schema, got, tc.want)
		}
		if tc.said == "" && out.Len() > 0 || !strings.Contains(out.String(), tc.said) {
			t.Errorf("%s on %s: said %q, want %q", tc.policy, tc.req.Schema, out.String(), tc.said)
		}
	}
}

func TestPolicyFixedDeniesApprovals(t *testing.T) {
	t.Parallel()
	p := NewPolicyAsker(ElicitAcceptDefaults, strings.NewReader("y\ny\n"), io.Discard, nil)
	if d, err := p.ApproveTool(t.Context(), ask.Permission{Tool: "x"}); err != nil || d != ask.Deny {
		t.Errorf("ApproveTool = %v, %v; want Deny without a person to ask", d, err)
	}
	if ok, err := p.ApproveSampling(t.Context(), ask.Sampling{Server: "s"}); err != nil || ok {
		t.Errorf("ApproveSampling = %v, %v; want false", ok, err)
	}
}

func TestPolicyAskForm(t *testing.T) {
	t.Parallel()
	// accept; name: default; age: "old" is refused, then 41; score: 7.5;
	// status: by number; verified: n.
	in := strings.NewReader("\n\nold\n41\n7.5\n3\nn\n")
	var out strings.Builder
	p := NewPolicyAsker(ElicitAsk, in, &out, nil)
	r, err := p.Elicit(t.Context(), formRequest(sep1034Schema))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "John Doe", "age": int64(41), "score": 7.5, "status": "pending", "verified": false}
	if r.Action != ask.Accept || fmt.Sprint(r.Content) != fmt.Sprint(want) {
		t.Errorf("got %s %v, want accept %v", r.Action, r.Content, want)
	}
	shown := out.String()
	for _, s := range []string{"Please fill in", "srv", "name [string]: User name", "status (active | inactive | pending) [active]", `age: must be a whole number, got "old"`, "verified (y/n) [y]"} {
		if !strings.Contains(shown, s) {
			t.Errorf("the prompt does not show %q:\n%s", s, shown)
		}
	}
	// Fields are asked in the order the server listed them.
	if strings.Index(shown, "age") > strings.Index(shown, "verified") {
		t.Errorf("fields out of order:\n%s", shown)
	}
}

func TestPolicyAskChoices(t *testing.T) {
	t.Parallel()
	schema := `{"type":"object","properties":{
		"hero":{"type":"string","oneOf":[{"const":"h1","title":"Superman"},{"const":"h2","title":"Wonder Woman"}]},
		"tools":{"type":"array","items":{"type":"string","enum":["Guitar","Piano","Drums"]}},
		"nick":{"type":"string"}},"required":["nick"]}`
	in := strings.NewReader("a\n\nZed\nwonder woman\npiano, 3\n") // nick first: it is required
	var out strings.Builder
	r, err := NewPolicyAsker(ElicitAsk, in, &out, nil).Elicit(t.Context(), formRequest(schema))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"hero": "h2", "tools": []any{"Piano", "Drums"}, "nick": "Zed"}
	if r.Action != ask.Accept || fmt.Sprint(r.Content) != fmt.Sprint(want) {
		t.Errorf("got %s %v, want accept %v", r.Action, r.Content, want)
	}
	if !strings.Contains(out.String(), "  nick: required\n") {
		t.Errorf("an empty required answer was not refused:\n%s", out.String())
	}
}

func TestPolicyAskDeclineCancelEOF(t *testing.T) {
	t.Parallel()
	for input, want := range map[string]ask.ElicitAction{"d\n": ask.Decline, "c\n": ask.Cancel, "": ask.Cancel, "a\n": ask.Cancel /* EOF mid-form */} {
		r, err := NewPolicyAsker(ElicitAsk, strings.NewReader(input), io.Discard, nil).Elicit(t.Context(), formRequest(sep1034Schema))
		if err != nil || r.Action != want {
			t.Errorf("input %q: got %s, %v; want %s", input, r.Action, err, want)
		}
	}
}

func TestPolicyAskURL(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	r, err := NewPolicyAsker(ElicitAsk, strings.NewReader("a\n"), &out, nil).Elicit(t.Context(),
		ask.Elicitation{Server: "pay", Message: "Confirm the payment", Mode: "url", URL: "https://pay.example/confirm"})
	if err != nil || r.Action != ask.Accept {
		t.Fatalf("got %v, %v", r, err)
	}
	if !strings.Contains(out.String(), "https://pay.example/confirm") {
		t.Errorf("the URL is not shown:\n%s", out.String())
	}
}

func TestPolicyAskCancelledContext(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe() // nobody answers
	defer pw.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := NewPolicyAsker(ElicitAsk, pr, io.Discard, nil).Elicit(ctx, formRequest(sep1034Schema))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestPolicyAskApprovals(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	p := NewPolicyAsker(ElicitAsk, strings.NewReader("y\ns\n\nyes\n"), &out, nil)
	for _, want := range []ask.PermissionDecision{ask.AllowOnce, ask.AllowSession, ask.Deny} {
		d, err := p.ApproveTool(t.Context(), ask.Permission{Tool: "mcp__gh__create_issue", Server: "gh", Arguments: json.RawMessage(`{"title": "x"}`)})
		if err != nil || d != want {
			t.Errorf("ApproveTool = %v, %v; want %v", d, err, want)
		}
	}
	if !strings.Contains(out.String(), `mcp__gh__create_issue (server gh) to run with {"title":"x"}`) {
		t.Errorf("the prompt does not name the tool and its arguments:\n%s", out.String())
	}
	if ok, err := p.ApproveSampling(t.Context(), ask.Sampling{Server: "s", Messages: []string{"hi"}}); err != nil || !ok {
		t.Errorf("ApproveSampling = %v, %v; want true", ok, err)
	}
}

type recordingPrompter struct{ got ask.Login }

func (r *recordingPrompter) Login(_ context.Context, req ask.Login) (ask.LoginReply, error) {
	r.got = req
	return ask.LoginReply{Choice: ask.LoginShowURL}, nil
}

func TestPolicyLoginGoesToPrompter(t *testing.T) {
	t.Parallel()
	rp := &recordingPrompter{}
	r, err := NewPolicyAsker(ElicitDecline, nil, io.Discard, rp).Login(t.Context(), ask.Login{Server: "gh", AuthURL: "https://auth.example"})
	if err != nil || r.Choice != ask.LoginShowURL || rp.got.Server != "gh" {
		t.Errorf("got %v, %v; prompter saw %+v", r, err, rp.got)
	}
}

func TestPolicyAskValidatesAnswers(t *testing.T) {
	t.Parallel()
	schema := `{"type":"object","properties":{
		"n":{"type":"integer","minimum":1,"maximum":100},
		"code":{"type":"string","pattern":"^[A-Z]{3}$"}},"required":["n","code"]}`
	var out strings.Builder
	r, err := NewPolicyAsker(ElicitAsk, strings.NewReader("a\n500\n7\nabc\nABC\n"), &out, nil).Elicit(t.Context(), formRequest(schema))
	if err != nil {
		t.Fatal(err)
	}
	if want := "map[code:ABC n:7]"; r.Action != ask.Accept || fmt.Sprint(r.Content) != want {
		t.Errorf("got %s %v, want accept %s", r.Action, r.Content, want)
	}
	for _, want := range []string{"  n: must be at most 100, got 500\n", `  code: must match the pattern ^[A-Z]{3}$, got "abc"` + "\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the answer was not refused with %q:\n%s", want, out.String())
		}
	}
}

// orderedSchema lists its properties neither alphabetically nor in the
// order of "required", and names its enum with the legacy enumNames; the
// TUI, `otter mcp tools` and internal/schema are tested on the same one.
const orderedSchema = `{"type":"object","properties":{
	"zone":{"type":"string","enum":["eu","us"],"enumNames":["Europe","United States"]},
	"name":{"type":"string"},
	"count":{"type":"integer","default":2}},"required":["count"]}`

func TestPolicyAskHonoursEnumNamesAndOrder(t *testing.T) {
	t.Parallel()
	// accept; count: default; zone: by its name; name: empty.
	in := strings.NewReader("a\n\nunited states\n\n")
	var out strings.Builder
	r, err := NewPolicyAsker(ElicitAsk, in, &out, nil).Elicit(t.Context(), formRequest(orderedSchema))
	if err != nil {
		t.Fatal(err)
	}
	if want := "map[count:2 zone:us]"; r.Action != ask.Accept || fmt.Sprint(r.Content) != want {
		t.Errorf("got %s %v, want accept %s", r.Action, r.Content, want)
	}
	shown := out.String()
	if want := "zone (Europe (eu) | United States (us))"; !strings.Contains(shown, want) {
		t.Errorf("the prompt does not name the choices %q:\n%s", want, shown)
	}
	// count first (required), then zone and name as the server lists them.
	c, z, n := strings.Index(shown, "- count"), strings.Index(shown, "- zone"), strings.Index(shown, "- name")
	if c < 0 || c > z || z > n {
		t.Errorf("fields out of order (want count, zone, name):\n%s", shown)
	}
}
