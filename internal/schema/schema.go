// Package schema reads the JSON Schema of a tool's input or of an
// elicitation request into the fields a person or a model is shown: in the
// order the server wrote them, each with whether it is required, its
// choices and their names, its default, its bounds and, for objects and
// arrays, what it holds.
//
// It also reads and checks values: Field.Parse turns what a person typed
// into the field's JSON value and checks it, Field.Check checks a value,
// and Object.Check checks a whole object (a tool call's arguments). The
// checking is github.com/google/jsonschema-go's; this package words its
// findings for a person ("count: must be at least 1, got 0") as
// *FieldError and Problems.
//
// Tool-argument validation (internal/tool), the TUI's forms, the headless
// elicitation prompt and the listing of a server's tools all read a schema
// and check values through this package, so the same schema gives the
// same fields, and the same bad value the same message, everywhere.
//
// It is a leaf package: it imports only the standard library and
// github.com/google/jsonschema-go.
package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// Object is an object schema read for display: its properties as Fields.
type Object struct {
	// Fields are the properties in the order the server wrote them; see
	// Parse for what happens to properties the order cannot be read for.
	Fields []Field
	// Schema is the whole schema as decoded.
	Schema *jsonschema.Schema

	check *checker // nil for an Object not made by Parse
}

// Field is one property of an object schema.
type Field struct {
	Name        string
	Title       string // the schema's title; "" when it has none
	Description string
	// Type is the property's type: its "type", or the first type of a
	// list other than "null"; "" when the schema names none.
	Type     string
	Required bool // listed in the parent's "required"
	// Choices are the values the property may take, in the server's order:
	// an "enum" (named by the legacy "enumNames" when given), then the
	// "const" of each "oneOf" and "anyOf" alternative (named by its
	// "title"). An array's items have their own (Items.Choices).
	Choices []Choice
	// Default is the decoded "default"; nil when there is none (or null).
	Default any
	// Items describes the elements of an array; nil for other types.
	Items *Field
	// Fields are the properties of an object, in the server's order.
	Fields []Field
	// Schema is the property's own schema: its bounds (Minimum, Maximum,
	// MinLength, MaxLength, MinItems, MaxItems, Pattern, Format…) and
	// anything else a front end checks.
	Schema *jsonschema.Schema

	// parent checks the field as a property of the object Parse read; nil
	// for a nested field. own checks it on its own schema.
	parent, own *checker
}

// Choice is one value of an enumeration.
type Choice struct {
	Value any
	Title string // "" when the schema gives it no name
}

// String is the choice's value as text.
func (c Choice) String() string { return fmt.Sprint(c.Value) }

// Label is how a person is shown the choice: its title, or its value when
// it has none.
func (c Choice) Label() string {
	if c.Title != "" {
		return c.Title
	}
	return c.String()
}

// Display is the choice as listed for a person to pick from: "Name
// (value)" when it has a name other than its value, else its value. Either
// picks it in Field.Parse.
func (c Choice) Display() string {
	if c.Title != "" && c.Title != c.String() {
		return c.Title + " (" + c.String() + ")"
	}
	return c.String()
}

// Label is how a person is shown the field: its title, or its name.
func (f Field) Label() string {
	if f.Title != "" {
		return f.Title
	}
	return f.Name
}

// Parse reads raw, a JSON Schema; an empty raw is the empty object
// schema. Properties are in the order the JSON text lists them; any the
// text cannot be read for (which a well-formed schema does not have) follow
// in alphabetical order. A schema that is not valid JSON, or not a JSON
// Schema, is an error.
func Parse(raw json.RawMessage) (*Object, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage(`{}`)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("reading the schema: %w", err)
	}
	o := &Object{Fields: fields(raw, &s), Schema: &s}
	o.check = objectChecker(raw, o.Names())
	for i := range o.Fields {
		o.Fields[i].parent = o.check
	}
	return o, nil
}

// Names returns the fields' names in order.
func (o *Object) Names() []string {
	names := make([]string, len(o.Fields))
	for i, f := range o.Fields {
		names[i] = f.Name
	}
	return names
}

// RequiredFirst returns the fields with the required ones first, each
// group in the server's order: the order a form asks them in, since the
// required ones are what the server cannot do without.
func (o *Object) RequiredFirst() []Field {
	out := slices.Clone(o.Fields)
	slices.SortStableFunc(out, func(a, b Field) int {
		switch {
		case a.Required == b.Required:
			return 0
		case a.Required:
			return -1
		}
		return 1
	})
	return out
}

// fields returns the properties of s, whose JSON text is raw, in order.
func fields(raw json.RawMessage, s *jsonschema.Schema) []Field {
	if s == nil || len(s.Properties) == 0 {
		return nil
	}
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	written := members(member(raw, "properties"))
	var out []Field
	add := func(name string, raw json.RawMessage) {
		p := s.Properties[name]
		if p == nil {
			return
		}
		out = append(out, field(name, raw, p, required[name]))
	}
	seen := map[string]bool{}
	for _, m := range written {
		if _, ok := s.Properties[m.name]; ok && !seen[m.name] {
			seen[m.name] = true
			add(m.name, m.raw)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) { // anything the scan missed
		if !seen[name] {
			add(name, nil)
		}
	}
	return out
}

// field reads the property p, whose JSON text is raw (nil if unknown).
func field(name string, raw json.RawMessage, p *jsonschema.Schema, required bool) Field {
	f := Field{Name: name, Title: p.Title, Description: p.Description, Type: typeOf(p), Required: required, Schema: p, own: valueChecker(p)}
	if len(p.Default) > 0 {
		_ = json.Unmarshal(p.Default, &f.Default) // decoded from valid JSON: cannot fail
	}
	f.Choices = choices(p)
	switch {
	case p.Items != nil:
		items := field("", member(raw, "items"), p.Items, false)
		f.Items = &items
	case len(p.Properties) > 0:
		f.Fields = fields(raw, p)
	}
	return f
}

func typeOf(p *jsonschema.Schema) string {
	if p.Type != "" {
		return p.Type
	}
	for _, t := range p.Types {
		if t != "null" {
			return t
		}
	}
	return ""
}

// choices returns the enumerated values of p: its enum, named by the
// legacy enumNames when given, and the const of each oneOf and anyOf
// alternative, named by its title.
func choices(p *jsonschema.Schema) []Choice {
	var out []Choice
	var names []any
	if p.Extra != nil {
		names, _ = p.Extra["enumNames"].([]any)
	}
	for i, v := range p.Enum {
		c := Choice{Value: v}
		if i < len(names) {
			if n, ok := names[i].(string); ok {
				c.Title = n
			}
		}
		out = append(out, c)
	}
	for _, a := range slices.Concat(p.OneOf, p.AnyOf) {
		if a != nil && a.Const != nil {
			out = append(out, Choice{Value: *a.Const, Title: a.Title})
		}
	}
	return out
}

// namedRaw is one member of a JSON object as written.
type namedRaw struct {
	name string
	raw  json.RawMessage
}

// members returns the members of the JSON object raw in the order they are
// written (a Go map forgets it); nil when raw is not an object. A member
// that cannot be read ends the list.
func members(raw json.RawMessage) []namedRaw {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []namedRaw
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return out
		}
		name, _ := t.(string)
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return out
		}
		out = append(out, namedRaw{name, v})
	}
	return out
}

// member returns the JSON text of raw's member name; nil when raw is not
// an object or has no such member. The last of duplicate members wins, as
// with encoding/json.
func member(raw json.RawMessage, name string) json.RawMessage {
	var v json.RawMessage
	for _, m := range members(raw) {
		if m.name == name {
			v = m.raw
		}
	}
	return v
}

// Skeleton is a JSON value of the field's shape for a person to fill in,
// indented by two spaces: its default when it has one, else its first
// choice, else every property of an object in the server's order, one item
// of an array, "" for a string, 0 for a number and false for a boolean.
// Nesting deeper than 6 levels is left null.
func (f Field) Skeleton() string {
	var b bytes.Buffer
	f.skeleton(&b, 0)
	var out bytes.Buffer
	if json.Indent(&out, b.Bytes(), "", "  ") != nil {
		return b.String()
	}
	return out.String()
}

func (f Field) skeleton(b *bytes.Buffer, depth int) {
	literal := func(v any) {
		data, err := json.Marshal(v)
		if err != nil {
			data = []byte("null")
		}
		b.Write(data)
	}
	switch {
	case depth > 5:
		b.WriteString("null")
	case f.Default != nil:
		literal(f.Default)
	case len(f.Choices) > 0:
		literal(f.Choices[0].Value)
	case f.Type == "object":
		b.WriteByte('{')
		for i, sub := range f.Fields {
			if i > 0 {
				b.WriteByte(',')
			}
			literal(sub.Name)
			b.WriteByte(':')
			sub.skeleton(b, depth+1)
		}
		b.WriteByte('}')
	case f.Type == "array":
		b.WriteByte('[')
		if f.Items != nil {
			f.Items.skeleton(b, depth+1)
		}
		b.WriteByte(']')
	case f.Type == "string":
		b.WriteString(`""`)
	case f.Type == "integer", f.Type == "number":
		b.WriteByte('0')
	case f.Type == "boolean":
		b.WriteString("false")
	default:
		b.WriteString("null")
	}
}
