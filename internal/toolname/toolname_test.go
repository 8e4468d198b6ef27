package toolname

import (
	"regexp"
	"strings"
	"testing"
)

func TestQualified(t *testing.T) {
	t.Parallel()
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	cases := []struct{ server, tool, want string }{
		{"everything", "get-sum", "mcp__everything__get-sum"},
		{"my server", "do.thing/now", "mcp__my_server__do_thing_now"},
		{"ünï", "çødé", "mcp___n_____d_"}, // every non-ASCII rune becomes one '_'
	}
	for _, c := range cases {
		got := Qualified(c.server, c.tool)
		if got != c.want {
			t.Errorf("Qualified(%q, %q) = %q, want %q", c.server, c.tool, got, c.want)
		}
		if !valid.MatchString(got) {
			t.Errorf("Qualified(%q, %q) = %q: not a valid tool name", c.server, c.tool, got)
		}
	}
	long := strings.Repeat("x", 80)
	a, b := Qualified("srv", long+"a"), Qualified("srv", long+"b")
	if len(a) > MaxLen || len(b) > MaxLen {
		t.Fatalf("long names not cut to %d: %d, %d", MaxLen, len(a), len(b))
	}
	if a == b {
		t.Fatalf("two long names that differ only at the end got the same qualified name %q", a)
	}
	if again := Qualified("srv", long+"a"); again != a {
		t.Fatalf("qualified name not stable: %q then %q", a, again)
	}
}
