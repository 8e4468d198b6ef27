// Package toolsearch ranks tools for a need described in words: a BM25F
// index over each tool's name split into words (snake_case, camelCase,
// kebab-case, dots and slashes), its title and description, its
// parameters' names and descriptions, and its server's name and
// instructions, with English stemming and a few synonyms a model uses for
// the words tools are named with ("add" finds "sum", "folder" finds
// "directory").
//
// An Index is built once from a list of Docs and is then read-only: build
// a new one when a server's tool list changes. It is a leaf package: it
// imports the standard library and the Snowball stemmer only, so that the
// agent (which offers the model a tool_search tool) and the CLI (`otter mcp
// tools --search`) rank with the same code.
package toolsearch

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// Param is one parameter of a tool's input schema.
type Param struct {
	Name        string
	Description string
}

// Doc is one tool as the index sees it.
type Doc struct {
	Tool        string // the tool's own name ("get-sum", "read_text_file")
	Title       string
	Description string
	Params      []Param
	Server      string // the server's configured name
	// ServerInstructions are the server's instructions (initialize result).
	ServerInstructions string
}

// Field weights: what a word is worth in each part of a tool (BM25F).
const (
	weightName         = 3.0
	weightTitle        = 2.0
	weightDescription  = 1.0
	weightParamName    = 0.7
	weightParamDesc    = 0.4
	weightServer       = 1.0
	weightInstructions = 0.2

	k1 = 1.2
	b  = 0.75
)

// Index is a read-only search index over Docs. Its zero value holds no
// tools.
type Index struct {
	n        int
	postings map[string][]posting
	norm     []float32 // per doc: k1 × (1 − b + b × len/avgLen)
}

type posting struct {
	doc int32
	tf  float32 // the weighted term frequency
}

// Hit is a ranked match: the index of its Doc in the slice given to Build,
// and its score (higher is better; only comparable within one search).
type Hit struct {
	Doc   int
	Score float64
}

// Build indexes docs; a Hit's Doc is an index into docs.
func Build(docs []Doc) *Index {
	ix := &Index{n: len(docs), postings: make(map[string][]posting), norm: make([]float32, len(docs))}
	lens := make([]float64, len(docs))
	total := 0.0
	tf := map[string]float64{}
	st := stems{}
	for i, d := range docs {
		clear(tf)
		add := func(text string, w float64) {
			for _, t := range st.terms(text) {
				tf[t] += w
				lens[i] += w
			}
		}
		add(d.Tool, weightName)
		add(d.Title, weightTitle)
		add(d.Description, weightDescription)
		for _, p := range d.Params {
			add(p.Name, weightParamName)
			add(p.Description, weightParamDesc)
		}
		add(d.Server, weightServer)
		// Instructions describe the whole server: each word counts once,
		// and they do not make a tool's own text look longer.
		seen := map[string]bool{}
		for _, t := range st.terms(d.ServerInstructions) {
			if !seen[t] {
				seen[t] = true
				tf[t] += weightInstructions
			}
		}
		total += lens[i]
		for t, f := range tf {
			ix.postings[t] = append(ix.postings[t], posting{doc: int32(i), tf: float32(f)})
		}
	}
	avg := 1.0
	if len(docs) > 0 && total > 0 {
		avg = total / float64(len(docs))
	}
	for i := range docs {
		ix.norm[i] = float32(k1 * (1 - b + b*lens[i]/avg))
	}
	return ix
}

// Len is the number of tools indexed.
func (ix *Index) Len() int {
	if ix == nil {
		return 0
	}
	return ix.n
}

// Search returns up to limit tools for query, best first; ties keep the
// order of the Docs given to Build. Tools that share no word with the query
// are not returned.
func (ix *Index) Search(query string, limit int) []Hit {
	if ix == nil || ix.n == 0 || limit <= 0 {
		return nil
	}
	// Each query word and its synonyms: a synonym is worth less than the word.
	type qterm struct {
		term   string
		weight float64
	}
	var qs []qterm
	seen := map[string]bool{}
	for _, w := range words(query) {
		t := stem(w)
		if t == "" {
			continue
		}
		if !seen[t] {
			seen[t] = true
			qs = append(qs, qterm{t, 1})
		}
		for _, syn := range synonyms()[t] {
			if !seen[syn] {
				seen[syn] = true
				qs = append(qs, qterm{syn, synonymWeight})
			}
		}
	}
	scores := make([]float32, ix.n)
	var touched []int32
	for _, q := range qs {
		ps := ix.postings[q.term]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := float32(q.weight * math.Log(1+(float64(ix.n)-df+0.5)/(df+0.5)))
		for _, p := range ps {
			if scores[p.doc] == 0 {
				touched = append(touched, p.doc)
			}
			scores[p.doc] += idf * p.tf * (k1 + 1) / (p.tf + ix.norm[p.doc])
		}
	}
	better := func(a, b Hit) int { return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Doc, b.Doc)) }
	if limit >= len(touched)/8 { // most of them: sort them all
		hits := make([]Hit, 0, len(touched))
		for _, d := range touched {
			hits = append(hits, Hit{Doc: int(d), Score: float64(scores[d])})
		}
		slices.SortFunc(hits, better)
		return hits[:min(limit, len(hits))]
	}
	// A few of many: keep the best limit in order as they come.
	hits := make([]Hit, 0, limit+1)
	for _, d := range touched {
		h := Hit{Doc: int(d), Score: float64(scores[d])}
		if len(hits) == limit && better(h, hits[limit-1]) >= 0 {
			continue
		}
		i, _ := slices.BinarySearchFunc(hits, h, better)
		hits = slices.Insert(hits, i, h)
		if len(hits) > limit {
			hits = hits[:limit]
		}
	}
	return hits
}

// Words splits s into lower-case words: at spaces and punctuation
// (snake_case, kebab-case, dots, slashes) and where camelCase or a digit
// run begins ("getHTTPStatus2" → get, http, status, 2).
func Words(s string) []string { return words(s) }

func words(s string) []string {
	var out []string
	rs := []rune(s)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, strings.ToLower(string(rs[start:end])))
		}
		start = -1
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start >= 0 {
			prev := rs[i-1]
			switch {
			case unicode.IsUpper(r) && unicode.IsLower(prev): // getSum
				flush(i)
			case unicode.IsUpper(r) && unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1]): // HTTPStatus
				flush(i)
			case unicode.IsDigit(r) != unicode.IsDigit(prev): // file2, 2fa
				flush(i)
			}
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(rs))
	return out
}

// stems remembers the stem of each word seen, so that building an index
// stems each distinct word once.
type stems map[string]string

// terms is text's words, stemmed, without stop words.
func (st stems) terms(text string) []string {
	ws := words(text)
	out := ws[:0]
	for _, w := range ws {
		t, ok := st[w]
		if !ok {
			t = stem(w)
			st[w] = t
		}
		if t != "" {
			out = append(out, t)
		}
	}
	return out
}

// stem returns w's stem, or "" for a stop word.
func stem(w string) string {
	if english.IsStopWord(w) {
		return ""
	}
	return english.Stem(w, false)
}

// ParamsOf reads the parameters of a JSON Schema object: its properties'
// names and descriptions, and those of the properties of objects nested in
// them (array items included), so that a tool whose arguments describe the
// need is found by it.
func ParamsOf(schema json.RawMessage) []Param {
	var s schemaNode
	if len(schema) == 0 || json.Unmarshal(schema, &s) != nil {
		return nil
	}
	var out []Param
	s.collect(&out, 0)
	return out
}

type schemaNode struct {
	Description string                 `json:"description"`
	Properties  map[string]*schemaNode `json:"properties"`
	Items       *schemaNode            `json:"items"`
}

func (s *schemaNode) collect(out *[]Param, depth int) {
	if s == nil || depth > 3 {
		return
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		p := s.Properties[n]
		desc := ""
		if p != nil {
			desc = p.Description
		}
		*out = append(*out, Param{Name: n, Description: desc})
		p.collect(out, depth+1)
	}
	s.Items.collect(out, depth+1)
}

// synonymWeight is what a synonym of a query word is worth next to the word.
const synonymWeight = 0.6

// synonyms maps a stemmed query word to the stems of words tools use for
// the same thing. The groups are symmetric: every word of a group finds
// the others.
var synonyms = sync.OnceValue(func() map[string][]string {
	groups := [][]string{
		{"add", "sum", "plus", "total"},
		{"delete", "remove", "erase", "drop", "destroy"},
		{"folder", "directory", "dir"},
		{"rename", "move"},
		{"fetch", "get", "retrieve", "download", "read"},
		{"show", "list", "display", "view"},
		{"find", "search", "lookup", "query", "locate"},
		{"make", "create", "new"},
		{"modify", "update", "change", "edit"},
		{"save", "write", "store", "persist"},
		{"comment", "reply"},
		{"pr", "pull"},
		{"repo", "repository"},
		{"compress", "zip", "gzip"},
		{"picture", "image", "photo"},
		{"metadata", "info", "details"},
		{"variable", "env", "environment"},
		{"remember", "memory", "knowledge", "observation"},
		{"think", "thought", "reasoning"},
		{"size", "bytes"},
		{"echo", "repeat"},
		{"tree", "hierarchy", "recursive"},
	}
	m := map[string][]string{}
	for _, g := range groups {
		for _, w := range g {
			for _, o := range g {
				if o != w {
					m[stem(w)] = append(m[stem(w)], stem(o))
				}
			}
		}
	}
	return m
})
