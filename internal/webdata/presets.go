package webdata

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/otter-sh/otter/assets"
)

// Preset is a named set of fields for scrape_page, shipped in
// assets/presets/*.json.
type Preset struct {
	Name        string               `json:"name"`
	Description string               `json:"description"`
	Selectors   map[string]FieldSpec `json:"selectors"`
}

// Field says how to extract one value: the text of the first element
// matching Selector, its attribute Attr, its inner HTML (HTML), or, with
// All, the same for every match (a list). Relative href and src values are
// resolved against the page's URL.
type Field struct {
	Selector string `json:"selector"`
	Attr     string `json:"attr,omitempty"`
	All      bool   `json:"all,omitempty"`
	HTML     bool   `json:"html,omitempty"`
}

// FieldSpec is one output field: one or more Fields tried in order, the
// first that yields a value wins. In JSON it is a string ("h1.title", or
// "a.next@href" for an attribute), an object {"selector", "attr", "all",
// "html"}, or an array of those (fallbacks).
type FieldSpec []Field

// UnmarshalJSON accepts the three JSON forms of a FieldSpec.
func (fs *FieldSpec) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		var raws []json.RawMessage
		if err := json.Unmarshal(data, &raws); err != nil {
			return err
		}
		if len(raws) == 0 {
			return fmt.Errorf("an empty list of selectors")
		}
		out := make(FieldSpec, 0, len(raws))
		for _, r := range raws {
			f, err := parseField(r)
			if err != nil {
				return err
			}
			out = append(out, f)
		}
		*fs = out
		return nil
	}
	f, err := parseField(data)
	if err != nil {
		return err
	}
	*fs = FieldSpec{f}
	return nil
}

// MarshalJSON writes one Field as an object and several as an array.
func (fs FieldSpec) MarshalJSON() ([]byte, error) {
	if len(fs) == 1 {
		return json.Marshal(fs[0])
	}
	return json.Marshal([]Field(fs))
}

func parseField(data []byte) (Field, error) {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		return ParseField(s), nil
	}
	type plain Field
	var f plain
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return Field{}, fmt.Errorf("a field is a selector string or an object {selector, attr, all, html}: %w", err)
	}
	if f.Selector == "" {
		return Field{}, fmt.Errorf("a field object needs a selector")
	}
	return Field(f), nil
}

// ParseField reads the string form of a field: a CSS selector, optionally
// followed by @attribute ("a.next@href"). An @ inside the selector
// ([data-x="a@b"]) is left alone.
func ParseField(s string) Field {
	if i := lastAttrAt(s); i > 0 {
		return Field{Selector: s[:i], Attr: s[i+1:]}
	}
	return Field{Selector: s}
}

// lastAttrAt returns the index of a trailing "@name", or -1.
func lastAttrAt(s string) int {
	i := strings.LastIndexByte(s, '@')
	if i <= 0 || i == len(s)-1 {
		return -1
	}
	for j, c := range s[i+1:] {
		ok := c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' ||
			j > 0 && (c == '-' || c == '.' || c >= '0' && c <= '9')
		if !ok {
			return -1
		}
	}
	return i
}

// Presets returns the shipped presets, sorted by name.
func Presets() []Preset {
	m, err := loadPresets()
	if err != nil {
		panic(err) // the embedded files are tested
	}
	out := make([]Preset, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func loadPresets() (map[string]Preset, error) {
	files, err := fs.Glob(assets.Presets, "presets/*.json")
	if err != nil {
		return nil, err
	}
	out := make(map[string]Preset, len(files))
	for _, name := range files {
		data, err := fs.ReadFile(assets.Presets, name)
		if err != nil {
			return nil, err
		}
		var p Preset
		if err := json.Unmarshal(data, &p); err != nil {
			return nil, fmt.Errorf("assets/%s: %w", name, err)
		}
		if p.Name == "" || len(p.Selectors) == 0 {
			return nil, fmt.Errorf("assets/%s: a preset needs a name and selectors", name)
		}
		if _, dup := out[p.Name]; dup {
			return nil, fmt.Errorf("assets/%s: a second preset named %q", name, p.Name)
		}
		out[p.Name] = p
	}
	return out, nil
}
