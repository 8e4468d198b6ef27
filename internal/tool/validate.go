package tool

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/otter-sh/otter/internal/schema"
)

// ArgumentsError says why arguments do not match a tool's input schema:
// the Set did not call the tool. Set.CheckArguments returns it; Set.Call
// answers such arguments with a tool error a model can act on instead.
type ArgumentsError struct {
	Tool string // the qualified name
	// Problems are what is wrong, one per argument where the schema allows
	// telling them apart, each "path: what" as internal/schema words it,
	// e.g. "a: want number, got string", "b: missing", "opts.depth: must
	// be at most 2.5, got 3.75".
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

// inputSchema reads a tool's input schema for checking its arguments;
// nil when there is none or it cannot check them (then the server checks
// them alone: a schema otter cannot read must not keep a tool from being
// called).
func inputSchema(name string, raw json.RawMessage) *schema.Object {
	if len(raw) == 0 {
		return nil
	}
	o, err := schema.Parse(raw)
	if err == nil {
		err = o.Checkable()
	}
	if err != nil {
		slog.Debug("tool input schema cannot be used; arguments are not validated", "tool", name, "err", err)
		return nil
	}
	return o
}

// problems checks args, a JSON object, against the tool's input schema
// and returns what is wrong, or nil.
func problems(o *schema.Object, args map[string]any) []string {
	if o == nil {
		return nil
	}
	var ps schema.Problems
	if errors.As(o.Check(args), &ps) {
		return ps.Strings()
	}
	return nil
}
