package markdown

import (
	"sync"

	"charm.land/lipgloss/v2"
)

// theme is the styles of one background. The colours are those otter
// showed with glamour's standard light and dark styles, so that an answer
// looks as it did.
type theme struct {
	heading, h1, h2, h6 lipgloss.Style
	code                lipgloss.Style // `inline code`
	codeBlock           lipgloss.Style // a code block's text, unhighlighted
	codeLabel           lipgloss.Style // the language over a code block
	linkText, linkURL   lipgloss.Style
	image               lipgloss.Style
	rule                lipgloss.Style // thematic breaks, the quote bar, table rules
	dark                bool
}

var themes = sync.OnceValue(func() [2]*theme {
	return [2]*theme{newTheme(false), newTheme(true)}
})

func themeFor(dark bool) *theme {
	if dark {
		return themes()[1]
	}
	return themes()[0]
}

func newTheme(dark bool) *theme {
	pick := func(light, darkc string) lipgloss.Style {
		if dark {
			return lipgloss.NewStyle().Foreground(lipgloss.Color(darkc))
		}
		return lipgloss.NewStyle().Foreground(lipgloss.Color(light))
	}
	t := &theme{dark: dark}
	t.heading = pick("27", "39").Bold(true)
	t.h1 = lipgloss.NewStyle().Foreground(lipgloss.Color("228")).Background(lipgloss.Color("63")).Bold(true)
	t.h2 = t.heading.Underline(true)
	t.h6 = pick("35", "35")
	t.code = pick("203", "203").Background(lipgloss.Color("254"))
	if dark {
		t.code = t.code.Background(lipgloss.Color("236"))
	}
	t.codeBlock = pick("242", "244")
	t.codeLabel = pick("242", "244").Italic(true)
	t.linkText = pick("29", "35").Bold(true)
	t.linkURL = pick("36", "30").Underline(true)
	t.image = pick("205", "212").Underline(true)
	t.rule = pick("249", "240")
	return t
}
