package tool

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/otter-sh/otter/internal/schema"
)

// ArgumentsError says why arguments do not match a tool's input schema:
// the Set did not call the tool. Set.CheckArguments returns it; Set.Call
// answers such arguments with a tool error a model can act on instead.
type ArgumentsError struct {
	Tool string // the qualified name
	// Problems are what is wrong, one per argument where the schema allows
	// telling them apart, each "path: what", e.g. "a: want number, got
	// string", "b: missing", "opts.depth: maximum: 3.75 is greater than 2.5".
	Problems []string
	Schema   json.RawMessage // the tool's input schema
}

func (e *ArgumentsError) Error() string {
	return fmt.Sprintf("the arguments do not match the input schema of %s: %s", e.Tool, strings.Join(e.Problems, "; "))
}

// modelMessage is the text of the tool error a model gets for e.
func (e *ArgumentsError) modelMessage() string {
	msg := fmt.Sprintf("invalid arguments for %s: %s.", e.Tool, strings.Join(e.Problems, "; "))
	if len(e.Schema) > 0 {
		msg += " The input schema is: " + string(e.Schema)
	}
	return msg
}

// schemaCheck is what an entry validates arguments with, resolved once.
type schemaCheck struct {
	full *jsonschema.Resolved // nil when the schema cannot be used for validation
	// each holds the schema's checks of one argument on its own: the root
	// schema without its required list and the keywords about the object
	// as a whole. nil when the schema does not lend itself to that (a
	// root $ref, say); then a failure is reported as the validator words it.
	each     *jsonschema.Resolved
	required []string // the root schema's required arguments
	order    []string // the root schema's properties as written
}

func newSchemaCheck(name string, raw json.RawMessage) schemaCheck {
	var c schemaCheck
	if len(raw) == 0 {
		return c
	}
	var sch jsonschema.Schema
	if err := json.Unmarshal(raw, &sch); err != nil {
		slog.Debug("tool input schema is not a JSON Schema; arguments are not validated", "tool", name, "err", err)
		return c
	}
	rs, err := sch.Resolve(nil)
	if err != nil {
		slog.Debug("tool input schema cannot be resolved; arguments are not validated", "tool", name, "err", err)
		return c
	}
	c.full = rs
	if sch.Ref != "" || sch.DynamicRef != "" {
		return c
	}
	var each jsonschema.Schema
	if json.Unmarshal(raw, &each) != nil {
		return c
	}
	each.Required, each.MinProperties, each.MaxProperties = nil, nil, nil
	each.DependentRequired, each.DependentSchemas, each.DependencyStrings, each.DependencySchemas = nil, nil, nil, nil
	each.AllOf, each.AnyOf, each.OneOf, each.Not = nil, nil, nil, nil
	each.If, each.Then, each.Else, each.UnevaluatedProperties = nil, nil, nil, nil
	if rs, err := each.Resolve(nil); err == nil {
		c.each = rs
	}
	c.required = sch.Required
	if o, err := schema.Parse(raw); err == nil {
		c.order = o.Names()
	}
	return c
}

// problems validates args, a JSON object, and returns what is wrong, or
// nil.
func (c schemaCheck) problems(args map[string]any) []string {
	if c.full == nil {
		return nil
	}
	err := c.full.Validate(args)
	if err == nil {
		return nil
	}
	// The validator stops at the first problem (and visits properties in
	// map order): find every argument's own by checking each alone.
	byArg := map[string][]string{}
	if c.each != nil {
		for k, v := range args {
			if err := c.each.Validate(map[string]any{k: v}); err != nil {
				byArg[k] = append(byArg[k], describeSchemaError(err)...)
			}
		}
		for _, r := range c.required {
			if _, ok := args[r]; !ok {
				byArg[r] = append(byArg[r], r+": missing")
			}
		}
	}
	if len(byArg) == 0 {
		// A problem of the object as a whole (oneOf, minProperties, …).
		return describeSchemaError(err)
	}
	keys := make([]string, 0, len(byArg))
	for k := range byArg {
		keys = append(keys, k)
	}
	rank := func(k string) int {
		if i := slices.Index(c.order, k); i >= 0 {
			return i
		}
		return len(c.order)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	var out []string
	for _, k := range keys {
		out = append(out, byArg[k]...)
	}
	return out
}

var (
	// "validating root: validating /properties/timeout: maximum: …"
	validatingPrefix = regexp.MustCompile(`validating (root|/[^:]*): `)
	// jsonschema-go prints instance numbers as rationals ("1000/1") and
	// bounds with %f ("120.000000").
	rational   = regexp.MustCompile(`-?\b\d+/\d+\b`)
	fixedFloat = regexp.MustCompile(`\b\d+\.\d{6}\b`) // %f: six decimals
	// `type: two has type "string", want "number"` (or `want one of "a, b"`)
	typeMismatch = regexp.MustCompile(`(?s)^type: .* has type "([a-z]+)", want (one of )?"([a-z, ]+)"$`)
	// `required: missing properties: ["a" "b"]`
	missingProps = regexp.MustCompile(`(?s)^required: missing properties: \[(.*)\]$`)
	// `unexpected additional properties ["x"]`
	extraProps = regexp.MustCompile(`(?s)^unexpected additional properties \[(.*)\]$`)
	quoted     = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
)

// describeSchemaError words a validation error for a person or a model:
// the failing property as a path ("timeout: maximum: 1000 is greater
// than 120") rather than the validator's nested "validating …" prefixes,
// types and missing properties plainly ("a: want number, got string",
// "opts.depth: missing"), and numbers as written. A missing-properties
// error gives one problem per property.
func describeSchemaError(err error) []string {
	msg := err.Error()
	path := ""
	// Each nesting level prefixes the schema location it validated; the
	// innermost holds the whole path.
	if locs := validatingPrefix.FindAllStringSubmatchIndex(msg, -1); len(locs) > 0 {
		last := locs[len(locs)-1]
		if loc := msg[last[2]:last[3]]; loc != "root" {
			// /properties/a/items/properties/b → a.items.b
			path = strings.ReplaceAll(strings.ReplaceAll(strings.TrimPrefix(loc, "/"), "properties/", ""), "/", ".")
		}
		msg = msg[last[1]:]
	}
	at := func(p string) string {
		if path == "" {
			return p
		}
		return path + "." + p
	}
	if m := typeMismatch.FindStringSubmatch(msg); m != nil {
		what := "want " + m[2] + m[3] + ", got " + m[1]
		if path == "" {
			return []string{what}
		}
		return []string{path + ": " + what}
	}
	// Errors that list property names: one problem per name.
	for _, named := range []struct {
		re   *regexp.Regexp
		what string
	}{
		{missingProps, "missing"},
		{extraProps, "not an argument the schema allows"},
	} {
		m := named.re.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		var out []string
		for _, q := range quoted.FindAllString(m[1], -1) {
			if name, err := strconv.Unquote(q); err == nil {
				out = append(out, at(name)+": "+named.what)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	if path != "" {
		msg = path + ": " + msg
	}
	msg = rational.ReplaceAllStringFunc(msg, func(q string) string {
		if r, ok := new(big.Rat).SetString(q); ok {
			f, _ := r.Float64()
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
		return q
	})
	return []string{fixedFloat.ReplaceAllStringFunc(msg, func(f string) string {
		return strings.TrimSuffix(strings.TrimRight(f, "0"), ".")
	})}
}
