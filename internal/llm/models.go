package llm

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	Input  float64
	Output float64
	// CachedInput is the price of input tokens read from the provider's
	// prompt cache; CacheWrite that of input tokens written to it
	// (Anthropic charges for writes, OpenAI does not).
	CachedInput float64
	CacheWrite  float64
}

// Cost is what u costs at p, in US dollars.
func (p Price) Cost(u Usage) float64 {
	fresh := u.InputTokens - u.CachedTokens - u.CacheWriteTokens
	if fresh < 0 {
		fresh = 0
	}
	const m = 1e6
	return (float64(fresh)*p.Input + float64(u.CachedTokens)*p.CachedInput +
		float64(u.CacheWriteTokens)*p.CacheWrite + float64(u.OutputTokens)*p.Output) / m
}

// ModelFacts are what otter knows of a model: its limits and its price.
type ModelFacts struct {
	Model string
	// ContextWindow is the most tokens one request may hold, the answer
	// included; MaxOutputTokens the most the model writes in one answer.
	ContextWindow   int
	MaxOutputTokens int
	// WindowKnown is false when neither the built-in table nor the config
	// gave ContextWindow, and DefaultContextWindow stands in for it.
	WindowKnown bool
	// Price is valid when HasPrice is set.
	Price    Price
	HasPrice bool
}

// Conservative figures for a model otter knows nothing of, such as one
// served by a local OpenAI-compatible server (which reports neither).
const (
	DefaultContextWindow   = 8192
	DefaultMaxOutputTokens = 2048
)

// MissingWindowNotice is what to tell the person when f.WindowKnown is not
// set: the figure otter assumes and how to give the real one.
func (f ModelFacts) MissingWindowNotice(provider string) string {
	return fmt.Sprintf("otter does not know the context window of model %q, so it assumes %d tokens and compacts the conversation before it grows past that. "+
		"If the model takes more, set it in [providers.%s]: context_window = N (and max_output_tokens = N); for Ollama, N is the num_ctx the model runs with.",
		f.Model, f.ContextWindow, provider)
}

// builtinModel is one row of the built-in table.
type builtinModel struct {
	window, output int
	price          Price // zero: unknown
}

// anthropicPrice derives Anthropic's cache prices from the input price:
// reads cost a tenth, (five-minute) writes a quarter more.
func anthropicPrice(in, out float64) Price {
	return Price{Input: in, Output: out, CachedInput: in / 10, CacheWrite: in * 1.25}
}

// openaiPrice is an OpenAI price; cache writes cost nothing extra.
func openaiPrice(in, out, cached float64) Price {
	return Price{Input: in, Output: out, CachedInput: cached, CacheWrite: in}
}

// builtinModels are the well-known models of Anthropic and OpenAI, by the
// name without a date suffix (see canonicalModel). Figures from the
// providers' model and pricing pages.
var builtinModels = map[string]builtinModel{
	// Anthropic
	"claude-fable-5-1":  {1_000_000, 128_000, anthropicPrice(10, 50)},
	"claude-opus-5-5":   {1_000_000, 128_000, Price{Input: 4, Output: 20, CachedInput: 0.2, CacheWrite: 5}},
	"claude-sonnet-5-5": {1_000_000, 128_000, Price{Input: 2, Output: 10, CachedInput: 0.2, CacheWrite: 2.5}},
	"claude-haiku-5-5":  {1_000_000, 128_000, Price{}}, // priced by prompt length: set [pricing]
	"claude-opus-5":     {1_000_000, 128_000, anthropicPrice(5, 25)},
	"claude-sonnet-5":   {1_000_000, 128_000, Price{Input: 2, Output: 10, CachedInput: 0.2, CacheWrite: 2.5}},
	"claude-opus-4-6":   {1_000_000, 128_000, anthropicPrice(5, 25)},
	"claude-sonnet-4-6": {1_000_000, 128_000, anthropicPrice(3, 15)},
	"claude-opus-4-5":   {200_000, 64_000, anthropicPrice(5, 25)},
	"claude-sonnet-4-5": {200_000, 64_000, anthropicPrice(3, 15)},
	"claude-haiku-4-5":  {200_000, 64_000, anthropicPrice(1, 5)},
	"claude-opus-4-1":   {200_000, 32_000, anthropicPrice(15, 75)},
	"claude-opus-4-0":   {200_000, 32_000, anthropicPrice(15, 75)},
	"claude-sonnet-4-0": {200_000, 64_000, anthropicPrice(3, 15)},
	"claude-3-7-sonnet": {200_000, 64_000, anthropicPrice(3, 15)},
	"claude-3-5-haiku":  {200_000, 8_192, anthropicPrice(0.8, 4)},
	"claude-3-haiku":    {200_000, 4_096, anthropicPrice(0.25, 1.25)},
	// OpenAI
	"gpt-5.4-mini": {400_000, 128_000, openaiPrice(0.75, 4.5, 0.075)},
	"gpt-5.4-nano": {400_000, 128_000, openaiPrice(0.2, 1.25, 0.02)},
	"gpt-5.2":      {400_000, 128_000, openaiPrice(1.75, 14, 0.175)},
	"gpt-5.1":      {400_000, 128_000, openaiPrice(1.25, 10, 0.125)},
	"gpt-5":        {400_000, 128_000, openaiPrice(1.25, 10, 0.125)},
	"gpt-5-mini":   {400_000, 128_000, openaiPrice(0.25, 2, 0.025)},
	"gpt-5-nano":   {400_000, 128_000, openaiPrice(0.05, 0.4, 0.005)},
	"gpt-4.1":      {1_047_576, 32_768, openaiPrice(2, 8, 0.5)},
	"gpt-4.1-mini": {1_047_576, 32_768, openaiPrice(0.4, 1.6, 0.1)},
	"gpt-4.1-nano": {1_047_576, 32_768, openaiPrice(0.1, 0.4, 0.025)},
	"gpt-4o":       {128_000, 16_384, openaiPrice(2.5, 10, 1.25)},
	"gpt-4o-mini":  {128_000, 16_384, openaiPrice(0.15, 0.6, 0.075)},
	"o3":           {200_000, 100_000, openaiPrice(2, 8, 0.5)},
	"o3-mini":      {200_000, 100_000, openaiPrice(1.1, 4.4, 0.55)},
	"o4-mini":      {200_000, 100_000, openaiPrice(1.1, 4.4, 0.275)},
}

// builtinFamilies give the limits (never a price) of newer models of a
// known family that the table does not name yet, longest prefix first.
var builtinFamilies = []struct {
	prefix         string
	window, output int
}{
	{"claude-", 200_000, 32_000},
	{"gpt-5", 400_000, 128_000},
	{"gpt-4.1", 1_047_576, 32_768},
	{"gpt-4o", 128_000, 16_384},
}

// dateSuffix matches the snapshot dates of model names: -20250929,
// -2025-08-07, and the -latest alias.
var dateSuffix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$`) })

// canonicalModel is the name the built-in table knows a model by: without
// a router's "vendor/" prefix (OpenRouter) and a snapshot date.
func canonicalModel(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	return dateSuffix().ReplaceAllString(name, "")
}

// BuiltinModels lists the models of the built-in table, for /model and
// documentation.
func BuiltinModels() []string {
	out := make([]string, 0, len(builtinModels))
	for name := range builtinModels {
		out = append(out, name)
	}
	return out
}

// Limits are a provider's or a model's configured limits ([providers.NAME]
// context_window and max_output_tokens); zero fields are unset.
type Limits struct {
	ContextWindow   int
	MaxOutputTokens int
}

// Configured is what the configuration says of a model: its limits, in
// the order they apply (the provider's, then the model's own), and the
// prices of [pricing] by model name. The zero value says nothing.
type Configured struct {
	Limits  []Limits
	Pricing map[string]Price // zero fields are unset
}

// Facts returns what otter knows of model: the built-in table, overridden
// by each of c.Limits in turn, and the price from c.Pricing (under the
// model's name as given, or as the table knows it) over the built-in one.
// Unknown limits are the conservative defaults, with WindowKnown unset.
func Facts(c Configured, model string) ModelFacts {
	f := ModelFacts{Model: model}
	canon := canonicalModel(model)
	if b, ok := builtinModels[canon]; ok {
		f.ContextWindow, f.MaxOutputTokens, f.WindowKnown = b.window, b.output, true
		if b.price != (Price{}) {
			f.Price, f.HasPrice = b.price, true
		}
	} else {
		for _, fam := range builtinFamilies {
			if strings.HasPrefix(canon, fam.prefix) {
				f.ContextWindow, f.MaxOutputTokens, f.WindowKnown = fam.window, fam.output, true
				break
			}
		}
	}
	// A provider with a base_url of its own may serve a model of the same
	// name with other limits (a quantised local copy): its limits win over
	// the built-in figures.
	for _, l := range c.Limits {
		f.apply(l)
	}
	if p, ok := c.Pricing[model]; ok {
		f.applyPrice(p)
	} else if p, ok := c.Pricing[canon]; ok {
		f.applyPrice(p)
	}
	if f.ContextWindow == 0 {
		f.ContextWindow = DefaultContextWindow
	}
	if f.MaxOutputTokens == 0 || f.MaxOutputTokens >= f.ContextWindow {
		f.MaxOutputTokens = min(cmp.Or(f.MaxOutputTokens, DefaultMaxOutputTokens), f.ContextWindow/4)
	}
	return f
}

func (f *ModelFacts) apply(l Limits) {
	if l.ContextWindow > 0 {
		f.ContextWindow, f.WindowKnown = l.ContextWindow, true
	}
	if l.MaxOutputTokens > 0 {
		f.MaxOutputTokens = l.MaxOutputTokens
	}
}

// applyPrice lays the keys a [pricing] table sets over the built-in price.
func (f *ModelFacts) applyPrice(p Price) {
	if !f.HasPrice {
		f.Price = Price{}
	}
	for _, v := range []struct {
		dst *float64
		src float64
	}{{&f.Price.Input, p.Input}, {&f.Price.Output, p.Output}, {&f.Price.CachedInput, p.CachedInput}, {&f.Price.CacheWrite, p.CacheWrite}} {
		if v.src > 0 {
			*v.dst = v.src
		}
	}
	// Unset cache prices of a model the table did not price cost what
	// input costs.
	if f.Price.CachedInput == 0 {
		f.Price.CachedInput = f.Price.Input
	}
	if f.Price.CacheWrite == 0 {
		f.Price.CacheWrite = f.Price.Input
	}
	f.HasPrice = f.Price.Input > 0 || f.Price.Output > 0
}

// tooLongRE find the window a provider states when it refuses a prompt as
// too long: Anthropic's "prompt is too long: N tokens > M maximum" and
// "… > M, decrease input length …", OpenAI's "maximum context length is M
// tokens".
var tooLongRE = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`prompt is too long: \d+ tokens > (\d+) maximum`),
		regexp.MustCompile(`exceed context limit: \d+ \+ \d+ > (\d+)`),
		regexp.MustCompile(`maximum context length is (\d+) tokens`),
	}
})

// TooLong reports whether err is a provider's refusal of a request that
// does not fit the model's context window (OpenAI context_length_exceeded,
// Anthropic "prompt is too long"), and the window the provider stated in
// it (0 when it gave none). The Responses API refuses inside the stream,
// after it began with HTTP 200.
func TooLong(err error) (window int, ok bool) {
	var e *Error
	if !errors.As(err, &e) {
		return 0, false
	}
	if e.StatusCode == 0 && e.Code == "context_length_exceeded" {
		return 0, true
	}
	if e.StatusCode != 400 && e.StatusCode != 413 {
		return 0, false
	}
	msg := e.Message
	switch {
	case e.Code == "context_length_exceeded",
		strings.Contains(msg, "prompt is too long"),
		strings.Contains(msg, "exceed context limit"),
		strings.Contains(msg, "maximum context length"),
		strings.Contains(msg, "context_length_exceeded"):
	default:
		return 0, false
	}
	for _, re := range tooLongRE() {
		if m := re.FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n, true
		}
	}
	return 0, true
}
