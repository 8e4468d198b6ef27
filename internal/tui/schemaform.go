package tui

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"charm.land/huh/v2"
	"github.com/google/jsonschema-go/jsonschema"

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

func defaultString(p *jsonschema.Schema) string {
	if len(p.Default) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(p.Default, &v) != nil || v == nil {
		return ""
	}
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func schemaField(f schema.Field) (huh.Field, func(map[string]any) error) {
	name, p, required := f.Name, f.Schema, f.Required
	title := f.Label()
	if required {
		title += " *"
	}
	desc := f.Description
	typ := f.Type

	if opts := options(f.Choices); len(opts) > 0 {
		v := defaultString(p)
		if v == "" && required {
			v = opts[0].Value
		}
		if v == "" {
			opts = append([]huh.Option[string]{huh.NewOption("(none)", "")}, opts...)
		}
		sel := huh.NewSelect[string]().Title(title).Description(desc).Options(opts...).Value(&v)
		return sel, func(out map[string]any) error {
			if v != "" {
				out[name] = v
			}
			return nil
		}
	}

	switch typ {
	case "boolean":
		var v bool
		if len(p.Default) > 0 {
			_ = json.Unmarshal(p.Default, &v)
		}
		c := huh.NewConfirm().Title(title).Description(desc).Value(&v)
		return c, func(out map[string]any) error { out[name] = v; return nil }

	case "array":
		if f.Items != nil {
			if opts := options(f.Items.Choices); len(opts) > 0 {
				var v []string
				if len(p.Default) > 0 {
					_ = json.Unmarshal(p.Default, &v)
				}
				for i, o := range opts {
					for _, d := range v {
						if o.Value == d {
							opts[i] = o.Selected(true)
						}
					}
				}
				// The keys to choose are not obvious: say them.
				hint := "space or x selects · enter goes on"
				if desc != "" {
					hint = desc + "\n" + hint
				}
				// Every option in view: huh's own height takes the title
				// off the options' (one hidden).
				ms := huh.NewMultiSelect[string]().Title(title).Description(hint).Options(opts...).Value(&v).
					Height(len(opts) + 1 + strings.Count(hint, "\n") + 1)
				if p.MinItems != nil || p.MaxItems != nil {
					ms.Validate(func(sel []string) error {
						if p.MinItems != nil && len(sel) < *p.MinItems {
							return fmt.Errorf("choose at least %d", *p.MinItems)
						}
						if p.MaxItems != nil && len(sel) > *p.MaxItems {
							return fmt.Errorf("choose at most %d", *p.MaxItems)
						}
						return nil
					})
				}
				return ms, func(out map[string]any) error {
					if len(v) > 0 || required {
						out[name] = append([]string{}, v...)
					}
					return nil
				}
			}
		}
		return jsonField(name, title, desc, f, required)

	case "object":
		return jsonField(name, title, desc, f, required)

	case "number", "integer":
		v := defaultString(p)
		integer := typ == "integer"
		in := huh.NewInput().Title(title).Description(desc).Value(&v).Validate(func(s string) error {
			_, err := parseNumber(s, integer, p, required)
			return err
		})
		return in, func(out map[string]any) error {
			n, err := parseNumber(v, integer, p, required)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if n != nil {
				out[name] = n
			}
			return nil
		}
	}

	// string (and anything unknown)
	v := defaultString(p)
	validate := stringValidator(p, required)
	var field huh.Field
	if longText(f) {
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
		if p.Format != "" {
			in.Placeholder(formatHint(p.Format))
		}
		field = in
	}
	return field, func(out map[string]any) error {
		if err := validate(v); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if v != "" || required {
			out[name] = v
		}
		return nil
	}
}

// jsonField is a JSON editor for a nested object or array, pre-filled
// with a skeleton built from its schema (its default when it has one) and
// checked against the schema before anything is sent.
func jsonField(name, title, desc string, f schema.Field, required bool) (huh.Field, func(map[string]any) error) {
	p := f.Schema
	v := defaultString(p)
	if v == "" {
		if sk := f.Skeleton(); sk != "null" {
			v = sk
		}
	}
	pre := v // an optional field left as pre-filled is not sent
	resolved, _ := p.Resolve(nil)
	check := func(s string) (any, error) {
		if strings.TrimSpace(s) == "" || (!required && s == pre) {
			if required {
				return nil, errors.New("required")
			}
			return nil, nil
		}
		var x any
		if err := json.Unmarshal([]byte(s), &x); err != nil {
			return nil, fmt.Errorf("not valid JSON: %w", err)
		}
		if resolved != nil {
			if err := resolved.Validate(x); err != nil {
				return nil, err
			}
		}
		return x, nil
	}
	lines := min(max(strings.Count(v, "\n")+1, 3), 12)
	t := huh.NewText().Title(title + " (JSON)").Description(desc).Value(&v).Lines(lines).Validate(func(s string) error {
		_, err := check(s)
		return err
	})
	return t, func(out map[string]any) error {
		x, err := check(v)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if x != nil {
			out[name] = x
		}
		return nil
	}
}

func parseNumber(s string, integer bool, p *jsonschema.Schema, required bool) (any, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		if required {
			return nil, errors.New("required")
		}
		return nil, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, errors.New("not a number")
	}
	if integer && f != float64(int64(f)) {
		return nil, errors.New("must be a whole number")
	}
	if p.Minimum != nil && f < *p.Minimum {
		return nil, fmt.Errorf("must be at least %g", *p.Minimum)
	}
	if p.Maximum != nil && f > *p.Maximum {
		return nil, fmt.Errorf("must be at most %g", *p.Maximum)
	}
	if p.ExclusiveMinimum != nil && f <= *p.ExclusiveMinimum {
		return nil, fmt.Errorf("must be more than %g", *p.ExclusiveMinimum)
	}
	if p.ExclusiveMaximum != nil && f >= *p.ExclusiveMaximum {
		return nil, fmt.Errorf("must be less than %g", *p.ExclusiveMaximum)
	}
	if integer {
		return int64(f), nil
	}
	return f, nil
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

func stringValidator(p *jsonschema.Schema, required bool) func(string) error {
	var re *regexp.Regexp
	if p.Pattern != "" {
		re, _ = regexp.Compile(p.Pattern)
	}
	return func(s string) error {
		if s == "" {
			if required {
				return errors.New("required")
			}
			return nil
		}
		n := len([]rune(s))
		if p.MinLength != nil && n < *p.MinLength {
			return fmt.Errorf("at least %d characters", *p.MinLength)
		}
		if p.MaxLength != nil && n > *p.MaxLength {
			return fmt.Errorf("at most %d characters", *p.MaxLength)
		}
		if re != nil && !re.MatchString(s) {
			return fmt.Errorf("must match %s", p.Pattern)
		}
		switch p.Format {
		case "email":
			if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
				return errors.New("not an email address")
			}
		case "uri", "url":
			if u, err := url.Parse(s); err != nil || u.Scheme == "" {
				return errors.New("not a URL (e.g. https://example.com)")
			}
		case "date":
			if _, err := time.Parse(time.DateOnly, s); err != nil {
				return errors.New("not a date (YYYY-MM-DD)")
			}
		case "date-time":
			if _, err := time.Parse(time.RFC3339, s); err != nil {
				return errors.New("not a date-time (RFC 3339)")
			}
		}
		return nil
	}
}
