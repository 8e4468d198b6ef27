package frontmatter

import (
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	var meta struct {
		Description  string   `yaml:"description"`
		AllowedTools []string `yaml:"allowed-tools"`
	}
	src := "---\ndescription: Review a PR\nallowed-tools: [Read, Grep]\n---\nReview $1.\n"
	body, line, err := Decode("pr.md", []byte(src), &meta)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Description != "Review a PR" || len(meta.AllowedTools) != 2 || string(body) != "Review $1.\n" || line != 5 {
		t.Fatalf("meta %+v body %q line %d", meta, body, line)
	}
	// No header: the whole file is the body.
	body, line, err = Decode("plain.md", []byte("just text\n---\n"), &meta)
	if err != nil || string(body) != "just text\n---\n" || line != 1 {
		t.Fatalf("%q %d %v", body, line, err)
	}
}

func TestDecodeErrorsNameTheLine(t *testing.T) {
	var meta struct {
		Name string `yaml:"name"`
	}
	src := "---\nname: ok\ndescription: [unclosed\n---\nbody\n"
	_, _, err := Decode("/s/SKILL.md", []byte(src), &meta)
	if err == nil || !strings.HasPrefix(err.Error(), "/s/SKILL.md:") || !strings.Contains(err.Error(), "not valid YAML") {
		t.Fatalf("err = %v", err)
	}
	var fe *Error
	if e, ok := err.(*Error); ok {
		fe = e
	}
	if fe == nil || fe.Line < 2 || fe.Line > 4 {
		t.Fatalf("want a line inside the header (2-4), got %#v", err)
	}
}
