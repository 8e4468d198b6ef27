package schema_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/otter-sh/otter/internal/schema"
)

// A form reads what a person types with Field.Parse; a tool call's
// arguments are checked with Object.Check. Both word a problem the same.
func Example() {
	o, err := schema.Parse(json.RawMessage(`{"type":"object","properties":{
		"count":{"type":"integer","minimum":1},
		"zone":{"type":"string","enum":["eu","us"],"enumNames":["Europe","United States"]}},
		"required":["count"]}`))
	if err != nil {
		panic(err)
	}
	count, zone := o.Fields[0], o.Fields[1]
	for _, answer := range []struct {
		f    schema.Field
		text string
	}{{count, "3"}, {count, "0"}, {count, ""}, {zone, "europe"}, {zone, "2"}, {zone, "fr"}} {
		v, err := answer.f.Parse(answer.text)
		var fe *schema.FieldError
		if errors.As(err, &fe) {
			fmt.Printf("%s %q: %s\n", fe.Field, answer.text, fe.Problem)
			continue
		}
		fmt.Printf("%s %q: %v\n", answer.f.Name, answer.text, v)
	}
	fmt.Println(o.Check(map[string]any{"count": 0.0, "zone": "fr"}))
	// Output:
	// count "3": 3
	// count "0": must be at least 1, got 0
	// count "": required
	// zone "europe": eu
	// zone "2": us
	// zone "fr": must be one of Europe (eu), United States (us), got "fr"
	// count: must be at least 1, got 0; zone: must be one of Europe (eu), United States (us), got "fr"
}
