package webdata

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const exportDataSchema = `{
  "type": "object",
  "required": ["records"],
  "additionalProperties": false,
  "properties": {
    "records": {"type": "array", "items": {"type": "object"}, "description": "The records to write, one object each."},
    "format": {"type": "string", "enum": ["json", "jsonl", "csv"], "description": "File format; default from the filename's extension, else json."},
    "filename": {"type": "string", "description": "A relative path inside otter's export directory, e.g. \"products.csv\" or \"shop/2026-01.jsonl\"; default export-<time>.<format>."},
    "columns": {"type": "array", "items": {"type": "string"}, "description": "CSV only: the columns, in order; default every key of the records, sorted."},
    "overwrite": {"type": "boolean", "default": false, "description": "Replace an existing file of that name."}
  }
}`

type exportArgs struct {
	Records   []map[string]any `json:"records"`
	Format    string           `json:"format"`
	Filename  string           `json:"filename"`
	Columns   []string         `json:"columns"`
	Overwrite bool             `json:"overwrite"`
}

// ExportResult is export_data's result.
type ExportResult struct {
	Path    string `json:"path"` // absolute
	Format  string `json:"format"`
	Records int    `json:"records"`
	Bytes   int64  `json:"size_bytes"`
	Replace bool   `json:"replaced"` // an existing file was overwritten
}

func (k *toolkit) exportDataDef() def {
	return def{
		name:  NameExportData,
		title: "Export records to a file",
		description: "Write records (an array of objects) as JSON, JSONL or CSV into otter's export directory " +
			"([tools] export_dir); never outside it, and never over an existing file unless overwrite is true. Returns the path and size.",
		schema: exportDataSchema,
		annotations: &mcp.ToolAnnotations{
			Title:        "Export records to a file",
			ReadOnlyHint: false,
			// New files by default, but overwrite: true replaces an
			// existing file, whose old content is lost.
			DestructiveHint: ptr(true),
			IdempotentHint:  false,
			OpenWorldHint:   ptr(false),
		},
		run: k.exportData,
	}
}

func (k *toolkit) exportData(ctx context.Context, raw json.RawMessage) outcome {
	var a exportArgs
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep numbers as written (no float rounding of ids)
	if err := dec.Decode(&a); err != nil {
		return failed(invalidParams("", "%v", err))
	}
	if k.exportDir == "" {
		e := newError(CodeInternalError, "no export directory is configured", "set [tools] export_dir")
		e.Recoverable = false
		return failed(e)
	}
	format := a.Format
	ext := strings.TrimPrefix(strings.ToLower(path.Ext(a.Filename)), ".")
	if format == "" {
		switch ext {
		case "json", "jsonl", "csv":
			format = ext
		case "ndjson":
			format = "jsonl"
		default:
			format = "json"
		}
	}
	if a.Filename != "" && !filepath.IsLocal(filepath.FromSlash(a.Filename)) {
		return failed(invalidParams("filename", "%q is not a relative path inside the export directory (no absolute paths, no ..)", a.Filename))
	}
	name := a.Filename
	if name == "" {
		name = fmt.Sprintf("export-%s.%s", k.now().UTC().Format("20060102-150405.000"), format)
	} else if ext == "" {
		name += "." + format
	}
	name = filepath.FromSlash(name)
	if !filepath.IsLocal(name) {
		return failed(invalidParams("filename", "%q is not a relative path inside the export directory (no absolute paths, no ..)", a.Filename))
	}

	data, err := encodeRecords(a.Records, format, a.Columns)
	if err != nil {
		return failed(invalidParams("records", "%v", err))
	}
	res, err := k.writeExport(name, data, a.Overwrite)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrExist):
			e := newError(CodeInvalidParams, fmt.Sprintf("%s already exists in the export directory", name), "choose another filename, or set overwrite: true to replace it")
			e.Field = "filename"
			e.Details = map[string]any{"path": filepath.Join(k.exportDir, name)}
			return failed(e)
		case strings.Contains(err.Error(), "path escapes"):
			e := newError(CodeForbidden, fmt.Sprintf("%s leads outside the export directory (through a symbolic link)", name), "write to a plain path inside the export directory")
			e.Field = "filename"
			return failed(e)
		default:
			e := newError(CodeInternalError, fmt.Sprintf("writing %s: %v", filepath.Join(k.exportDir, name), err), "check that the export directory is writable")
			return failed(e)
		}
	}
	res.Format, res.Records = format, len(a.Records)
	return outcome{result: res}
}

// writeExport writes data to name inside the export directory through an
// os.Root, so no path (nor a symbolic link in it) can leave the directory.
func (k *toolkit) writeExport(name string, data []byte, overwrite bool) (*ExportResult, error) {
	if err := os.MkdirAll(k.exportDir, 0o755); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(k.exportDir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if dir := filepath.Dir(name); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	res := &ExportResult{Path: filepath.Join(k.exportDir, name), Bytes: int64(len(data))}
	if abs, err := filepath.Abs(res.Path); err == nil {
		res.Path = abs
	}
	if !overwrite {
		f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return nil, err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			root.Remove(name)
			return nil, err
		}
		return res, f.Close()
	}
	// Replace atomically: write a temporary file, then rename it over.
	if _, err := root.Lstat(name); err == nil {
		res.Replace = true
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".tmp-"+hex.EncodeToString(rnd[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		root.Remove(tmp)
		return nil, err
	}
	if err := root.Rename(tmp, name); err != nil {
		root.Remove(tmp)
		return nil, err
	}
	return res, nil
}

// encodeRecords renders records in format.
func encodeRecords(records []map[string]any, format string, columns []string) ([]byte, error) {
	var buf bytes.Buffer
	switch format {
	case "json":
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		if records == nil {
			records = []map[string]any{}
		}
		if err := enc.Encode(records); err != nil {
			return nil, err
		}
	case "jsonl":
		enc := json.NewEncoder(&buf)
		for _, r := range records {
			if err := enc.Encode(r); err != nil {
				return nil, err
			}
		}
	case "csv":
		if len(columns) == 0 {
			set := map[string]bool{}
			for _, r := range records {
				for key := range r {
					if !set[key] {
						set[key] = true
						columns = append(columns, key)
					}
				}
			}
			sort.Strings(columns)
		}
		w := csv.NewWriter(&buf)
		header := make([]string, len(columns))
		for i, c := range columns {
			header[i] = neutralizeFormula(c)
		}
		if err := w.Write(header); err != nil {
			return nil, err
		}
		row := make([]string, len(columns))
		for _, r := range records {
			for i, c := range columns {
				cell, err := csvCell(r[c])
				if err != nil {
					return nil, fmt.Errorf("column %q: %w", c, err)
				}
				row[i] = cell
			}
			if err := w.Write(row); err != nil {
				return nil, err
			}
		}
		w.Flush()
		if err := w.Error(); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown format %q (json, jsonl or csv)", format)
	}
	return buf.Bytes(), nil
}

// csvCell renders one value: strings as they are (formulas neutralised),
// null as empty, other values as JSON.
func csvCell(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return neutralizeFormula(v), nil
	default:
		b, err := json.Marshal(v)
		return string(b), err
	}
}

// neutralizeFormula defuses CSV formula injection (OWASP "CSV Injection"):
// a spreadsheet opening the file runs a cell that starts with = + - or @
// as a formula (=HYPERLINK(…) can send other cells to a remote site), and
// one starting with a tab or carriage return can hide such a start. Scraped
// text is chosen by whoever wrote the page, so such a cell gets a leading
// single quote, which spreadsheets show as text. Numbers are written as
// JSON and are not touched (-5 stays a number).
func neutralizeFormula(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
