// Package toolsearch ranks tools for a need described in words: a BM25F
// index over each tool's title and description, its parameters' names and
// descriptions, and its server's name and instructions, in that order of
// worth, where a query word found in the tool's own name split into words
// (snake_case, camelCase, kebab-case, dots and slashes) outweighs them all;
// with English stemming and a few synonyms a model uses for the words tools
// are named with ("add" finds "sum", "folder" finds "directory").
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

// The fields of a tool, in the order of fieldWeight and fieldB.
const (
	fieldTitle = iota
	fieldDescription
	fieldParamName
	fieldParamDesc
	fieldServer
	nFields
)

// What a word is worth in each field (BM25F), and how much a field's
// length lowers the worth of its words (b: 0 not at all, 1 in proportion).
// Descriptions are lowered little: a long one that says what the tool does
// in its first sentence is not a worse match for it.
var (
	fieldWeight = [nFields]float64{fieldTitle: 2.0, fieldDescription: 1.0, fieldParamName: 0.5, fieldParamDesc: 0.3, fieldServer: 1.0}
	fieldB      = [nFields]float64{fieldTitle: 0.5, fieldDescription: 0.3, fieldParamName: 0.75, fieldParamDesc: 0.75, fieldServer: 0}
)

const (
	// nameWeight is what a query word among the words of a tool's own name
	// is worth beyond what the tool's text (title, description, parameters,
	// server) makes of it — which saturates at k1+1 — so that a word in the
	// name outweighs any number of mentions elsewhere.
	nameWeight = 2.0
	// nameB is how much a long name lowers that worth: read_file is a
	// closer match for "read file" than read_multiple_files.
	nameB = 0.5
	// weightInstructions is what a word of the server's instructions is
	// worth to each of its tools, once however often it occurs.
	weightInstructions = 0.2

	k1 = 1.2
)

// Index is a read-only search index over Docs. Its zero value holds no
// tools.
type Index struct {
	n        int
	postings map[string][]posting
	// df is the number of documents a term is in, where a document is a
	// tool's own text or one server's instructions: instructions are one
	// text however many tools their server has, and must not make the words
	// they use look common ("file" in a file server's instructions).
	df   map[string]float64
	docs float64 // the number of documents df counts in
}

// posting is a term's worth in one doc, without the term's idf: its
// saturated BM25F term frequency over the fields, plus nameWeight when the
// term is in the tool's name.
type posting struct {
	doc   int32
	worth float32
}

// Hit is a ranked match: the index of its Doc in the slice given to Build,
// and its score (higher is better; only comparable within one search).
type Hit struct {
	Doc   int
	Score float64
}

// docTerms is one doc's terms: how often each occurs in each field, and
// the fields' lengths.
type docTerms struct {
	tf      map[string]*termFreq
	lens    [nFields]float64
	nameLen float64
}

type termFreq struct {
	fields [nFields]float64
	name   bool
	instr  bool
}

// Build indexes docs; a Hit's Doc is an index into docs.
func Build(docs []Doc) *Index {
	ix := &Index{n: len(docs), postings: make(map[string][]posting),
		df: map[string]float64{}, docs: float64(len(docs))}
	if len(docs) == 0 {
		return ix
	}
	st := stems{}
	seen := map[string]bool{}
	all := make([]docTerms, len(docs))
	var total [nFields]float64
	totalName := 0.0
	type serverText struct{ server, instructions string }
	counted := map[serverText]bool{}
	for i, d := range docs {
		dt := docTerms{tf: map[string]*termFreq{}}
		get := func(t string) *termFreq {
			f := dt.tf[t]
			if f == nil {
				f = &termFreq{}
				dt.tf[t] = f
			}
			return f
		}
		add := func(text string, field int) {
			for _, t := range st.terms(text) {
				get(t).fields[field]++
				dt.lens[field]++
			}
		}
		for _, t := range st.terms(d.Tool) {
			get(t).name = true
			dt.nameLen++
		}
		add(d.Title, fieldTitle)
		add(d.Description, fieldDescription)
		for _, p := range d.Params {
			add(p.Name, fieldParamName)
			add(p.Description, fieldParamDesc)
		}
		add(d.Server, fieldServer)
		// Instructions describe the whole server: each word counts once,
		// and they do not make a tool's own text look longer.
		for t, f := range dt.tf {
			if f.name || f.fields != [nFields]float64{} {
				ix.df[t]++
			}
		}
		instr := st.terms(d.ServerInstructions)
		for _, t := range instr {
			get(t).instr = true
		}
		if k := (serverText{d.Server, d.ServerInstructions}); len(instr) > 0 && !counted[k] {
			counted[k] = true
			ix.docs++
			for _, t := range instr {
				if !seen[t] {
					seen[t] = true
					ix.df[t]++
				}
			}
			clear(seen)
		}
		for f := range nFields {
			total[f] += dt.lens[f]
		}
		totalName += dt.nameLen
		all[i] = dt
	}
	n := float64(len(docs))
	var avg [nFields]float64
	for f := range nFields {
		avg[f] = max(total[f]/n, 1)
	}
	avgName := max(totalName/n, 1)
	for i, dt := range all {
		var norm [nFields]float64
		for f := range nFields {
			norm[f] = 1 - fieldB[f] + fieldB[f]*dt.lens[f]/avg[f]
		}
		nameNorm := 1 - nameB + nameB*dt.nameLen/avgName
		for t, tf := range dt.tf {
			x := 0.0
			for f := range nFields {
				if tf.fields[f] > 0 {
					x += fieldWeight[f] * tf.fields[f] / norm[f]
				}
			}
			if tf.instr {
				x += weightInstructions
			}
			worth := x * (k1 + 1) / (x + k1)
			if tf.name {
				worth += nameWeight / nameNorm
			}
			ix.postings[t] = append(ix.postings[t], posting{doc: int32(i), worth: float32(worth)})
		}
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
//
// A query word counts once per tool: through itself or through the one of
// its synonyms that is worth most to the tool (a synonym is worth less than
// the word), so that "read" does not find get_file_info three times over,
// by "get", "retrieve" and "reading".
func (ix *Index) Search(query string, limit int) []Hit {
	if ix == nil || ix.n == 0 || limit <= 0 {
		return nil
	}
	type qterm struct {
		term   string
		weight float64
	}
	var groups [][]qterm // per query word: the word, then its synonyms
	seen := map[string]bool{}
	for _, w := range words(query) {
		t := stem(w)
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		g := []qterm{{t, 1}}
		for _, syn := range synonyms()[t] {
			g = append(g, qterm{syn, synonymWeight})
		}
		groups = append(groups, g)
	}
	scores := make([]float32, ix.n)
	best := make([]float32, ix.n) // the current query word's worth per doc
	var touched, word []int32
	for _, g := range groups {
		word = word[:0]
		for _, q := range g {
			ps := ix.postings[q.term]
			if len(ps) == 0 {
				continue
			}
			df := ix.df[q.term]
			idf := float32(q.weight * math.Log(1+(ix.docs-df+0.5)/(df+0.5)))
			for _, p := range ps {
				s := idf * p.worth
				if best[p.doc] == 0 {
					word = append(word, p.doc)
				}
				best[p.doc] = max(best[p.doc], s)
			}
		}
		for _, d := range word {
			if scores[d] == 0 {
				touched = append(touched, d)
			}
			scores[d] += best[d]
			best[d] = 0
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
		{"show", "view", "read", "cat", "print", "dump"},
		{"find", "search", "lookup", "query", "locate"},
		{"make", "create", "new"},
		{"modify", "update", "change", "edit"},
		{"save", "write", "store", "persist"},
		{"comment", "reply"},
		{"pr", "prs", "pull"},
		{"repo", "repository"},
		{"compress", "zip", "gzip"},
		{"picture", "image", "photo"},
		{"metadata", "info", "details"},
		{"variable", "env", "environment"},
		{"remember", "memory", "knowledge", "observation"},
		{"think", "thought", "reasoning"},
		{"size", "bytes", "big", "large"},
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
