package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Parse reads text, what a person typed for the field, into the field's
// value as it goes into JSON, and checks it (see Check):
//
//   - a field with choices takes one by its value or its name (in any
//     case), or by its number in the list, counted from 1;
//   - integer and number take a number ("3", "2.5"; an integer also
//     "3.0"), giving an int64 or a float64;
//   - boolean takes y, yes, true, 1, n, no, false or 0, in any case;
//   - an array takes a JSON array, or its items separated by commas, each
//     read as the items' field reads it ("piano, 3");
//   - an object takes a JSON object;
//   - a string, or a field of no known type, is the text as typed.
//
// Numbers and the like are read with spaces around them trimmed; a string
// keeps them. Empty text is no answer: nil and no error for an optional
// field, a "required" error for a required one. A default is the front
// end's to pre-fill or fall back to: Parse does not apply it.
//
// Beyond Check, a string with a format a form hints at (email, uri, url,
// date, date-time) must be one: jsonschema-go leaves format unchecked, and
// a tool's caller may send what the server accepts anyway, but a person
// typing an address wants the typo caught here.
//
// Every error is a *FieldError naming the field.
func (f Field) Parse(text string) (any, error) {
	v, err := f.parse(text)
	if err != nil || v == nil {
		return v, err
	}
	if err := f.Check(v); err != nil {
		return nil, err
	}
	if s, ok := v.(string); ok && f.Schema != nil {
		if p := formatProblem(f.Schema.Format, s); p != "" {
			return nil, &FieldError{Field: f.Name, Problem: p}
		}
	}
	return v, nil
}

// parse is Parse without the checks.
func (f Field) parse(text string) (any, error) {
	trimmed := strings.TrimSpace(text)
	if text == "" || (f.Type != "string" && trimmed == "") {
		if f.Required {
			return nil, &FieldError{Field: f.Name, Problem: "required"}
		}
		return nil, nil
	}
	problem := func(format string, args ...any) error {
		return &FieldError{Field: f.Name, Problem: fmt.Sprintf(format, args...)}
	}
	if len(f.Choices) > 0 {
		if c, ok := f.choose(trimmed); ok {
			return c.Value, nil
		}
		return nil, problem("%s", notAChoice(f.Choices, f.shown(trimmed)))
	}
	switch f.Type {
	case "boolean":
		switch strings.ToLower(trimmed) {
		case "y", "yes", "true", "1":
			return true, nil
		case "n", "no", "false", "0":
			return false, nil
		}
		return nil, problem("must be yes or no, got %s", strconv.Quote(trimmed))
	case "integer":
		if n, err := strconv.ParseInt(trimmed, 10, 64); err == nil {
			return n, nil
		}
		x, err := strconv.ParseFloat(trimmed, 64)
		if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, problem("must be a whole number, got %s", strconv.Quote(trimmed))
		}
		if x != math.Trunc(x) {
			return nil, problem("must be a whole number, got %s", trimmed)
		}
		if math.Abs(x) > 1<<53 { // beyond it a float64 loses whole numbers
			return nil, problem("must be between -2^53 and 2^53, got %s", trimmed)
		}
		return int64(x), nil
	case "number":
		x, err := strconv.ParseFloat(trimmed, 64)
		if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, problem("must be a number, got %s", strconv.Quote(trimmed))
		}
		return x, nil
	case "array":
		if strings.HasPrefix(trimmed, "[") || f.Items == nil {
			return f.parseJSON(trimmed, "array")
		}
		item := *f.Items
		item.Name, item.Required = "", true
		var out []any
		for i, part := range strings.Split(trimmed, ",") {
			v, err := item.parse(strings.TrimSpace(part))
			if err != nil {
				return nil, problem("item %d %s", i+1, err.(*FieldError).Problem)
			}
			out = append(out, v)
		}
		return out, nil
	case "object":
		return f.parseJSON(trimmed, "object")
	}
	return text, nil
}

// parseJSON reads text as JSON, for a field of the kind ("array",
// "object") a person writes as JSON.
func (f Field) parseJSON(text, kind string) (any, error) {
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return nil, &FieldError{Field: f.Name, Problem: fmt.Sprintf("must be a JSON %s, but it is not valid JSON (%v)", kind, err)}
	}
	return v, nil
}

// choose finds the choice s names: by value or name, in any case, or by
// its number in the list, from 1. A value wins over a number: the enum
// [3, 1, 2] takes "1" as 1.
func (f Field) choose(s string) (Choice, bool) {
	for _, c := range f.Choices {
		if strings.EqualFold(s, c.String()) || (c.Title != "" && strings.EqualFold(s, c.Title)) {
			return c, true
		}
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(f.Choices) {
		return f.Choices[n-1], true
	}
	return Choice{}, false
}

// shown is text, typed for the field, as a problem shows what it got: as
// the JSON value it would be (a number as written, a string quoted), the
// way Check shows a value.
func (f Field) shown(text string) string {
	if f.Type != "string" && f.Type != "" && json.Valid([]byte(text)) {
		return text
	}
	return jsonText(text)
}

// formatProblem is what is wrong with s as a value of format, or "".
func formatProblem(format, s string) string {
	switch format {
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return fmt.Sprintf("must be an email address such as name@example.com, got %s", jsonText(s))
		}
	case "uri", "url":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			return fmt.Sprintf("must be a URL such as https://example.com, got %s", jsonText(s))
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return fmt.Sprintf("must be a date (YYYY-MM-DD), got %s", jsonText(s))
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return fmt.Sprintf("must be a date and time (RFC 3339, YYYY-MM-DDThh:mm:ssZ), got %s", jsonText(s))
		}
	}
	return ""
}
