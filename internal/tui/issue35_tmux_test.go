package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
)

// Issue 35 point 10a: the first Tab on an ambiguous command prefix lists
// the candidates, also when the same text was completed before and typed
// again (the old cycle made that Tab jump to the first candidate).
func TestFirstTabListsTheCandidates(t *testing.T) {
	dir := t.TempDir()
	model := llmtest.New(t, llmtest.OpenAI)
	p := startTmux(t, dir, fakeModelConfig(model.URL), 100, 30)
	p.waitFor("fake/fake-model")
	p.keys("/co", "Tab")
	p.waitFor("(tab again cycles)  /compact  /copy  /copy code  /cost", "› /co")
	p.keys("C-u")
	p.waitGone("tab again cycles")
	p.keys("/co", "Tab")
	s := p.waitFor("(tab again cycles)  /compact  /copy  /copy code  /cost")
	if strings.Contains(s, "1/4") || strings.Contains(s, "› /compact") {
		t.Errorf("the first Tab on /co typed again jumped into an old cycle:\n%s", s)
	}
}

// Issue 35 point 10b: /mcp prompts is a browser, as /mcp tools and /mcp
// resources are: a filterable list with each prompt's arguments, and Enter
// uses the chosen prompt.
func TestMCPPromptsIsABrowser(t *testing.T) {
	peers := testpeer.Require(t)
	dir := t.TempDir()
	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"Used it."}})
	cfg := fakeModelConfig(model.URL) + fmt.Sprintf("\n[[mcp.servers]]\nname = \"everything\"\ncommand = %q\nargs = [%q, \"stdio\"]\n", peers.Node, peers.Everything)
	p := startTmux(t, dir, cfg, 100, 30)
	p.waitFor("1/1 servers")
	p.keys("/mcp prompts", "Enter")
	p.waitFor("Prompts", "filter:", "/mcp__everything__simple-prompt", "/mcp__everything__args-prompt", "city=…", "enter use it")
	p.keys("simple")
	p.waitFor("1 shown")
	p.waitGone("args-prompt")
	p.keys("Enter")
	p.waitFor("Used it.")
	reqs := model.Requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].Messages[len(reqs[0].Messages)-1].Text, "simple prompt") {
		t.Errorf("the model was sent %+v; want the simple prompt's text", reqs)
	}
}

// Issue 35 point 10e: a server that fails as otter starts says so below
// the welcome line, as a notice in the transcript, not above it.
func TestStartupServerErrorsFollowTheWelcome(t *testing.T) {
	dir := t.TempDir()
	model := llmtest.New(t, llmtest.OpenAI)
	cfg := fakeModelConfig(model.URL) + fmt.Sprintf("\n[[mcp.servers]]\nname = \"broken\"\ncommand = %q\n", dir+"/no-such-server")
	p := startTmux(t, dir, cfg, 100, 30)
	s := p.waitFor("broken could not start", "type a message, or /help")
	if w, e := strings.Index(s, "type a message, or /help"), strings.Index(s, "broken could not start"); e < w {
		t.Errorf("the start-up error shows above the welcome line:\n%s", s)
	}
}

// Issue 35 point 10c: /permissions lists the saved [permissions] rules,
// each with its file and what that file is, and removes one otter saved —
// in the user's config or the project's local config — while a rule of the
// project's shared config is refused, saying why.
func TestPermissionsCommand(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	writeTestFile(t, filepath.Join(work, ".otter", "config.toml"), "[permissions]\n\"mcp__x__*\" = \"deny\"\n", 0o644)
	local := filepath.Join(work, ".otter", "config.local.toml")
	writeTestFile(t, local, "[permissions]\n\"web_*\" = \"ask\"\nscrape_page = \"allow\"\n", 0o644)
	model := llmtest.New(t, llmtest.OpenAI)
	p := startTmux(t, dir, fakeModelConfig(model.URL)+"\n[permissions]\nmcp__everything__echo = \"allow\"\n", 100, 40)
	p.waitFor("Trust this directory?")
	p.keys("Escape")
	p.waitFor(notTrustedNotice)
	p.keys("/permissions", "Enter")
	p.waitForWords("1. mcp__everything__echo = allow " + p.cfgFile + " (your config)")
	p.waitForWords("2. mcp__x__* = deny " + filepath.Join(work, ".otter", "config.toml") + " (the project's shared config, not applied until you trust the project)")
	p.waitForWords("3. scrape_page = allow " + local + " (the project's local config)")
	p.waitForWords("4. web_* = ask " + local + " (the project's local config)")

	p.keys("/permissions remove 2", "Enter")
	p.waitForWords("not removed: mcp__x__* = \"deny\" is in " + filepath.Join(work, ".otter", "config.toml") + " (the project's shared configuration, which otter never writes")
	p.keys("/permissions remove 4", "Enter")
	p.waitForWords("removed web_* = \"ask\" from " + local)
	if b, _ := os.ReadFile(local); strings.Contains(string(b), "web_*") || !strings.Contains(string(b), "scrape_page") {
		t.Errorf("after removing web_*, the local config is:\n%s", b)
	}
	p.keys("/permissions remove 1", "Enter")
	p.waitForWords("removed mcp__everything__echo = \"allow\" from " + p.cfgFile)
	if b, _ := os.ReadFile(p.cfgFile); strings.Contains(string(b), "mcp__everything__echo") || !strings.Contains(string(b), "[providers.fake]") {
		t.Errorf("after removing mcp__everything__echo, the user config is:\n%s", b)
	}
	p.keys("/clear", "Enter")
	p.keys("/permissions", "Enter")
	p.waitForWords("1. mcp__x__* = deny")
	p.waitForWords("2. scrape_page = allow")
}
