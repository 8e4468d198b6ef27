package schema

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// combinatorAt finds the anyOf or oneOf a validator's problem is about:
// the message at loc is that none of its alternatives matched, or loc
// lies inside one of them (the validator then reports the last
// alternative's own problem, at ".../anyOf/1"). It returns the
// location of the schema holding the alternatives, and them; nil when the
// problem is not about one, or when its alternatives are a list of
// choices (see choices), which are worded as such.
func combinatorAt(root *jsonschema.Schema, loc, msg string) (at string, alts []*jsonschema.Schema) {
	at = loc
	if m := inAlternative().FindStringIndex(loc); m != nil {
		at = loc[:m[0]]
	} else if !noneMatched().MatchString(msg) {
		return "", nil
	}
	return at, alternativesAt(root, at)
}

// alternativesAt is the anyOf or oneOf of the schema at loc, when each of
// them can be told in a few words (see summary) and they are not a list
// of choices.
func alternativesAt(root *jsonschema.Schema, loc string) []*jsonschema.Schema {
	s := schemaAt(root, loc)
	if s == nil || len(choices(s)) > 0 {
		return nil
	}
	alts := s.AnyOf
	if len(alts) == 0 {
		alts = s.OneOf
	}
	for _, a := range alts {
		if a == nil || summary(a) == "" {
			return nil // one alternative that cannot be told in a few words
		}
	}
	return alts
}

var (
	// "/properties/v/anyOf/1": the first combinator on a location's way.
	inAlternative = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`/(anyOf|oneOf)/\d+(/|$)`) })
	noneMatched   = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?s)^(oneOf|anyOf): did not validate against any of`)
	})
	bothMatched = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)^oneOf: validated against both`) })
)

// alternativesProblem is the problem of a value that matches none of
// alts: what each would take, and what it got: "must be a string of at
// most 3 characters or an integer of at least 10, got "toolong"". When
// the alternatives only require properties: "must have a or b".
func alternativesProblem(alts []*jsonschema.Schema, got string) string {
	words := summaries(alts)
	if requiredOnly(alts) {
		return "must have " + strings.Join(words, " or ")
	}
	return "must be " + strings.Join(words, " or ") + ", got " + got
}

// requiredOnly reports whether each of alts only requires properties
// (a oneOf that asks for exactly one of several properties).
func requiredOnly(alts []*jsonschema.Schema) bool {
	for _, a := range alts {
		if len(a.Required) == 0 || !reflect.DeepEqual(*a, jsonschema.Schema{Required: a.Required}) {
			return false
		}
	}
	return len(alts) > 0
}

// severalMatched is the problem of an object that gives more than one of
// a oneOf's alternatives that only require properties: "must have only
// one of a, b". "" for other alternatives.
func severalMatched(root *jsonschema.Schema, loc string) string {
	s := schemaAt(root, loc)
	if s == nil || !requiredOnly(s.OneOf) {
		return ""
	}
	return "must have only one of " + strings.Join(summaries(s.OneOf), ", ")
}

// summaries are the summary of each of alts.
func summaries(alts []*jsonschema.Schema) []string {
	words := make([]string, len(alts))
	for i, a := range alts {
		words[i] = summary(a)
	}
	return words
}

// summary tells in a few words what a schema takes ("an integer of at
// least 10", "a date (YYYY-MM-DD)", "null", "a and b" for an alternative
// that only requires properties); "" when it cannot (a $ref, an object's
// properties, a combinator of its own).
func summary(s *jsonschema.Schema) string {
	if s.Const != nil {
		return jsonText(*s.Const)
	}
	if requiredOnly([]*jsonschema.Schema{s}) {
		return strings.Join(s.Required, " and ")
	}
	if s.Ref != "" || s.DynamicRef != "" || len(s.AnyOf)+len(s.OneOf)+len(s.AllOf) > 0 || s.Not != nil {
		return ""
	}
	if len(s.Enum) > 0 {
		vals := make([]string, len(s.Enum))
		for i, v := range s.Enum {
			vals[i] = jsonText(v)
		}
		return "one of " + strings.Join(vals, ", ")
	}
	t := s.Type
	if t == "" && len(s.Types) == 1 {
		t = s.Types[0]
	}
	var b strings.Builder
	switch t {
	case "null":
		return "null"
	case "boolean":
		return "true or false"
	case "string":
		switch s.Format {
		case "date":
			b.WriteString("a date (YYYY-MM-DD)")
		case "date-time":
			b.WriteString("a date and time (RFC 3339)")
		case "email":
			b.WriteString("an email address")
		case "uri", "url":
			b.WriteString("a URL")
		default:
			b.WriteString("a string")
		}
		lo, hi := 0, -1
		if s.MinLength != nil {
			lo = *s.MinLength
		}
		if s.MaxLength != nil {
			hi = *s.MaxLength
		}
		switch {
		case lo > 0 && hi >= 0:
			fmt.Fprintf(&b, " of %d to %s", lo, count(fmt.Sprint(hi), "character"))
		case lo > 0:
			fmt.Fprintf(&b, " of at least %s", count(fmt.Sprint(lo), "character"))
		case hi >= 0:
			fmt.Fprintf(&b, " of at most %s", count(fmt.Sprint(hi), "character"))
		}
		if s.Pattern != "" {
			fmt.Fprintf(&b, " matching %s", s.Pattern)
		}
	case "integer", "number":
		b.WriteString(map[string]string{"integer": "an integer", "number": "a number"}[t])
		n := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
		switch {
		case s.Minimum != nil && s.Maximum != nil:
			fmt.Fprintf(&b, " from %s to %s", n(*s.Minimum), n(*s.Maximum))
		case s.Minimum != nil:
			fmt.Fprintf(&b, " of at least %s", n(*s.Minimum))
		case s.Maximum != nil:
			fmt.Fprintf(&b, " of at most %s", n(*s.Maximum))
		}
		if s.ExclusiveMinimum != nil {
			fmt.Fprintf(&b, " above %s", n(*s.ExclusiveMinimum))
		}
		if s.ExclusiveMaximum != nil {
			fmt.Fprintf(&b, " below %s", n(*s.ExclusiveMaximum))
		}
	case "array":
		b.WriteString("a list")
	case "object":
		return "" // its properties would not fit in a few words
	default:
		return ""
	}
	return b.String()
}
