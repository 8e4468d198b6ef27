package tui

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"charm.land/huh/v2"

	"github.com/otter-sh/otter/internal/schema"
)

// schemaForm is a huh form generated from a flat JSON Schema object: the
// shape of elicitation requests and of most tools' input schemas.
type schemaForm struct {
	fields  []huh.Field
	collect func() (map[string]any, error)
}

// buildSchemaForm makes one field per property, in the schema's order
// (required ones first), with the schema's defaults prefilled and its
// constraints as validation. Properties that are not flat (objects, arrays
// of non-enums) get a JSON text field.
func buildSchemaForm(raw json.RawMessage) (*schemaForm, error) {
	o, err := schema.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("reading the requested schema: %w", err)
	}
	sf := &schemaForm{}
	var getters []func(map[string]any) error
	for _, f := range o.RequiredFirst() {
		field, get := schemaField(f)
		sf.fields = append(sf.fields, field)
		getters = append(getters, get)
	}
	sf.collect = func() (map[string]any, error) {
		out := map[string]any{}
		for _, g := range getters {
			if err := g(out); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return sf, nil
}

// options are a field's choices as huh options, labelled by their names.
func options(cs []schema.Choice) []huh.Option[string] {
	var opts []huh.Option[string]
	for _, c := range cs {
		opts = append(opts, huh.NewOption(c.Label(), c.String()))
	}
	return opts
}

// longTextName matches the names of string fields that hold text of
// several lines.
var longTextName = regexp.MustCompile(`(?i)(content|text|body|message|code|source|script|patch|diff|prompt|markdown|notes|comment|sql)`)

// longText reports whether the string field f likely holds text of
// several lines: its name says so, and nothing (a format, a pattern, a
// short maxLength) says it is one value.
func longText(f schema.Field) bool {
	p := f.Schema
	if p == nil || p.Format != "" || p.Pattern != "" || (p.MaxLength != nil && *p.MaxLength <= 200) {
		return false
	}
	return longTextName.MatchString(f.Name)
}

// defaultString is f's default as the text a field is pre-filled with.
func defaultString(f schema.Field) string {
	switch d := f.Default.(type) {
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(d, 'f', -1, 64)
	case string:
		return d
	}
	b, _ := json.Marshal(f.Default)
	return string(b)
}

// validator checks a field's text as it is typed: as schema.Field.Parse
// reads it, so a form refuses what the headless prompt and a tool call's
// validation refuse, in the same words.
func validator(f schema.Field) func(string) error {
	return func(s string) error {
		_, err := f.Parse(s)
		return err
	}
}

// putter is a field's collect function: it puts the value read returns
// under name; nothing when it is nil (the field is left empty).
func putter(name string, read func() (any, error)) func(map[string]any) error {
	return func(out map[string]any) error {
		v, err := read()
		if err != nil {
			return err
		}
		if v != nil {
			out[name] = v
		}
		return nil
	}
}

func schemaField(f schema.Field) (huh.Field, func(map[string]any) error) {
	p, required := f.Schema, f.Required
	title := f.Label()
	if required {
		title += " *"
	}
	desc := f.Description

	if opts := options(f.Choices); len(opts) > 0 {
		v := defaultString(f)
		if v == "" && required {
			v = opts[0].Value
		}
		if v == "" {
			opts = append([]huh.Option[string]{huh.NewOption("(none)", "")}, opts...)
		}
		sel := huh.NewSelect[string]().Title(title).Description(desc).Options(opts...).Value(&v)
		return sel, putter(f.Name, func() (any, error) { return f.Parse(v) })
	}

	switch f.Type {
	case "boolean":
		v, _ := f.Default.(bool)
		c := huh.NewConfirm().Title(title).Description(desc).Value(&v)
		return c, func(out map[string]any) error { out[f.Name] = v; return nil }

	case "array":
		if f.Items != nil {
			if opts := options(f.Items.Choices); len(opts) > 0 {
				return multiSelect(f, title, desc, opts)
			}
		}
		return jsonField(title, desc, f)

	case "object":
		return jsonField(title, desc, f)
	}

	// numbers, strings (and anything unknown)
	v := defaultString(f)
	validate := validator(f)
	var field huh.Field
	if (f.Type == "string" || f.Type == "") && longText(f) {
		// Several lines (a file's content, a message): pasted new lines
		// stay, alt+enter adds one, and ctrl+e opens $EDITOR when set.
		keys := "alt+enter new line"
		editor := os.Getenv("EDITOR") != ""
		if editor {
			keys += " · ctrl+e $EDITOR"
		}
		field = huh.NewText().Title(title).Description(strings.TrimSpace(desc + "\n" + keys)).Value(&v).
			Lines(min(max(strings.Count(v, "\n")+1, 3), 8)).ExternalEditor(editor).Validate(validate)
	} else {
		in := huh.NewInput().Title(title).Description(desc).Value(&v).Validate(validate)
		if p != nil && p.Format != "" {
			in.Placeholder(formatHint(p.Format))
		}
		field = in
	}
	return field, putter(f.Name, func() (any, error) { return f.Parse(v) })
}

// multiSelect picks an array's items from their choices.
func multiSelect(f schema.Field, title, desc string, opts []huh.Option[string]) (huh.Field, func(map[string]any) error) {
	var v []string
	if d, ok := f.Default.([]any); ok {
		for _, x := range d {
			v = append(v, fmt.Sprint(x))
		}
	}
	for i, o := range opts {
		if slices.Contains(v, o.Value) {
			opts[i] = o.Selected(true)
		}
	}
	// The selected values as the array's items (a number as a number):
	// nil when nothing is selected for an optional field, which is not
	// sent.
	value := func(sel []string) (any, error) {
		if len(sel) == 0 && !f.Required {
			return nil, nil
		}
		items := []any{}
		for _, s := range sel {
			x, err := f.Items.Parse(s)
			if err != nil {
				return nil, err
			}
			items = append(items, x)
		}
		if err := f.Check(items); err != nil {
			return nil, err
		}
		return items, nil
	}
	// The keys to choose are not obvious: say them.
	hint := "space or x selects · enter goes on"
	if desc != "" {
		hint = desc + "\n" + hint
	}
	// Every option in view: huh's own height takes the title off the
	// options' (one hidden).
	ms := huh.NewMultiSelect[string]().Title(title).Description(hint).Options(opts...).Value(&v).
		Height(len(opts) + 1 + strings.Count(hint, "\n") + 1).
		Validate(func(sel []string) error {
			_, err := value(sel)
			return err
		})
	return ms, putter(f.Name, func() (any, error) { return value(v) })
}

// jsonField is a JSON editor for a nested object or array, pre-filled
// with a skeleton built from its schema (its default when it has one) and
// checked against the schema before anything is sent.
func jsonField(title, desc string, f schema.Field) (huh.Field, func(map[string]any) error) {
	v := defaultString(f)
	if v == "" {
		if sk := f.Skeleton(); sk != "null" {
			v = sk
		}
	}
	pre := v // an optional field left as pre-filled is not sent
	check := func(s string) (any, error) {
		if !f.Required && s == pre {
			return nil, nil
		}
		return f.Parse(s)
	}
	lines := min(max(strings.Count(v, "\n")+1, 3), 12)
	t := huh.NewText().Title(title + " (JSON)").Description(desc).Value(&v).Lines(lines).Validate(func(s string) error {
		_, err := check(s)
		return err
	})
	return t, putter(f.Name, func() (any, error) { return check(v) })
}

func formatHint(format string) string {
	switch format {
	case "email":
		return "name@example.com"
	case "uri", "url":
		return "https://…"
	case "date":
		return "YYYY-MM-DD"
	case "date-time":
		return "YYYY-MM-DDThh:mm:ssZ"
	}
	return ""
}
