package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/otter-sh/otter/internal/cli"
	"github.com/otter-sh/otter/internal/termtext"
)

// JSON errors. A script that runs otter with --json (or -p with
// --output-format json or stream-json) reads stdout as JSON; when the
// command fails before it printed anything there — a wrong flag, a
// combination of flags that cannot work, a config that does not load —
// main writes the error there as JSON too, besides the line on stderr,
// so that the script never gets an empty stdout and a parse error of its
// own. Whatever a command printed itself (-p's result object, `mcp call
// --json`'s result of a tool that failed) is not followed by a second one.

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// jsonOutput says which JSON output the command line asked for: "prompt"
// for -p's --output-format other than text (json2 is a JSON format
// mistyped), "object" for a command's --json, "" for none. It reads the
// flags cobra parsed and, since parsing stops at the first bad flag, the
// raw arguments too.
func jsonOutput(cmd *cobra.Command, args []string) string {
	if args = args[:argsEnd(args)]; cmd != nil {
		if f := cmd.Flags().Lookup("output-format"); f != nil && f.Changed && f.Value.String() != cli.FormatText {
			return "prompt"
		}
	}
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--output-format="); ok && v != cli.FormatText {
			return "prompt"
		}
		if a == "--output-format" && i+1 < len(args) && args[i+1] != cli.FormatText {
			return "prompt"
		}
	}
	if cmd != nil {
		if f := cmd.Flags().Lookup("json"); f != nil && f.Changed && f.Value.String() == "true" {
			return "object"
		}
	}
	if slices.Contains(args, "--json") || slices.Contains(args, "--json=true") {
		return "object"
	}
	return ""
}

// argsEnd is where the flags of args end ("--": the rest are arguments).
func argsEnd(args []string) int {
	if i := slices.Index(args, "--"); i >= 0 {
		return i
	}
	return len(args)
}

// printJSONError writes msg, the error main also prints on stderr, as the
// JSON output kind asks for: -p's result object, or {"is_error": true,
// "error": …}.
func printJSONError(w io.Writer, kind, msg string) {
	w = termtext.Raw(w) // JSON escapes what it must; it stays exact
	switch kind {
	case "prompt":
		cli.PrintPromptError(w, msg)
	case "object":
		data, _ := json.Marshal(struct {
			IsError bool   `json:"is_error"`
			Error   string `json:"error"`
		}{true, msg})
		fmt.Fprintf(w, "%s\n", data)
	}
}
