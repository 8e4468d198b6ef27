package schema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// profile lists its properties in an order that is neither alphabetical
// nor the order of "required", with every kind of choice a server sends.
const profile = `{"type":"object","properties":{
	"name":{"type":"string","title":"Full name","minLength":2,"maxLength":40},
	"email":{"type":"string","format":"email"},
	"age":{"type":["integer","null"],"minimum":0,"maximum":150,"default":30},
	"color":{"type":"string","enum":["r","g"],"enumNames":["Red","Green"],"default":"g"},
	"hero":{"type":"string","oneOf":[{"const":"h1","title":"Superman"},{"const":"h2","title":"Wonder Woman"}]},
	"size":{"anyOf":[{"const":1,"title":"Small"},{"const":2}]},
	"tags":{"type":"array","items":{"type":"string","enum":["x","y"]},"minItems":1},
	"address":{"type":"object","properties":{"zip":{"type":"string"},"city":{"type":"string"}},"required":["city"]}
	},"required":["email","age"]}`

func TestParseKeepsTheServersOrder(t *testing.T) {
	t.Parallel()
	o, err := Parse(json.RawMessage(profile))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := o.Names(), []string{"name", "email", "age", "color", "hero", "size", "tags", "address"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	var first []string
	for _, f := range o.RequiredFirst() {
		first = append(first, f.Name)
	}
	if want := []string{"email", "age", "name", "color", "hero", "size", "tags", "address"}; !reflect.DeepEqual(first, want) {
		t.Errorf("RequiredFirst() = %v, want %v", first, want)
	}
	addr := o.Fields[7]
	var nested []string
	for _, f := range addr.Fields {
		nested = append(nested, fmt.Sprintf("%s required=%v", f.Name, f.Required))
	}
	if want := []string{"zip required=false", "city required=true"}; !reflect.DeepEqual(nested, want) {
		t.Errorf("address's fields = %v, want %v", nested, want)
	}
}

func TestParseReadsEachField(t *testing.T) {
	t.Parallel()
	o, err := Parse(json.RawMessage(profile))
	if err != nil {
		t.Fatal(err)
	}
	describe := func(f Field) string {
		var cs []string
		for _, c := range f.Choices {
			cs = append(cs, c.String()+"="+c.Label())
		}
		return fmt.Sprintf("%s label=%q type=%q required=%v default=%v choices=[%s]",
			f.Name, f.Label(), f.Type, f.Required, f.Default, strings.Join(cs, " "))
	}
	want := []string{
		`name label="Full name" type="string" required=false default=<nil> choices=[]`,
		`email label="email" type="string" required=true default=<nil> choices=[]`,
		`age label="age" type="integer" required=true default=30 choices=[]`,
		`color label="color" type="string" required=false default=g choices=[r=Red g=Green]`,
		`hero label="hero" type="string" required=false default=<nil> choices=[h1=Superman h2=Wonder Woman]`,
		`size label="size" type="" required=false default=<nil> choices=[1=Small 2=2]`,
		`tags label="tags" type="array" required=false default=<nil> choices=[]`,
		`address label="address" type="object" required=false default=<nil> choices=[]`,
	}
	for i, f := range o.Fields {
		if got := describe(f); got != want[i] {
			t.Errorf("field %d:\n got %s\nwant %s", i, got, want[i])
		}
	}
	// Bounds are the property's own schema's.
	if n := o.Fields[0].Schema; n.MinLength == nil || *n.MinLength != 2 || n.MaxLength == nil || *n.MaxLength != 40 {
		t.Errorf("name's length bounds are lost: %+v", n)
	}
	if a := o.Fields[2].Schema; a.Minimum == nil || *a.Minimum != 0 || a.Maximum == nil || *a.Maximum != 150 {
		t.Errorf("age's bounds are lost: %+v", a)
	}
	if tags := o.Fields[6]; tags.Items == nil || tags.Items.Type != "string" || len(tags.Items.Choices) != 2 || tags.Schema.MinItems == nil {
		t.Errorf("tags' items or minItems are lost: %+v", tags)
	}
}

func TestParseEdgeCases(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw  string
		want []string
	}{
		{``, nil},
		{`{"type":"object"}`, nil},
		// A later duplicate replaces the earlier one, as when decoding.
		{`{"properties":{"b":{},"a":{},"b":{"type":"string"}}}`, []string{"b", "a"}},
		// "properties" written after other keywords, nested text skipped.
		{`{"required":["z"],"$defs":{"properties":{"q":{}}},"properties":{"z":{},"y":{}}}`, []string{"z", "y"}},
	} {
		o, err := Parse(json.RawMessage(tc.raw))
		if err != nil {
			t.Errorf("Parse(%s): %v", tc.raw, err)
			continue
		}
		if got := o.Names(); !slices.Equal(got, tc.want) {
			t.Errorf("Parse(%s).Names() = %v, want %v", tc.raw, got, tc.want)
		}
	}
	if _, err := Parse(json.RawMessage(`{"properties":`)); err == nil {
		t.Error("Parse of broken JSON: no error")
	}
	if _, err := Parse(json.RawMessage(`{"type":7}`)); err == nil {
		t.Error(`Parse of {"type":7}: no error`)
	}
}

func TestMembersFallBackToAlphabetical(t *testing.T) {
	t.Parallel()
	// fields is given no JSON text (a schema built in Go): the names come
	// out sorted rather than in map order.
	o, err := Parse(json.RawMessage(`{"properties":{"c":{},"a":{},"b":{}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := fields(nil, o.Schema)
	var names []string
	for _, f := range got {
		names = append(names, f.Name)
	}
	if want := []string{"a", "b", "c"}; !reflect.DeepEqual(names, want) {
		t.Errorf("fields without text = %v, want %v", names, want)
	}
}

// A skeleton lists an object's properties in the server's order (not
// alphabetically), one item of an array, and each default or first
// choice, so the JSON editor reads like the tool's documentation.
func TestSkeletonKeepsTheServersOrder(t *testing.T) {
	o, err := Parse(json.RawMessage(`{"type":"object","properties":{"entities":{"type":"array","items":{"type":"object",
		"properties":{"name":{"type":"string"},"entityType":{"type":"string","enum":["person","place"]},
		"observations":{"type":"array","items":{"type":"string"}},"weight":{"type":"number","default":1.5},
		"meta":{"type":"object"},"ok":{"type":"boolean"},"any":{}}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := o.Fields[0].Skeleton()
	want := `[
  {
    "name": "",
    "entityType": "person",
    "observations": [
      ""
    ],
    "weight": 1.5,
    "meta": {},
    "ok": false,
    "any": null
  }
]`
	if got != want {
		t.Errorf("Skeleton() =\n%s\nwant\n%s", got, want)
	}
	var v any
	if err := json.Unmarshal([]byte(got), &v); err != nil {
		t.Errorf("the skeleton is not JSON: %v", err)
	}
}
