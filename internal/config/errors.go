package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// Error is one problem in a configuration file. Several are combined with
// errors.Join; use errors.As to get at the first, or unwrap the join to
// list them all.
type Error struct {
	File string // the file, as given or found
	Line int    // 1-based; 0 if the problem is not on one line
	Msg  string // what is wrong
	Hint string // what to do about it; may be empty

	kind string // the format of its message, for collapse; "" if none
}

// Error returns "file:line: msg (hint)".
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Hint != "" {
		b.WriteString(" (")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return b.String()
}

// errList collects configuration errors.
type errList []error

func (l *errList) add(file string, line int, hint, format string, args ...any) {
	*l = append(*l, &Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...), Hint: hint, kind: format})
}

// collapse keeps the first problem of each kind in each file and folds the
// others of that kind into it ("…; 17,999 more like it on lines 2, 3, …"):
// a generated file with thousands of unknown keys is one problem to the
// person reading, not thousands of lines (a 248 KB file printed 18,000
// warnings).
func (l errList) collapse() errList {
	type group struct {
		first *Error
		lines []int
	}
	groups := map[[2]string]*group{}
	var out errList
	for _, err := range l {
		e, ok := err.(*Error)
		if !ok || e.kind == "" {
			out = append(out, err)
			continue
		}
		k := [2]string{e.File, e.kind}
		if g := groups[k]; g != nil {
			g.lines = append(g.lines, e.Line)
			continue
		}
		groups[k] = &group{first: e}
		out = append(out, e)
	}
	for _, g := range groups {
		if len(g.lines) == 0 {
			continue
		}
		const shown = 5
		var ls []string
		for _, n := range g.lines[:min(len(g.lines), shown)] {
			ls = append(ls, fmt.Sprint(n))
		}
		if len(g.lines) > shown {
			ls = append(ls, "…")
		}
		g.first.Msg += fmt.Sprintf("; %d more like it on lines %s", len(g.lines), strings.Join(ls, ", "))
	}
	return out
}

// tomlName returns the TOML key of a struct field, or "" if it has none.
func tomlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if name == "-" || !f.IsExported() {
		return ""
	}
	if name == "" {
		return f.Name
	}
	return name
}

// durationType is the duration struct (see isValueType).
var durationType = reflect.TypeFor[Duration]()

// isValueType reports whether t (or what it points to) is a struct that
// holds one TOML value rather than a table — a duration, a sandbox's
// network (true, false or a list) — which the reflection helpers copy
// whole instead of descending into.
func isValueType(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t == durationType || t == reflect.TypeFor[SandboxNetwork]()
}

// knownKeys lists the keys the table at path accepts, following Config's
// struct tags through maps (any key) and arrays of tables.
func knownKeys(path toml.Key) []string {
	t := reflect.TypeFor[Config]()
	for _, part := range path {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Map:
			t = t.Elem()
		case reflect.Struct:
			found := false
			for i := range t.NumField() {
				if f := t.Field(i); tomlName(f) == part {
					t, found = f.Type, true
					break
				}
			}
			if !found {
				return nil
			}
		default:
			return nil
		}
	}
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || isValueType(t) {
		return nil
	}
	var keys []string
	for i := range t.NumField() {
		if n := tomlName(t.Field(i)); n != "" {
			keys = append(keys, n)
		}
	}
	return keys
}

// suggest returns the candidate closest to s, or "" if none is close.
func suggest(s string, candidates []string) string {
	norm := func(x string) string { return strings.ReplaceAll(strings.ToLower(x), "-", "_") }
	best, bestD := "", len(s)/3+2
	for _, c := range candidates {
		if norm(c) == norm(s) {
			return c
		}
		if d := editDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// unknownKeyHint says what to do about an unknown key.
func unknownKeyHint(key string, known []string) string {
	if s := suggest(key, known); s != "" {
		return fmt.Sprintf("did you mean %q?", s)
	}
	if len(known) == 0 {
		return "remove it"
	}
	known = slices.Clone(known)
	slices.Sort(known)
	return "remove it; known keys here: " + strings.Join(known, ", ")
}
