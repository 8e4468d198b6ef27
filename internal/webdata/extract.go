package webdata

import (
	"bytes"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// parseHTML decodes body, in the charset its Content-Type or <meta> names,
// into a document.
func parseHTML(body []byte, contentType string) (*goquery.Document, error) {
	var r io.Reader = bytes.NewReader(body)
	if cr, err := charset.NewReader(r, contentType); err == nil {
		r = cr
	} else {
		r = bytes.NewReader(body)
	}
	return goquery.NewDocumentFromReader(r)
}

// baseURL is the page URL, or its <base href> resolved against it.
func baseURL(doc *goquery.Document, page *url.URL) *url.URL {
	if href, ok := doc.Find("base[href]").First().Attr("href"); ok {
		if b, err := page.Parse(strings.TrimSpace(href)); err == nil {
			return b
		}
	}
	return page
}

// extractFields extracts every field. A single-value field that matches
// nothing is null and reported as a PARSE_ERROR; an "all" field that
// matches nothing is an empty list.
func extractFields(doc *goquery.Document, base *url.URL, fields map[string]FieldSpec) (map[string]any, []ErrorInfo) {
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	data := make(map[string]any, len(fields))
	var errs []ErrorInfo
	for _, name := range names {
		spec := fields[name]
		v, err := extractField(doc, base, spec)
		if err != nil {
			e := newError(CodeParseError, fmt.Sprintf("field %q: %v", name, err), "fix the CSS selector")
			e.Field = name
			e.Recoverable = false
			errs = append(errs, e)
			data[name] = nil
			continue
		}
		if v == nil {
			e := newError(CodeParseError, fmt.Sprintf("field %q: no element matches %s", name, describeSpec(spec)),
				"check the selector against the page (the page may need render_js: true)")
			e.Field = name
			errs = append(errs, e)
		}
		data[name] = v
	}
	return data, errs
}

func describeSpec(spec FieldSpec) string {
	parts := make([]string, len(spec))
	for i, f := range spec {
		parts[i] = fmt.Sprintf("%q", f.Selector)
		if f.Attr != "" {
			parts[i] += " with attribute " + f.Attr
		}
	}
	return strings.Join(parts, ", or ")
}

// extractField returns a string, a []string (All), or nil when nothing
// matched.
func extractField(doc *goquery.Document, base *url.URL, spec FieldSpec) (any, error) {
	for _, f := range spec {
		m, err := cascadia.Compile(f.Selector)
		if err != nil {
			return nil, fmt.Errorf("invalid CSS selector %q: %w", f.Selector, err)
		}
		sel := doc.FindMatcher(m)
		if f.All {
			vals := []string{}
			sel.Each(func(_ int, s *goquery.Selection) {
				v, _ := fieldValue(s, f, base)
				vals = append(vals, v)
			})
			if len(vals) > 0 {
				return vals, nil
			}
			continue
		}
		var found *string
		sel.EachWithBreak(func(_ int, s *goquery.Selection) bool {
			if v, ok := fieldValue(s, f, base); ok && v != "" {
				found = &v
				return false
			}
			return true
		})
		if found != nil {
			return *found, nil
		}
	}
	if spec[len(spec)-1].All {
		return []string{}, nil // "all" and nothing matched: an empty list
	}
	return nil, nil
}

// fieldValue extracts f's value from the single element s.
func fieldValue(s *goquery.Selection, f Field, base *url.URL) (string, bool) {
	switch {
	case f.Attr != "":
		v, ok := s.Attr(f.Attr)
		if !ok {
			return "", false
		}
		v = strings.TrimSpace(v)
		if f.Attr == "href" || f.Attr == "src" {
			if u, err := base.Parse(v); err == nil && v != "" {
				v = u.String()
			}
		}
		return v, true
	case f.HTML:
		h, err := s.Html()
		return strings.TrimSpace(h), err == nil
	default:
		return nodeText(s.Get(0)), true
	}
}

// skipText are elements whose content is not visible text.
var skipText = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true, atom.Svg: true,
}

// blockText are elements that start a new line of text.
var blockText = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Li: true, atom.Ul: true, atom.Ol: true, atom.Tr: true,
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true,
	atom.Section: true, atom.Article: true, atom.Header: true, atom.Footer: true, atom.Nav: true,
	atom.Main: true, atom.Aside: true, atom.Blockquote: true, atom.Pre: true, atom.Table: true,
	atom.Dt: true, atom.Dd: true, atom.Figure: true, atom.Figcaption: true, atom.Form: true,
	atom.Title: true, atom.Td: true, atom.Th: true,
}

// nodeText is the visible text of n: scripts and styles left out, one line
// per block element, runs of white space collapsed. The text of a script
// or style element itself (say, JSON-LD) is returned as it is.
func nodeText(n *html.Node) string {
	if n == nil {
		return ""
	}
	if n.Type == html.ElementNode && skipText[n.DataAtom] {
		var b strings.Builder
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			}
		}
		return strings.TrimSpace(b.String())
	}
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
			return
		case html.CommentNode:
			return
		case html.ElementNode:
			if skipText[n.DataAtom] {
				return
			}
			if n.DataAtom == atom.Br {
				b.WriteByte('\n')
				return
			}
		}
		block := n.Type == html.ElementNode && blockText[n.DataAtom]
		if block {
			b.WriteByte('\n')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if block {
			b.WriteByte('\n')
		}
	}
	walk(n)
	lines := strings.Split(b.String(), "\n")
	out := lines[:0]
	for _, l := range lines {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
