package termtext

import (
	"bytes"
	"strings"
	"testing"
)

// TestText: the sequences a terminal acts on go whole — OSC 52 (the
// clipboard), OSC 0 (the title), OSC 8 (a hidden link, its text kept),
// CSI, the 8-bit introducers — and so do BEL, backspace and the bidi
// overrides; a carriage return cannot write over a line; newlines, tabs
// and ordinary Unicode stay.
func TestText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"plain\ttext\nline 2", "plain\ttext\nline 2"},
		{"a\x1b]52;c;ZXZpbA==\x07b", "ab"},
		{"a\x1b]0;pwned title\x1b\\b", "ab"},
		{"\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\", "click"},
		{"red \x1b[31mRED\x1b[0m \x1b[2J\x1b[H", "red RED "},
		{"\u009b31mX\u009d0;t\u009cY", "XY"},
		{"ding\x07 back\bspace del\x7f", "ding backspace del"},
		{"safe\rEVIL", "safe\nEVIL"},
		{"crlf\r\nline", "crlf\nline"},
		{"abc\u202edcba\u202c", "abcdcba"},
		{"emoji 👩\u200d💻 ok, café, 日本", "emoji 👩\u200d💻 ok, café, 日本"},
		{"bad \xff\xfe byte", "bad \ufffd\ufffd byte"},
		{"unterminated \x1b]52;c;AAAA\nnext line", "unterminated \nnext line"},
		{"\x1b(Bcharset \x1b7saved", "charset saved"},
		{"esc then newline \x1b\nok", "esc then newline \nok"},
		{"\x1b[31\n", "\n"},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestVisibleAndLine: names and descriptions lose invisible characters
// too, and a line cannot hold a newline that would forge a row.
func TestVisibleAndLine(t *testing.T) {
	t.Parallel()
	in := "read\u200bfile\ufeff\U000e0041 a\tb\nfake  stdio  connected"
	if got, want := Visible(in), "readfile a\tb\nfake  stdio  connected"; got != want {
		t.Errorf("Visible = %q, want %q", got, want)
	}
	if got, want := Line(in), "readfile a b fake  stdio  connected"; got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
	for _, s := range []string{"a\nb", "a\x1bb", "a\u202eb", "a\u200bb", "a\u0085b", "a\xffb", "a\tb"} {
		if _, bad := Unsafe(s); !bad {
			t.Errorf("Unsafe(%q) found nothing", s)
		}
	}
	for _, s := range []string{"github", "my server", "日本語-é_1.2", "😀"} {
		if r, bad := Unsafe(s); bad {
			t.Errorf("Unsafe(%q) = %U", s, r)
		}
	}
}

// TestWriter: a Writer cleans each write, joins a character split across
// two, and never lets a control through when a sequence is split.
func TestWriter(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, p := range []string{"a\x1b]52;c;QQ==\x07b ", "\xe6", "\x97\xa5 ", "c\x1b", "]0;t\x07d\n"} {
		if n, err := w.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	got := buf.String()
	if want := "ab 日 c]0;td\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
	if strings.ContainsAny(got, "\x1b\x07") {
		t.Errorf("a control got through: %q", got)
	}
	if Raw(w) != &buf || Raw(&buf) != &buf {
		t.Error("Raw does not return the writer under a Writer, or another writer itself")
	}
}

// BenchmarkText: a tool result of 1 MiB, plain ASCII (the fast path) and
// with Unicode and an escape sequence every line.
func BenchmarkText(b *testing.B) {
	plainText := strings.Repeat("a line of a tool's result, plain ASCII\n", 1<<20/40)
	mixed := strings.Repeat("résumé 日本 \x1b[31mred\x1b[0m and a line\n", 1<<20/40)
	for _, bc := range []struct{ name, s string }{{"plain", plainText}, {"mixed", mixed}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.s)))
			for b.Loop() {
				Text(bc.s)
			}
		})
	}
}
