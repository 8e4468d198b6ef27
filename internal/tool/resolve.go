package tool

import (
	"fmt"
	"strings"
)

// AmbiguousError is Resolve's error for a server's own tool name that more
// than one server offers: the person has to pick one of Candidates (the
// qualified names).
type AmbiguousError struct {
	Name       string
	Candidates []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%s is ambiguous: %d servers offer it (%s)", e.Name, len(e.Candidates), strings.Join(e.Candidates, ", "))
}

// Resolve finds the tool a person names among entries: by its qualified
// name, or by a server's own name for it when exactly one server offers a
// tool of that name. Every front end that lets a person call a tool by
// hand resolves names here, so that a name one accepts the others accept.
// It returns an *AmbiguousError when several servers offer the name, and an
// error wrapping ErrUnknownTool when none does.
func Resolve(entries []Entry, name string) (Entry, error) {
	var found []Entry
	for _, e := range entries {
		if e.Name == name {
			return e, nil
		}
		if e.Info.Server != "" && e.Info.Name == name {
			found = append(found, e)
		}
	}
	switch len(found) {
	case 0:
		return Entry{}, fmt.Errorf("%w %q", ErrUnknownTool, name)
	case 1:
		return found[0], nil
	}
	amb := &AmbiguousError{Name: name}
	for _, e := range found {
		amb.Candidates = append(amb.Candidates, e.Name)
	}
	return Entry{}, amb
}
