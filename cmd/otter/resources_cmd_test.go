package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/attach"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
)

// everythingConfigFile writes a config file that configures the
// reference server as "everything".
func everythingConfigFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "otter.toml")
	if err := os.WriteFile(path, []byte(testpeer.Require(t).EverythingConfig()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The "done when", headless, against the installed
// server-everything (2026.8.31): its 7 resources and 2 templates, a read,
// and the resource prompt with its embedded resource.
func TestMCPResourcesReadPromptAgainstEverything(t *testing.T) {
	configTestHome(t)
	cfg := everythingConfigFile(t)

	stdout, stderr, err := runOtter(t, "--config", cfg, "mcp", "resources", "everything", "--json")
	if err != nil {
		t.Fatalf("mcp resources: %v\n%s", err, stderr)
	}
	var list []map[string]string
	if err := json.Unmarshal([]byte(stdout), &list); err != nil {
		t.Fatalf("mcp resources --json: %v\n%s", err, stdout)
	}
	var uris, templates []string
	for _, r := range list {
		if r["server"] != "everything" || r["name"] == "" {
			t.Errorf("entry %v", r)
		}
		if r["uri"] != "" {
			uris = append(uris, r["uri"])
		}
		if r["uri_template"] != "" {
			templates = append(templates, r["uri_template"])
		}
	}
	if len(uris) != 7 || len(templates) != 2 || !strings.Contains(strings.Join(uris, " "), "demo://resource/static/document/architecture.md") {
		t.Errorf("resources %v, templates %v; want 7 and 2", uris, templates)
	}

	stdout, stderr, err = runOtter(t, "--config", cfg, "mcp", "read", "everything", "demo://resource/dynamic/text/1")
	if err != nil {
		t.Fatalf("mcp read: %v\n%s", err, stderr)
	}
	if !strings.HasPrefix(stdout, "Resource 1: This is a plaintext resource created at") {
		t.Errorf("mcp read printed %q", stdout)
	}

	stdout, stderr, err = runOtter(t, "--config", cfg, "mcp", "prompt", "everything", "resource-prompt", "resourceType=Text", "resourceId=2")
	if err != nil {
		t.Fatalf("mcp prompt: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "Please analyze the following resource") ||
		!strings.Contains(stdout, "demo://resource/dynamic/text/2") || !strings.Contains(stdout, "Resource 2: This is a plaintext resource") {
		t.Errorf("mcp prompt printed:\n%s", stdout)
	}

	stdout, _, err = runOtter(t, "--config", cfg, "mcp", "tools", "everything")
	if err != nil || !strings.Contains(stdout, "mcp__everything__simulate-research-query  (server everything, tool simulate-research-query)\n    [needs MCP tasks (not supported yet): not offered to the model]") {
		t.Errorf("mcp tools does not mark the task tool: %v\n%s", err, stdout)
	}

	stdout, _, err = runOtter(t, "--config", cfg, "mcp", "prompts", "everything", "--json")
	if err != nil || !strings.Contains(stdout, `"name": "resource-prompt"`) {
		t.Errorf("mcp prompts --json: %v\n%s", err, stdout)
	}

	// Usage errors: a missing required argument, a bad k=v, a blob without -o.
	_, _, err = runOtter(t, "--config", cfg, "mcp", "prompt", "everything", "resource-prompt", "resourceType=Text")
	wantExit(t, err, 2)
	if !strings.Contains(err.Error(), "needs resourceId") {
		t.Errorf("missing argument: %v", err)
	}
	_, _, err = runOtter(t, "--config", cfg, "mcp", "read", "everything", "demo://resource/static/document/nope.md")
	wantExit(t, err, 2)
	out := filepath.Join(t.TempDir(), "blob.bin")
	_, stderr, err = runOtter(t, "--config", cfg, "mcp", "read", "everything", "demo://resource/dynamic/blob/1", "-o", out)
	if err != nil {
		t.Fatalf("mcp read -o: %v\n%s", err, stderr)
	}
	if data, err := os.ReadFile(out); err != nil || len(data) == 0 || !strings.Contains(stderr, "wrote "+out) {
		t.Errorf("-o wrote %d bytes (%v); stderr %q", len(data), err, stderr)
	}
}

// `otter -p` expands @SERVER:URI: the model receives the document's text;
// and the model's read_mcp_resource call returns the resource.
func TestPromptMentionAndReadResourceTool(t *testing.T) {
	peers := testpeer.Require(t)
	for _, kind := range llmtest.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			configTestHome(t)
			srv := llmtest.New(t, kind,
				llmtest.Reply{Calls: []llmtest.Call{{ID: "call_read", Name: attach.ReadToolName, Args: `{"server":"everything","uri":"demo://resource/dynamic/text/2"}`}}},
				llmtest.Reply{Text: []string{"It describes the architecture."}},
			)
			cfg := promptConfig(t, srv, peers.EverythingConfig())
			stdout, stderr, err := runOtter(t, "--config", cfg, "-p", "Summarise @everything:demo://resource/static/document/architecture.md.")
			if err != nil {
				t.Fatalf("otter -p: %v\nstderr:\n%s", err, stderr)
			}
			if stdout != "It describes the architecture.\n" {
				t.Errorf("stdout = %q", stdout)
			}
			if !strings.Contains(stderr, "attached @everything:demo://resource/static/document/architecture.md (text/markdown") {
				t.Errorf("stderr does not note the attachment:\n%s", stderr)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("model got %d requests, want 2", len(reqs))
			}
			user := reqs[0].Messages[0].Text
			if !strings.HasPrefix(user, "Summarise @everything:") || !strings.Contains(user, "# Everything Server") {
				t.Errorf("the model did not get the document's text:\n%.600s", user)
			}
			offered := strings.Join(reqs[0].Tools, " ")
			if !strings.Contains(offered, attach.ReadToolName) || !strings.Contains(offered, attach.ListToolName) ||
				strings.Contains(offered, "simulate-research-query") {
				t.Errorf("tools offered: %s", offered)
			}
			res := reqs[1].LastToolResults()
			if len(res) != 1 || res[0].IsError || !strings.Contains(res[0].Text, "Resource 2: This is a plaintext resource") {
				t.Errorf("read_mcp_resource returned %+v", res)
			}
		})
	}
}

// otter mcp add/get/disable/enable/remove on the user's file, keeping
// what the person wrote.
func TestMCPAddGetEnableRemove(t *testing.T) {
	paths := configTestHome(t)
	file := paths.UserConfigFile()
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	mine := "# my servers\n[mcp]\nauto_reload = true # watch\n"
	if err := os.WriteFile(file, []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := runOtter(t, "mcp", "add", "--env", "API_TOKEN=sk-abcdefghijklmnop1234", "docs", "--", "docs-mcp", "--stdio")
	if err != nil {
		t.Fatalf("add: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, `Added MCP server "docs" to `+file) {
		t.Errorf("add said %q", stdout)
	}
	data, _ := os.ReadFile(file)
	if !strings.HasPrefix(string(data), mine+"\n[[mcp.servers]]\nname = \"docs\"\n") {
		t.Errorf("file after add:\n%s", data)
	}
	_, _, err = runOtter(t, "mcp", "add", "docs", "https://example.com/mcp")
	wantExit(t, err, 2)
	if !strings.Contains(err.Error(), file+":5: a server named \"docs\" is already defined") {
		t.Errorf("adding docs again: %v", err)
	}
	stdout, _, err = runOtter(t, "mcp", "get", "docs")
	if err != nil || !strings.Contains(stdout, "command:   docs-mcp --stdio") || !strings.Contains(stdout, "API_TOKEN=****") || strings.Contains(stdout, "sk-abc") {
		t.Errorf("get: %v\n%s", err, stdout)
	}
	if _, _, err := runOtter(t, "mcp", "disable", "docs"); err != nil {
		t.Fatal(err)
	}
	stdout, _, _ = runOtter(t, "mcp", "get", "docs", "--json")
	if !strings.Contains(stdout, `"enabled": false`) {
		t.Errorf("get --json after disable:\n%s", stdout)
	}
	if _, _, err := runOtter(t, "mcp", "enable", "docs"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runOtter(t, "mcp", "remove", "docs"); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(file); string(data) != mine {
		t.Errorf("after add and remove the file is\n%s\nwant\n%s", data, mine)
	}
	_, _, err = runOtter(t, "mcp", "remove", "docs")
	wantExit(t, err, 2)
}
