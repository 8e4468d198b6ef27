package markdown

import (
	"embed"
	"io/fs"
	"strings"
	"sync"

	"charm.land/lipgloss/v2"
	"github.com/alecthomas/chroma/v2"
)

// Code is highlighted with chroma's lexers, but not chroma's lexers
// package: importing it builds all of its 250 lexers at start-up (33 ms
// of every otter command). lexers/ holds the definitions of the
// languages answers show most, copied from chroma's lexers/embedded
// (lexers/COPYING is chroma's licence; go.xml is chroma's Go lexer,
// written out with chroma.Marshal, its raw strings plain strings rather
// than Go templates). They are read the first time a code block names a
// language, and a lexer compiles its rules the first time it is used.
//
//go:embed lexers/*.xml
var lexerFiles embed.FS

var lexers = sync.OnceValue(func() *chroma.LexerRegistry {
	reg := chroma.NewLexerRegistry()
	paths, _ := fs.Glob(lexerFiles, "lexers/*.xml")
	for _, p := range paths {
		// Each file is tested (TestEveryLexerLoads); one that would not
		// load is left out rather than failing the answer.
		if l, err := chroma.NewXMLLexer(lexerFiles, p); err == nil {
			reg.Register(l)
		}
	}
	return reg
})

// lexerFor returns the lexer of a code block's language (its name, an
// alias, or a file extension: "go", "sh", "py"), or nil.
func lexerFor(lang string) chroma.Lexer {
	lang = strings.ToLower(strings.TrimSpace(lang))
	if lang == "" {
		return nil
	}
	return lexers().Get(lang)
}

// highlight splits code into lines of styled pieces, highlighted when
// lang names a known language.
func highlight(lang, code string, th *theme) [][]piece {
	code = strings.TrimRight(strings.ReplaceAll(code, "\t", "    "), "\n")
	plain := func() [][]piece {
		var out [][]piece
		for _, l := range strings.Split(code, "\n") {
			if l == "" {
				out = append(out, nil)
			} else {
				out = append(out, []piece{{l, &th.codeBlock}})
			}
		}
		return out
	}
	lx := lexerFor(lang)
	if lx == nil {
		return plain()
	}
	it, err := chroma.Coalesce(lx).Tokenise(nil, code)
	if err != nil {
		return plain()
	}
	styles := tokenStyles(th.dark)
	out := [][]piece{nil}
	for tok := it(); tok != chroma.EOF; tok = it() {
		st := styles.of(tok.Type)
		for i, part := range strings.Split(tok.Value, "\n") {
			if i > 0 {
				out = append(out, nil)
			}
			if part != "" {
				last := &out[len(out)-1]
				*last = append(*last, piece{part, st})
			}
		}
	}
	// A lexer may end the text with a newline of its own.
	if n := strings.Count(code, "\n") + 1; len(out) > n {
		out = out[:n]
	}
	return out
}

// tokenPalette is the style of each kind of token; a kind not listed
// takes its category's (a LiteralStringDouble a LiteralString's).
type tokenPalette map[chroma.TokenType]*lipgloss.Style

func (p tokenPalette) of(t chroma.TokenType) *lipgloss.Style {
	for _, k := range [...]chroma.TokenType{t, t.SubCategory(), t.Category()} {
		if s, ok := p[k]; ok {
			return s
		}
	}
	return p[chroma.Text]
}

var tokenStyles = func() func(dark bool) tokenPalette {
	light := sync.OnceValue(func() tokenPalette { return newPalette(false) })
	dark := sync.OnceValue(func() tokenPalette { return newPalette(true) })
	return func(d bool) tokenPalette {
		if d {
			return dark()
		}
		return light()
	}
}()

// newPalette returns the colours glamour's standard styles gave code.
func newPalette(dark bool) tokenPalette {
	type spec struct{ light, dark string }
	colours := map[chroma.TokenType]spec{
		chroma.Text:                {"#2A2A2A", "#C4C4C4"},
		chroma.Comment:             {"#8D8D8D", "#676767"},
		chroma.CommentPreproc:      {"#FF875F", "#FF875F"},
		chroma.Keyword:             {"#279EFC", "#00AAFF"},
		chroma.KeywordReserved:     {"#FF5FD2", "#FF5FD2"},
		chroma.KeywordNamespace:    {"#FB406F", "#FF5F87"},
		chroma.KeywordType:         {"#7049C2", "#6E6ED8"},
		chroma.Operator:            {"#FF2626", "#EF8080"},
		chroma.Punctuation:         {"#FA7878", "#E8E8A8"},
		chroma.Name:                {"#2A2A2A", "#C4C4C4"},
		chroma.NameBuiltin:         {"#0A1BB1", "#FF8EC7"},
		chroma.NameTag:             {"#581290", "#B083EA"},
		chroma.NameAttribute:       {"#8362CB", "#7A7AE6"},
		chroma.NameClass:           {"#212121", "#F1F1F1"},
		chroma.NameDecorator:       {"#A3A322", "#FFFF87"},
		chroma.NameFunction:        {"#019F57", "#00D787"},
		chroma.LiteralNumber:       {"#22CCAE", "#6EEFC0"},
		chroma.LiteralString:       {"#7E5B38", "#C69669"},
		chroma.LiteralStringEscape: {"#00AEAE", "#AFFFD7"},
		chroma.GenericDeleted:      {"#FD5B5B", "#FD5B5B"},
		chroma.GenericInserted:     {"#00D787", "#00D787"},
		chroma.GenericSubheading:   {"#777777", "#777777"},
	}
	p := tokenPalette{}
	for t, c := range colours {
		col := c.light
		if dark {
			col = c.dark
		}
		s := lipgloss.NewStyle().Foreground(lipgloss.Color(col))
		if t == chroma.NameClass {
			s = s.Bold(true).Underline(true)
		}
		p[t] = &s
	}
	errStyle := lipgloss.NewStyle().Foreground(lipgloss.Color("#F1F1F1")).Background(lipgloss.Color("#F05B5B"))
	emph, strong := lipgloss.NewStyle().Italic(true), lipgloss.NewStyle().Bold(true)
	p[chroma.Error], p[chroma.GenericEmph], p[chroma.GenericStrong] = &errStyle, &emph, &strong
	return p
}
