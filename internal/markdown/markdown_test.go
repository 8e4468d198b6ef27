package markdown

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/charmbracelet/x/ansi"
)

// screen is what a person reads: the rendered text without its colours,
// lines without trailing spaces.
func screen(s string) string {
	lines := strings.Split(ansi.Strip(s), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

func TestRenderWhatAPersonSees(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		width   int
		want    []string // lines that appear, in order
		wantNot []string // text that must not appear anywhere
	}{
		{
			name:    "headings show as text, not as the marks that wrote them",
			src:     "# Title\n\n## Section\n\n### Sub\n\n###### Small\n\ntext",
			want:    []string{"   Title", "  Section", "  Sub", "  Small", "  text"},
			wantNot: []string{"#"},
		},
		{
			name:  "paragraphs wrap at spaces to the width",
			src:   "The quick brown fox jumps over the lazy dog and runs far away.",
			width: 24,
			want:  []string{"  The quick brown fox", "  jumps over the lazy", "  dog and runs far away."},
		},
		{
			name:  "a hyphenated name is never split",
			src:   "install mcp-server-filesystem now",
			width: 24,
			want:  []string{"  install", "  mcp-server-filesystem", "  now"},
		},
		{
			name: "bullets, nested under their item's text",
			src:  "- one\n- two\n  - two a\n  - two b\n- three",
			want: []string{"  • one", "  • two", "    • two a", "    • two b", "  • three"},
		},
		{
			name: "numbered lists keep their numbers and align them",
			src:  "8. eight\n9. nine\n10. ten\n    1. ten one",
			want: []string{"   8. eight", "   9. nine", "  10. ten", "      1. ten one"},
		},
		{
			name:  "a long item wraps under its text, not under its bullet",
			src:   "- alpha beta gamma delta epsilon",
			width: 18,
			want:  []string{"  • alpha beta", "    gamma delta", "    epsilon"},
		},
		{
			name: "task lists",
			src:  "- [x] done\n- [ ] to do",
			want: []string{"  • [✓] done", "  • [ ] to do"},
		},
		{
			name: "a table has rules between columns and under its header",
			src:  "| Name | Size |\n|------|-----:|\n| a.go | 10 |\n| b.go | 200 |",
			want: []string{"   Name │ Size", "  ──────┼──────", "   a.go │   10", "   b.go │  200"},
		},
		{
			name:    "a code block sits under its language's name, as written",
			src:     "Run:\n\n```go\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n```\n",
			want:    []string{"  Run:", "  go", "    func main() {", "        fmt.Println(\"hi\")", "    }"},
			wantNot: []string{"```"},
		},
		{
			name: "a code block in an unknown language shows plain, under its name",
			src:  "```klingon\nQapla'\n```",
			want: []string{"  klingon", "    Qapla'"},
		},
		{
			name:    "emphasis, strong, strikethrough and inline code lose their marks",
			src:     "an *important* and **bold** and ~~old~~ `go test` word",
			want:    []string{"  an important and bold and old  go test  word"},
			wantNot: []string{"*", "~", "`"},
		},
		{
			name: "links show their text and their address",
			src:  "see [the docs](https://example.com/docs) and https://otter.sh",
			want: []string{"  see the docs https://example.com/docs and https://otter.sh"},
		},
		{
			name: "a link whose text is its address shows it once",
			src:  "[https://otter.sh](https://otter.sh)",
			want: []string{"  https://otter.sh"},
		},
		{
			name:  "a long URL breaks after a slash",
			src:   "https://example.com/a/very/long/path/to/somewhere/file.md",
			width: 30,
			want:  []string{"  https://example.com/a/very/", "  long/path/to/somewhere/", "  file.md"},
		},
		{
			name:    "block quotes stand behind a bar",
			src:     "> quoted words\n>\n> more",
			want:    []string{"  │ quoted words", "  │", "  │ more"},
			wantNot: []string{">"},
		},
		{
			name: "a hard line break starts a new line",
			src:  "first\\\nsecond",
			want: []string{"  first", "  second"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.width
			if w == 0 {
				w = 80
			}
			for _, dark := range []bool{false, true} {
				out := Render(tc.src, Options{Width: w, Dark: dark})
				got := screen(out)
				lines := strings.Split(got, "\n")
				at := 0
				for _, want := range tc.want {
					found := false
					for at < len(lines) {
						at++
						if lines[at-1] == want {
							found = true
							break
						}
					}
					if !found {
						t.Fatalf("dark=%v: line %q missing (or out of order) in:\n%s", dark, want, got)
					}
				}
				for _, bad := range tc.wantNot {
					if strings.Contains(got, bad) {
						t.Errorf("dark=%v: %q shows in:\n%s", dark, bad, got)
					}
				}
				for _, l := range strings.Split(out, "\n") {
					if ansi.StringWidth(l) > w {
						t.Errorf("dark=%v: line wider than %d: %q", dark, w, ansi.Strip(l))
					}
				}
			}
		})
	}
}

func TestRenderNoBlankEdges(t *testing.T) {
	out := screen(Render("\n\npara one\n\npara two\n\n", Options{Width: 40}))
	if out != "  para one\n\n  para two" {
		t.Fatalf("got %q", out)
	}
	if Render("  \n", Options{Width: 40}) != "" {
		t.Fatal("blank text should render as nothing")
	}
}

// A wide table is fitted to the width, its cells wrapped.
func TestRenderWideTableFits(t *testing.T) {
	src := "| Column | Description |\n|---|---|\n| x | " + strings.Repeat("a long description ", 8) + "|"
	out := Render(src, Options{Width: 50})
	for _, l := range strings.Split(out, "\n") {
		if w := ansi.StringWidth(l); w > 50 {
			t.Errorf("line %d wide: %q", w, ansi.Strip(l))
		}
	}
	if !strings.Contains(screen(out), "│") || !strings.Contains(screen(out), "description") {
		t.Fatalf("table lost:\n%s", screen(out))
	}
}

// Highlighting colours Go's keywords apart from its names; text in a
// language with no lexer is one colour.
func TestCodeIsHighlighted(t *testing.T) {
	out := Render("```go\npackage main\n```", Options{Width: 80, Dark: true})
	line := strings.Split(out, "\n")[1]
	kw := tokenStyles(true).of(chroma.KeywordNamespace).Render("package")
	if !strings.Contains(line, kw) {
		t.Fatalf("package is not styled as a keyword: %q", line)
	}
	for _, lang := range []string{"python", "py", "sh", "bash", "json", "yaml", "ts", "rust", "diff", "dockerfile", "c++", "cpp"} {
		if lexerFor(lang) == nil {
			t.Errorf("no lexer for %q", lang)
		}
	}
	if lexerFor("klingon") != nil {
		t.Error("a lexer for an unknown language")
	}
}

// Every embedded lexer definition loads, and lexes text back whole.
func TestEveryLexerLoads(t *testing.T) {
	paths, err := fs.Glob(lexerFiles, "lexers/*.xml")
	if err != nil || len(paths) < 30 {
		t.Fatalf("%d lexers (%v)", len(paths), err)
	}
	for _, p := range paths {
		if _, err := chroma.NewXMLLexer(lexerFiles, p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	for _, l := range lexers().Lexers {
		p := l.Config().Name
		it, err := l.Tokenise(nil, "x = 1 # a \"comment\"\n")
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		var text strings.Builder
		for tok := it(); tok != chroma.EOF; tok = it() {
			text.WriteString(tok.Value)
		}
		if !strings.HasPrefix(text.String(), "x = 1") {
			t.Errorf("%s: lexed into %q", p, text.String())
		}
	}
	if got := len(lexers().Lexers); got != len(paths) {
		t.Errorf("registry holds %d lexers of %d files", got, len(paths))
	}
}

func TestCodeBlocks(t *testing.T) {
	got := CodeBlocks("text\n\n```go\nfmt.Println()\n```\n\n    indented\n\n```\nplain\n```")
	want := []string{"fmt.Println()\n", "indented\n", "plain\n"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
}
