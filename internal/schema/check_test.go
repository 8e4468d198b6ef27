package schema

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// answers has a field of each kind a person types an answer for.
const answers = `{"type":"object","properties":{
	"count":{"type":"integer","minimum":1,"maximum":100},
	"ratio":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},
	"step":{"type":"number","multipleOf":0.5},
	"ok":{"type":"boolean"},
	"code":{"type":"string","pattern":"^[A-Z]{3}$"},
	"nick":{"type":"string","minLength":2,"maxLength":4},
	"mail":{"type":"string","format":"email"},
	"day":{"type":"string","format":"date"},
	"site":{"type":"string","format":"uri"},
	"zone":{"type":"string","enum":["eu","us"],"enumNames":["Europe","United States"]},
	"hero":{"type":"string","oneOf":[{"const":"h1","title":"Superman"},{"const":"h2","title":"Wonder Woman"}]},
	"level":{"type":"integer","enum":[3,1,2]},
	"tools":{"type":"array","items":{"type":"string","enum":["Guitar","Piano","Drums"]},"minItems":1,"maxItems":2,"uniqueItems":true},
	"sizes":{"type":"array","items":{"type":"integer","minimum":0}},
	"opts":{"type":"object","properties":{"depth":{"type":"number","maximum":2.5}},"required":["depth"],"additionalProperties":false},
	"note":{"type":"string"},
	"any":{}
	},"required":["count"]}`

func answerFields(t *testing.T) map[string]Field {
	t.Helper()
	o, err := Parse(json.RawMessage(answers))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]Field{}
	for _, f := range o.Fields {
		m[f.Name] = f
	}
	return m
}

func TestFieldParse(t *testing.T) {
	t.Parallel()
	fields := answerFields(t)
	for _, tc := range []struct {
		field, text string
		want        any
		err         string // the whole message; "" for none
	}{
		{"count", "41", int64(41), ""},
		{"count", " 41 ", int64(41), ""},
		{"count", "41.0", int64(41), ""},
		{"count", "", nil, "count: required"},
		{"count", "  ", nil, "count: required"},
		{"count", "old", nil, `count: must be a whole number, got "old"`},
		{"count", "2.5", nil, "count: must be a whole number, got 2.5"},
		{"count", "0", nil, "count: must be at least 1, got 0"},
		{"count", "500", nil, "count: must be at most 100, got 500"},
		{"count", "1e30", nil, "count: must be between -2^53 and 2^53, got 1e30"},
		{"ratio", "0.25", 0.25, ""},
		{"ratio", "", nil, ""},
		{"ratio", "0", nil, "ratio: must be more than 0, got 0"},
		{"ratio", "1", nil, "ratio: must be less than 1, got 1"},
		{"ratio", "NaN", nil, `ratio: must be a number, got "NaN"`},
		{"ratio", "lots", nil, `ratio: must be a number, got "lots"`},
		{"step", "1.25", nil, "step: must be a multiple of 0.5, got 1.25"},
		{"ok", "Yes", true, ""},
		{"ok", "y", true, ""},
		{"ok", "false", false, ""},
		{"ok", "0", false, ""},
		{"ok", "maybe", nil, `ok: must be yes or no, got "maybe"`},
		{"code", "ABC", "ABC", ""},
		{"code", "abc", nil, `code: must match the pattern ^[A-Z]{3}$, got "abc"`},
		{"nick", "x", nil, "nick: must be at least 2 characters long, got 1"},
		{"nick", "ottér", nil, "nick: must be at most 4 characters long, got 5"},
		{"nick", " ab ", " ab ", ""}, // a string is kept as typed
		{"mail", "ada@example.com", "ada@example.com", ""},
		{"mail", "ada", nil, `mail: must be an email address such as name@example.com, got "ada"`},
		{"day", "1815-12-10", "1815-12-10", ""},
		{"day", "1815-13-45", nil, `day: must be a date (YYYY-MM-DD), got "1815-13-45"`},
		{"site", "example.com", nil, `site: must be a URL such as https://example.com, got "example.com"`},
		{"zone", "us", "us", ""},
		{"zone", "EUROPE", "eu", ""},
		{"zone", "2", "us", ""},
		{"zone", "3", nil, `zone: must be one of Europe (eu), United States (us), got "3"`},
		{"zone", "fr", nil, `zone: must be one of Europe (eu), United States (us), got "fr"`},
		{"hero", "wonder woman", "h2", ""},
		{"hero", "h1", "h1", ""},
		{"level", "1", 1.0, ""}, // a value wins over a number in the list
		{"level", "7", nil, "level: must be one of 3, 1, 2, got 7"},
		{"tools", "piano, 3", []any{"Piano", "Drums"}, ""},
		{"tools", `["Guitar"]`, []any{"Guitar"}, ""},
		{"tools", "piano, flute", nil, `tools: item 2 must be one of Guitar, Piano, Drums, got "flute"`},
		{"tools", "1,2,3", nil, "tools: must have at most 2 items, got 3"},
		{"tools", "[]", nil, "tools: must have at least 1 item, got 0"},
		{"tools", "1,1", nil, "tools: must not repeat an item: items 1 and 2 are equal"},
		{"sizes", "1, 2", []any{int64(1), int64(2)}, ""},
		{"sizes", "1, x", nil, `sizes: item 2 must be a whole number, got "x"`},
		{"sizes", "[1, -1]", nil, "sizes[1]: must be at least 0, got -1"},
		{"opts", `{"depth":2}`, map[string]any{"depth": 2.0}, ""},
		{"opts", `{"depth":3.75}`, nil, "opts.depth: must be at most 2.5, got 3.75"},
		{"opts", `{"depth":"deep"}`, nil, "opts.depth: want number, got string"},
		{"opts", `{}`, nil, "opts.depth: missing"},
		{"opts", `{"depth":1,"x":1}`, nil, "opts.x: not a property the schema allows"},
		{"opts", `{"depth":`, nil, "opts: must be a JSON object, but it is not valid JSON (unexpected end of JSON input)"},
		{"opts", `[1]`, nil, "opts: want object, got array"},
		{"note", "", nil, ""},
		{"note", "anything at all", "anything at all", ""},
		{"any", "42", "42", ""}, // no type: the text as typed
	} {
		f, ok := fields[tc.field]
		if !ok {
			t.Fatalf("no field %q", tc.field)
		}
		got, err := f.Parse(tc.text)
		msg := ""
		if err != nil {
			msg = err.Error()
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field == "" {
				t.Errorf("%s %q: err = %#v, want a *FieldError naming the field", tc.field, tc.text, err)
			}
		}
		if msg != tc.err || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s.Parse(%q) = %#v, %q\nwant %#v, %q", tc.field, tc.text, got, msg, tc.want, tc.err)
		}
	}
}

func TestFieldCheck(t *testing.T) {
	t.Parallel()
	fields := answerFields(t)
	for _, tc := range []struct {
		field string
		value any
		err   string
	}{
		{"count", 5, ""},
		{"count", int64(0), "count: must be at least 1, got 0"},
		{"count", 2.5, "count: want integer, got number"},
		{"count", "5", "count: want integer, got string"},
		{"zone", "fr", `zone: must be one of Europe (eu), United States (us), got "fr"`},
		{"hero", "h3", `hero: must be one of Superman (h1), Wonder Woman (h2), got "h3"`},
		{"tools", []string{"Piano"}, ""},
		{"tools", []string{"Flute"}, `tools[0]: must be one of Guitar, Piano, Drums, got "Flute"`},
		{"tools", []string{"Piano", "Drums", "Flute"}, `tools[2]: must be one of Guitar, Piano, Drums, got "Flute"`},
		{"mail", "not an address", ""}, // format is Parse's, for what a person types
		{"opts", map[string]any{}, "opts.depth: missing"},
		{"opts", map[string]any{"depth": 1, "a": 1, "b": 2}, "opts.a: not a property the schema allows; opts.b: not a property the schema allows"},
	} {
		err := fields[tc.field].Check(tc.value)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if msg != tc.err {
			t.Errorf("%s.Check(%#v) = %q, want %q", tc.field, tc.value, msg, tc.err)
		}
	}
}

// A nested field is checked on its own schema; a hand-made Field on its
// Schema.
func TestNestedFieldCheck(t *testing.T) {
	t.Parallel()
	opts := answerFields(t)["opts"]
	if err := opts.Fields[0].Check(3.0); err == nil || err.Error() != "depth: must be at most 2.5, got 3" {
		t.Errorf("depth.Check(3) = %v", err)
	}
	if err := (Field{Name: "x"}).Check(1); err != nil {
		t.Errorf("a field without a schema checks nothing: %v", err)
	}
}

func TestObjectCheck(t *testing.T) {
	t.Parallel()
	o, err := Parse(json.RawMessage(`{"type":"object","properties":{"b":{"type":"number"},"a":{"type":"number","minimum":0},
		"opts":{"type":"object","properties":{"x":{"type":"string"}},"required":["x"],"additionalProperties":false}},
		"required":["b","a"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	either, err := Parse(json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"},"name":{"type":"string"}},
		"oneOf":[{"required":["id"]},{"required":["name"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		o    *Object
		args string
		want []string
	}{
		{o, `{"a":1,"b":2}`, nil},
		// Every problem, in the schema's order of properties.
		{o, `{"a":"two"}`, []string{"b: missing", "a: want number, got string"}},
		{o, `{"a":-1,"b":2}`, []string{"a: must be at least 0, got -1"}},
		{o, `{"a":1,"b":2,"c":3,"opts":{"x":"1","y":1}}`, []string{"opts.y: not a property the schema allows", "c: not a property the schema allows"}},
		{o, `{"a":1,"b":2,"opts":{}}`, []string{"opts.x: missing"}},
		// A problem of the object as a whole: what would do.
		{either, `{}`, []string{"must have id or name"}},
		{either, `{"name":"x"}`, nil},
	} {
		var args map[string]any
		if err := json.Unmarshal([]byte(tc.args), &args); err != nil {
			t.Fatal(err)
		}
		err := tc.o.Check(args)
		var got []string
		if err != nil {
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("%s: err = %#v, want Problems", tc.args, err)
			}
			got = ps.Strings()
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Check(%s) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

// A property's check and the whole object's agree on its message.
func TestFieldAndObjectCheckAgree(t *testing.T) {
	t.Parallel()
	o, err := Parse(json.RawMessage(answers))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range o.Fields {
		for _, bad := range []any{-1.0, "x", []any{"Flute"}, map[string]any{"q": 1.0}} {
			ferr := f.Check(bad)
			oerr := o.Check(map[string]any{"count": 5.0, f.Name: bad})
			if (ferr == nil) != (oerr == nil) || ferr != nil && ferr.Error() != oerr.Error() {
				t.Errorf("%s = %#v: Field.Check says %v, Object.Check %v", f.Name, bad, ferr, oerr)
			}
		}
	}
}

// A schema that does not resolve checks nothing and says why.
func TestUncheckableSchema(t *testing.T) {
	t.Parallel()
	o, err := Parse(json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if o.Checkable() == nil {
		t.Error("Checkable() = nil for a schema with a dangling $ref")
	}
	if err := o.Check(map[string]any{"a": 1}); err != nil {
		t.Errorf("Check = %v, want nil: the receiver checks", err)
	}
}

// A problem inside an array names the item, however deep: the validator
// names only the place in the schema ("/properties/steps/items/…").
func TestCheckNamesTheFailingItem(t *testing.T) {
	t.Parallel()
	o, err := Parse(json.RawMessage(`{"type":"object","properties":{
		"steps":{"type":"array","items":{"type":"object","required":["run"],"properties":{
			"run":{"type":"string","minLength":1},
			"env":{"type":"array","items":{"type":"string","pattern":"^[A-Z_]+=.*$"}}}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ args, want string }{
		{`{"steps":[{"run":"make"},{"run":""}]}`, "steps[1].run: must be at least 1 character long, got 0"},
		{`{"steps":[{"run":"make"},{"run":"go"},{}]}`, "steps[2].run: missing"},
		{`{"steps":[{"run":"a","env":["A=1"]},{"run":"b","env":["B=2","lower=3"]}]}`, `steps[1].env[1]: must match the pattern ^[A-Z_]+=.*$, got "lower=3"`},
		{`{"steps":[{"run":"a"},"b"]}`, "steps[1]: want object, got string"},
	} {
		var args map[string]any
		if err := json.Unmarshal([]byte(tc.args), &args); err != nil {
			t.Fatal(err)
		}
		err := o.Check(args)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Check(%s) = %v, want %q", tc.args, err, tc.want)
		}
	}
}

// A value that matches none of a oneOf's or anyOf's alternatives is told
// what each would take, not "matches none of the alternatives"; and the
// path names the property, not the alternative the validator tried last.
func TestCheckSaysWhatTheAlternativesTake(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ schema, args, want string }{
		{`{"type":"object","properties":{"v":{"oneOf":[{"type":"string","maxLength":3},{"type":"integer","minimum":10}]}}}`,
			`{"v":"toolong"}`, `v: must be a string of at most 3 characters or an integer of at least 10, got "toolong"`},
		{`{"type":"object","properties":{"v":{"oneOf":[{"type":"string","maxLength":3},{"type":"integer","minimum":10}]}}}`,
			`{"v":5}`, `v: must be a string of at most 3 characters or an integer of at least 10, got 5`},
		{`{"type":"object","properties":{"due":{"anyOf":[{"type":"string","format":"date"},{"type":"null"}]}}}`,
			`{"due":5}`, `due: must be a date (YYYY-MM-DD) or null, got 5`},
		{`{"type":"object","properties":{"n":{"anyOf":[{"type":"integer","minimum":1,"maximum":5},{"type":"string","minLength":2,"maxLength":4}]}}}`,
			`{"n":true}`, `n: must be an integer from 1 to 5 or a string of 2 to 4 characters, got true`},
		{`{"type":"object","properties":{"id":{"type":"string"},"name":{"type":"string"}},"oneOf":[{"required":["id"]},{"required":["name"]}]}`,
			`{}`, `must have id or name`},
		{`{"type":"object","properties":{"id":{"type":"string"},"name":{"type":"string"}},"oneOf":[{"required":["id"]},{"required":["name"]}]}`,
			`{"id":"1","name":"x"}`, `must have only one of id, name`},
		// An alternative too big to tell in a few words: the general message.
		{`{"type":"object","properties":{"v":{"oneOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"type":"integer"}]}}}`,
			`{"v":"x"}`, `v: matches none of the alternatives the schema allows (oneOf)`},
	} {
		o, err := Parse(json.RawMessage(tc.schema))
		if err != nil {
			t.Fatal(err)
		}
		var args map[string]any
		if err := json.Unmarshal([]byte(tc.args), &args); err != nil {
			t.Fatal(err)
		}
		if err := o.Check(args); err == nil || err.Error() != tc.want {
			t.Errorf("Check(%s) against %s\n = %v\nwant %s", tc.args, tc.schema, err, tc.want)
		}
	}
}
