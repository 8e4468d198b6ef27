package mcphost

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/render"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/toolname"
)

// The installed server-everything offers 7 static documents and 2
// templates (dynamic text and blob), completions, and one tool that only
// runs as an MCP task (simulate-research-query).
func TestEverythingResourcesTemplatesCompletionsTasks(t *testing.T) {
	t.Parallel()
	node, index := everything(t)
	srv := config.Server{Name: "everything", Command: node, Args: []string{index, "stdio"}, StartupTimeout: dur(liveness)}
	h := newHarness(t, configOf(srv), servers.Options{})
	if h.m.HasResources() {
		t.Fatal("HasResources before any server connected")
	}
	h.m.Start(context.Background())
	st := h.waitState("everything", servers.StateConnected)
	if st.Resources != 7 || st.Templates != 2 {
		t.Errorf("status counts resources %d templates %d, want 7 and 2", st.Resources, st.Templates)
	}
	if !h.m.HasResources() {
		t.Error("HasResources is false with everything connected")
	}
	var uris []string
	for _, r := range h.m.Resources() {
		uris = append(uris, r.URI)
	}
	if !slices.Contains(uris, "demo://resource/static/document/architecture.md") {
		t.Errorf("resources: %v", uris)
	}
	var tmpls []string
	for _, r := range h.m.ResourceTemplates() {
		if r.Server != "everything" {
			t.Errorf("template of server %q", r.Server)
		}
		tmpls = append(tmpls, r.URITemplate)
	}
	want := []string{"demo://resource/dynamic/blob/{resourceId}", "demo://resource/dynamic/text/{resourceId}"}
	if !slices.Equal(tmpls, want) {
		t.Errorf("templates = %v, want %v", tmpls, want)
	}

	ctx, cancel := context.WithTimeout(context.Background(), liveness)
	defer cancel()
	vals, err := h.m.Complete(ctx, "everything", "ref/prompt", "completable-prompt", "department", "E", nil)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if !slices.Contains(vals, "Engineering") {
		t.Errorf("completions of department E = %v, want Engineering among them", vals)
	}
	// Its templates complete {resourceId} too (it offers a typed positive integer).
	vals, err = h.m.Complete(ctx, "everything", "ref/resource", "demo://resource/dynamic/text/{resourceId}", "resourceId", "3", nil)
	if err != nil || !slices.Equal(vals, []string{"3"}) {
		t.Errorf("completions of the text template's resourceId 3 = %v, %v; want [3]", vals, err)
	}
	if _, err := h.m.Complete(ctx, "everything", "ref/nothing", "x", "y", "", nil); err == nil {
		t.Error("Complete with an unknown reference type succeeded")
	}

	// simulate-research-query is listed, marked, not callable.
	name := toolname.Qualified("everything", "simulate-research-query")
	e, ok := h.set.Lookup(name)
	if !ok {
		t.Fatalf("%s is not listed", name)
	}
	if e.Info.Unsupported != NeedsTasks {
		t.Errorf("%s: Unsupported = %q, want %q", name, e.Info.Unsupported, NeedsTasks)
	}
	res, err := h.call(ctx, "everything", "simulate-research-query", `{"topic":"otters"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(render.Model(res), "needs MCP tasks (not supported yet)") {
		t.Errorf("calling it: isError %v, %q", res.IsError, render.Model(res))
	}
	if e, _ := h.set.Lookup(toolname.Qualified("everything", "echo")); e.Info.Unsupported != "" {
		t.Errorf("echo marked %q", e.Info.Unsupported)
	}
}

func TestCompleteWithoutCompletionsSaysSo(t *testing.T) {
	t.Parallel()
	h := newHarness(t, configOf(stdioServer(t, "plain", "basic")), servers.Options{})
	h.m.Start(context.Background())
	h.waitState("plain", servers.StateConnected)
	_, err := h.m.Complete(context.Background(), "plain", "ref/prompt", "greet", "who", "", nil)
	if !errors.Is(err, ErrNoCompletions) {
		t.Errorf("err = %v, want ErrNoCompletions", err)
	}
}
