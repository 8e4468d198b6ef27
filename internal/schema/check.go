package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// FieldError is one thing wrong with a value: which property (a path such
// as "opts.depth"; "" for the object as a whole) and what, worded for the
// person or model who gave it ("must be at least 1, got 0").
type FieldError struct {
	Field   string
	Problem string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Problem
	}
	return e.Field + ": " + e.Problem
}

// Problems is everything wrong with a set of values, in the schema's
// order of properties.
type Problems []*FieldError

func (p Problems) Error() string {
	msgs := make([]string, len(p))
	for i, e := range p {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

// Strings returns each problem's text.
func (p Problems) Strings() []string {
	out := make([]string, len(p))
	for i, e := range p {
		out[i] = e.Error()
	}
	return out
}

// errorOf is nil for no problems, the *FieldError for one and Problems
// for several.
func errorOf(p []*FieldError) error {
	switch len(p) {
	case 0:
		return nil
	case 1:
		return p[0]
	}
	return Problems(p)
}

// checker validates values with jsonschema-go. It resolves its schema on
// first use: most schemas read (every tool's, to list them) are never
// used to check a value.
type checker struct {
	once sync.Once
	load func(*checker)

	err  error                // why the schema cannot check values; then full is nil
	full *jsonschema.Resolved // the whole schema
	// each holds the object schema's checks of one property on its own:
	// without its required list and the keywords about the object as a
	// whole. The validator stops at its first problem (and visits
	// properties in map order), so checking each property alone is how
	// every property's own problem is found. nil when the schema does not
	// lend itself to that (a root $ref, say).
	each     *jsonschema.Resolved
	root     *jsonschema.Schema // the schema locations in messages are in
	required []string
	order    []string // the properties as written
}

func (c *checker) get() *checker {
	c.once.Do(func() { c.load(c) })
	return c
}

// objectChecker checks values against the object schema raw, whose
// properties are written in order.
func objectChecker(raw json.RawMessage, order []string) *checker {
	return &checker{order: order, load: func(c *checker) {
		var full jsonschema.Schema
		if err := json.Unmarshal(raw, &full); err != nil {
			c.err = fmt.Errorf("reading the schema: %w", err)
			return
		}
		rs, err := full.Resolve(nil)
		if err != nil {
			c.err = fmt.Errorf("resolving the schema: %w", err)
			return
		}
		c.full, c.root, c.required = rs, &full, full.Required
		if full.Ref != "" || full.DynamicRef != "" {
			return
		}
		var each jsonschema.Schema
		if json.Unmarshal(raw, &each) != nil {
			return
		}
		each.Required, each.MinProperties, each.MaxProperties = nil, nil, nil
		each.DependentRequired, each.DependentSchemas, each.DependencyStrings, each.DependencySchemas = nil, nil, nil, nil
		each.AllOf, each.AnyOf, each.OneOf, each.Not = nil, nil, nil, nil
		each.If, each.Then, each.Else, each.UnevaluatedProperties = nil, nil, nil, nil
		if rs, err := each.Resolve(nil); err == nil {
			c.each = rs
		}
	}}
}

// valueChecker checks values against s, a schema of its own (not a
// property checked through its object).
func valueChecker(s *jsonschema.Schema) *checker {
	return &checker{load: func(c *checker) {
		if s == nil {
			c.err = fmt.Errorf("no schema")
			return
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			c.err = fmt.Errorf("resolving the schema: %w", err)
			return
		}
		c.full, c.root = rs, s
	}}
}

// Checkable returns why the schema cannot be used to check values (it
// does not resolve: a $ref to somewhere else, say), or nil. Check then
// accepts everything, leaving the checking to whoever receives the values.
func (o *Object) Checkable() error {
	if o.check == nil {
		return nil
	}
	return o.check.get().err
}

// Check checks args, an object as decoded from JSON (a tool call's
// arguments, a form's content), against the whole schema: every missing
// required property, every property the schema does not allow, each
// property's own constraints, and then the object as a whole (oneOf,
// minProperties…). It returns nil, or Problems with one entry per problem
// in the order the schema lists the properties. A schema that cannot check
// values (see Checkable) accepts anything.
func (o *Object) Check(args map[string]any) error {
	if o.check == nil {
		return nil
	}
	c := o.check.get()
	if c.full == nil {
		return nil
	}
	err := c.full.Validate(args)
	if err == nil {
		return nil
	}
	byArg := map[string][]*FieldError{}
	if c.each != nil {
		for k, v := range args {
			one := map[string]any{k: v}
			if err := c.each.Validate(one); err != nil {
				byArg[k] = append(byArg[k], describe(err, c.root, one, c.each.Validate)...)
			}
		}
		for _, r := range c.required {
			if _, ok := args[r]; !ok {
				byArg[r] = append(byArg[r], &FieldError{Field: r, Problem: "missing"})
			}
		}
	}
	if len(byArg) == 0 {
		// A problem of the object as a whole (oneOf, minProperties, …).
		return Problems(describe(err, c.root, args, c.full.Validate))
	}
	rank := func(k string) int {
		if i := slices.Index(c.order, k); i >= 0 {
			return i
		}
		return len(c.order)
	}
	keys := make([]string, 0, len(byArg))
	for k := range byArg {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	var out Problems
	for _, k := range keys {
		out = append(out, byArg[k]...)
	}
	return out
}

// Check checks v, a value of the field, against the field's constraints
// (type, minimum and maximum, lengths, pattern, enum, item counts, nested
// properties…) as jsonschema-go validates them; format is an annotation
// there, as JSON Schema 2020-12 has it by default, so Check does not
// check it (Parse does, for what a person types). A property of an object
// read by Parse is checked as its object checks it (so a $ref into the
// object's $defs resolves); the error is then exactly the one Object.Check
// gives for the property. It returns nil, a *FieldError, or Problems when
// there are several (properties missing from an object value, say).
func (f Field) Check(v any) error {
	wire, err := toWire(v)
	if err != nil {
		return &FieldError{Field: f.Name, Problem: fmt.Sprintf("cannot be sent as JSON (%v)", err)}
	}
	if f.parent != nil {
		if c := f.parent.get(); c.each != nil {
			one := map[string]any{f.Name: wire}
			if err := c.each.Validate(one); err != nil {
				return errorOf(describe(err, c.root, one, c.each.Validate))
			}
			return nil
		}
	}
	c := f.own
	if c == nil {
		c = valueChecker(f.Schema)
	}
	if c = c.get(); c.full == nil {
		return nil
	}
	err = c.full.Validate(wire)
	if err == nil {
		return nil
	}
	ps := describe(err, c.root, wire, c.full.Validate)
	for _, p := range ps {
		p.Field = joinPath(f.Name, p.Field)
	}
	return errorOf(ps)
}

// toWire is v as it goes over the wire: JSON-encoded and decoded again,
// so that an int64 or a []string is validated as the number or array it
// becomes.
func toWire(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var wire any
	err = json.Unmarshal(b, &wire)
	return wire, err
}

func joinPath(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "." + b
}

var (
	// "validating root: validating /properties/timeout: maximum: …"
	validatingPrefix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`validating (root|/[^:]*): `) })
	// `required: missing properties: ["a" "b"]`
	missingProps = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)^required: missing properties: \[(.*)\]$`) })
	// `unexpected additional properties ["x"]`
	extraProps = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)^unexpected additional properties \[(.*)\]$`) })
	quoted     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"(?:[^"\\]|\\.)*"`) })
	// `type: two has type "string", want "number"` (or `want one of "a, b"`)
	typeMismatch = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?s)^type: .* has type "([a-z]+)", want (one of )?"([a-z, ]+)"$`)
	})
	choiceKeyword = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(enum|const|oneOf|anyOf): `) })
	// `enum: x does not equal any of: [a b]`, `const: x does not equal a`
	enumValue = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)^(?:enum|const): (.*) does not equal `) })
)

// wordings reword jsonschema-go's messages of one keyword: "maximum:
// 1000/1 is greater than 120.000000" becomes "must be at most 120, got
// 1000". Each is the message's pattern and the wording of its groups,
// numbers as written.
//
// Compiled on first use, as every pattern here: at package initialisation
// they cost every start of otter, including those that check nothing.
var wordings = sync.OnceValue(func() []wording {
	return []wording{
		{regexp.MustCompile(`^minimum: (\S+) is less than (\S+)$`), func(m []string) string {
			return fmt.Sprintf("must be at least %s, got %s", num(m[2]), num(m[1]))
		}},
		{regexp.MustCompile(`^maximum: (\S+) is greater than (\S+)$`), func(m []string) string {
			return fmt.Sprintf("must be at most %s, got %s", num(m[2]), num(m[1]))
		}},
		{regexp.MustCompile(`^exclusiveMinimum: (\S+) is less than or equal to (\S+)$`), func(m []string) string {
			return fmt.Sprintf("must be more than %s, got %s", num(m[2]), num(m[1]))
		}},
		{regexp.MustCompile(`^exclusiveMaximum: (\S+) is greater than or equal to (\S+)$`), func(m []string) string {
			return fmt.Sprintf("must be less than %s, got %s", num(m[2]), num(m[1]))
		}},
		{regexp.MustCompile(`^multipleOf: (\S+) is not a multiple of (\S+)$`), func(m []string) string {
			return fmt.Sprintf("must be a multiple of %s, got %s", num(m[2]), num(m[1]))
		}},
		{regexp.MustCompile(`(?s)^minLength: .* contains (\d+) Unicode code points, fewer than (\d+)$`), func(m []string) string {
			return fmt.Sprintf("must be at least %s long, got %s", count(m[2], "character"), m[1])
		}},
		{regexp.MustCompile(`(?s)^maxLength: .* contains (\d+) Unicode code points, more than (\d+)$`), func(m []string) string {
			return fmt.Sprintf("must be at most %s long, got %s", count(m[2], "character"), m[1])
		}},
		{regexp.MustCompile(`(?s)^pattern: (".*") does not match regular expression (".*")$`), func(m []string) string {
			p, err := strconv.Unquote(m[2])
			if err != nil {
				p = m[2]
			}
			return fmt.Sprintf("must match the pattern %s, got %s", p, m[1])
		}},
		{regexp.MustCompile(`^minItems: array length (\d+) is less than (\d+)$`), func(m []string) string {
			return fmt.Sprintf("must have at least %s, got %s", count(m[2], "item"), m[1])
		}},
		{regexp.MustCompile(`^maxItems: array length (\d+) is greater than (\d+)$`), func(m []string) string {
			return fmt.Sprintf("must have at most %s, got %s", count(m[2], "item"), m[1])
		}},
		{regexp.MustCompile(`^uniqueItems: array items (\d+) and (\d+) are equal$`), func(m []string) string {
			i, _ := strconv.Atoi(m[1])
			j, _ := strconv.Atoi(m[2])
			return fmt.Sprintf("must not repeat an item: items %d and %d are equal", min(i, j)+1, max(i, j)+1)
		}},
		{noneMatched(), func(m []string) string {
			return "matches none of the alternatives the schema allows (" + m[1] + ")"
		}},
		{bothMatched(), func(m []string) string {
			return "matches more than one of the alternatives the schema allows only one of (oneOf)"
		}},
		{regexp.MustCompile(`^minProperties: object has (\d+) properties, less than (\d+)$`), func(m []string) string {
			return fmt.Sprintf("must have at least %s, got %s", count(m[2], "property"), m[1])
		}},
		{regexp.MustCompile(`^maxProperties: object has (\d+) properties, greater than (\d+)$`), func(m []string) string {
			return fmt.Sprintf("must have at most %s, got %s", count(m[2], "property"), m[1])
		}},
	}
})

type wording struct {
	re   *regexp.Regexp
	word func(m []string) string
}

// describe words a validation error of instance, validated against root,
// for a person or a model: the failing property as a path ("opts.depth")
// rather than the validator's nested "validating …" prefixes, the
// constraint as "must …, got …" with numbers as written, types and
// missing properties plainly ("want number, got string", "missing"). A
// missing or disallowed properties error gives one problem per property;
// what it cannot reword keeps the validator's words.
//
// validate is the check that gave err; it finds which item of an array
// failed (see itemPath).
func describe(err error, root *jsonschema.Schema, instance any, validate func(any) error) []*FieldError {
	msg := err.Error()
	loc := ""
	// Each nesting level prefixes the schema location it validated; the
	// innermost holds the whole path, unless the value is none of a list
	// of choices: then the choice list's level says it (the levels below
	// are why each alternative failed).
	locs := validatingPrefix().FindAllStringSubmatchIndex(msg, -1)
	for i, l := range locs {
		at, rest := msg[l[2]:l[3]], msg[l[1]:]
		if at == "root" {
			at = ""
		}
		if i == len(locs)-1 || choiceKeyword().MatchString(rest) && len(choicesAt(root, at)) > 0 {
			loc, msg = at, rest
			break
		}
	}
	// /properties/a/items/properties/b → a[2].b, or a.items.b when the
	// item cannot be found.
	pathOf := func(loc string) string {
		if p, ok := itemPath(loc, instance, validate); ok {
			return p
		}
		return strings.ReplaceAll(strings.ReplaceAll(strings.TrimPrefix(loc, "/"), "properties/", ""), "/", ".")
	}
	if at, alts := combinatorAt(root, loc, msg); alts != nil {
		if v, ok := instanceAt(instance, at); ok {
			return []*FieldError{{Field: pathOf(at), Problem: alternativesProblem(alts, jsonText(v))}}
		}
	}
	path := pathOf(loc)
	if bothMatched().MatchString(msg) {
		if problem := severalMatched(root, loc); problem != "" {
			return []*FieldError{{Field: path, Problem: problem}}
		}
	}
	one := func(problem string) []*FieldError { return []*FieldError{{Field: path, Problem: problem}} }

	if m := typeMismatch().FindStringSubmatch(msg); m != nil {
		return one("want " + m[2] + m[3] + ", got " + m[1])
	}
	for _, named := range []struct {
		re   *regexp.Regexp
		what string
	}{
		{missingProps(), "missing"},
		{extraProps(), "not a property the schema allows"},
	} {
		m := named.re.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		var names []string
		for _, q := range quoted().FindAllString(m[1], -1) {
			if name, err := strconv.Unquote(q); err == nil {
				names = append(names, name)
			}
		}
		if named.re == extraProps() {
			slices.Sort(names) // the validator lists them in map order
		}
		var out []*FieldError
		for _, name := range names {
			out = append(out, &FieldError{Field: joinPath(path, name), Problem: named.what})
		}
		if len(out) > 0 {
			return out
		}
	}
	if cs := choicesAt(root, loc); len(cs) > 0 && choiceKeyword().MatchString(msg) {
		if v, ok := instanceAt(instance, loc); ok {
			return one(notAChoice(cs, jsonText(v)))
		}
		// An item: the message holds the value, printed with %v.
		if m := enumValue().FindStringSubmatch(msg); m != nil {
			got := m[1]
			if s := schemaAt(root, loc); s != nil && typeOf(s) == "string" {
				got = jsonText(got)
			}
			return one(notAChoice(cs, got))
		}
	}
	for _, w := range wordings() {
		if m := w.re.FindStringSubmatch(msg); m != nil {
			return one(w.word(m))
		}
	}
	return one(msg)
}

// notAChoice is the problem of a value, shown as got, that is none of cs.
func notAChoice(cs []Choice, got string) string {
	labels := make([]string, len(cs))
	for i, c := range cs {
		labels[i] = c.Display()
	}
	return fmt.Sprintf("must be one of %s, got %s", strings.Join(labels, ", "), got)
}

// schemaAt returns the schema at loc, a location in root as the validator
// names it ("/properties/a/items"); nil when loc goes where it does not
// follow.
func schemaAt(root *jsonschema.Schema, loc string) *jsonschema.Schema {
	s := root
	segs := strings.Split(strings.TrimPrefix(loc, "/"), "/")
	if loc == "" {
		segs = nil
	}
	for i := 0; i < len(segs) && s != nil; i++ {
		switch segs[i] {
		case "properties", "$defs", "definitions":
			if i+1 == len(segs) {
				return nil
			}
			m := s.Properties
			if segs[i] != "properties" {
				m = s.Defs
				if segs[i] == "definitions" {
					m = s.Definitions
				}
			}
			i++
			s = m[segs[i]]
		case "items":
			s = s.Items
		case "additionalProperties":
			s = s.AdditionalProperties
		default:
			return nil
		}
	}
	return s
}

// choicesAt returns the choices of the schema at loc in root.
func choicesAt(root *jsonschema.Schema, loc string) []Choice {
	if s := schemaAt(root, loc); s != nil {
		return choices(s)
	}
	return nil
}

// instanceAt returns the part of instance at loc when loc goes through
// properties only (an item's location does not say which item).
func instanceAt(instance any, loc string) (any, bool) {
	if loc == "" {
		return instance, true
	}
	segs := strings.Split(strings.TrimPrefix(loc, "/"), "/")
	v := instance
	for i := 0; i < len(segs); i += 2 {
		m, ok := v.(map[string]any)
		if !ok || segs[i] != "properties" || i+1 == len(segs) {
			return nil, false
		}
		if v, ok = m[segs[i+1]]; !ok {
			return nil, false
		}
	}
	return v, true
}

// maxItemsSearched bounds the items itemPath checks one by one (each is
// a validation of the whole value): a person's or a model's arguments
// hold a few; past this, the path says "items".
const maxItemsSearched = 1000

// itemPath is the path of the value at loc, a location in the schema as
// the validator names it ("/properties/tools/items/properties/name"), with
// the index of the failing item of each array on the way: "tools[1].name".
// The validator names where in the schema a value failed, not which item,
// so each item is checked in a copy of the value whose array holds that
// item alone; the first that fails at loc is the one. ok is false when loc
// goes where this does not follow ($defs, prefixItems, a combinator) or no
// item fails alone.
func itemPath(loc string, instance any, validate func(any) error) (path string, ok bool) {
	if loc == "" || !strings.Contains(loc, "/items") {
		return "", false
	}
	segs := strings.Split(strings.TrimPrefix(loc, "/"), "/")
	var (
		steps []any // map keys (string) and slice indexes (int) into work
		work  = instance
		out   strings.Builder
	)
	for i := 0; i < len(segs); i++ {
		switch segs[i] {
		case "properties":
			if i+1 == len(segs) {
				return "", false
			}
			i++
			if out.Len() > 0 {
				out.WriteByte('.')
			}
			out.WriteString(segs[i])
			steps = append(steps, segs[i])
		case "items":
			arr, isArr := valueAt(work, steps).([]any)
			if !isArr {
				return "", false
			}
			here := "/" + strings.Join(segs[:i+1], "/")
			found := -1
			for j := range min(len(arr), maxItemsSearched) {
				try := replaceAt(work, steps, []any{arr[j]})
				if err := validate(try); err != nil && failsWithin(err, here) {
					found, work = j, try
					break
				}
			}
			if found < 0 {
				return "", false
			}
			fmt.Fprintf(&out, "[%d]", found)
			steps = append(steps, 0)
		default:
			return "", false
		}
	}
	return out.String(), true
}

// failsWithin reports whether err, a validator's error, is about the
// schema location loc or one inside it.
func failsWithin(err error, loc string) bool {
	locs := validatingPrefix().FindAllStringSubmatch(err.Error(), -1)
	if len(locs) == 0 {
		return false
	}
	at := locs[len(locs)-1][1]
	return at == loc || strings.HasPrefix(at, loc+"/")
}

// valueAt follows steps (map keys and slice indexes) into v; nil when a
// step does not lead anywhere.
func valueAt(v any, steps []any) any {
	for _, st := range steps {
		switch k := st.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// replaceAt is v with the value at steps replaced by repl; the maps and
// slices on the way are copied, v is not changed.
func replaceAt(v any, steps []any, repl any) any {
	if len(steps) == 0 {
		return repl
	}
	switch k := steps[0].(type) {
	case string:
		m, _ := v.(map[string]any)
		c := make(map[string]any, len(m))
		for key, val := range m {
			c[key] = val
		}
		c[k] = replaceAt(m[k], steps[1:], repl)
		return c
	case int:
		a, _ := v.([]any)
		c := slices.Clone(a)
		if k < len(c) {
			c[k] = replaceAt(c[k], steps[1:], repl)
		}
		return c
	}
	return v
}

// jsonText is v as JSON, without escaping <, > and &.
func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// num writes a number of a validator message as a person would: the
// validator prints instances as rationals ("1000/1") and bounds with %f
// ("120.000000").
func num(s string) string {
	if r, ok := new(big.Rat).SetString(s); ok {
		f, _ := r.Float64()
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return s
}

// count is "1 item", "2 items": n of noun, n a number as text.
func count(n, noun string) string {
	if n == "1" {
		return n + " " + noun
	}
	if strings.HasSuffix(noun, "y") {
		return n + " " + strings.TrimSuffix(noun, "y") + "ies"
	}
	return n + " " + noun + "s"
}
