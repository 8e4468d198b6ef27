package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestWrapWords(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  []string
	}{
		// Hyphenated names stay whole: the line breaks at the space.
		{"run mcp-server-filesystem now", 21, []string{"run", "mcp-server-filesystem", "now"}},
		// A path wider than the line breaks after a slash, starting where
		// its first part fits.
		{"node /opt/tools/mcp-servers/filesystem/server.js", 19, []string{"node /opt/tools/", "mcp-servers/", "filesystem/", "server.js"}},
		// One name wider than the line is cut: nothing else can be done.
		{"a-very-long-name-without-slashes", 10, []string{"a-very-lon", "g-name-wit", "hout-slash", "es"}},
		{"/x/abcdefghijklmnop", 8, []string{"/x/", "abcdefgh", "ijklmnop"}},
		{"", 10, []string{""}},
		{"fits   as   is", 20, []string{"fits as is"}},
		// Wide runes are measured in cells.
		{"日本語 日本語", 7, []string{"日本語", "日本語"}},
	} {
		got := wrapWords(tc.in, tc.width)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("wrapWords(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
		for _, l := range got {
			if ansi.StringWidth(l) > tc.width {
				t.Errorf("wrapWords(%q, %d): %q is wider than %d", tc.in, tc.width, l, tc.width)
			}
		}
	}
}

func TestWrapItemHangs(t *testing.T) {
	got := wrapItem("fs: node /opt/tools/mcp-servers/filesystem/server.js --root /tmp", 2, 2, 30)
	want := []string{"  fs: node /opt/tools/", "    mcp-servers/filesystem/", "    server.js --root /tmp"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("wrapItem = %q, want %q", got, want)
	}
	if got := wrapItem("short: ./run", 2, 2, 30); len(got) != 1 || got[0] != "  short: ./run" {
		t.Errorf("an item that fits: %q", got)
	}
}

// cutMiddle keeps a URI's end, which tells it from its neighbours, and
// starts it at a "/" where it can.
func TestCutMiddle(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"everything:demo://resource/static/document/architecture.md", 56, "everything:demo://resou…/static/document/architecture.md"},
		{"short:demo://a.md", 56, "short:demo://a.md"},
		{"abcdefghijklmnopqrstuvwxyz", 12, "abc…stuvwxyz"},
		{"abcdefghij", 5, "abcd…"},
		{"docs:demo://日本語/日本語日本語日本語", 20, "docs:de…日本語日本語"}, // cells, not runes
	} {
		if got := cutMiddle(tc.in, tc.width); got != tc.want || ansi.StringWidth(got) > tc.width {
			t.Errorf("cutMiddle(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

func TestWrapKeys(t *testing.T) {
	got := wrapKeys("type to filter · ↑/↓ select · enter preview · tab attach · esc close", 56)
	if want := "type to filter · ↑/↓ select · enter preview · tab attach\nesc close"; got != want {
		t.Errorf("wrapKeys = %q, want %q", got, want)
	}
}
