package cli

// Pinned tool definitions at a shell: `otter mcp diff SERVER` shows what a
// server changed since otter pinned its tools, `otter mcp approve SERVER
// [TOOL…]` takes the changes; `otter mcp list`, `tools`, `call` and `-p`
// say what is held back. The core (internal/pins, mcphost) decides; this
// file words it.

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/termtext"
)

// ReviewHint says how to review and take a server's held-back changes,
// at a shell.
func ReviewHint(server string) string { return reviewHint(server) }

func reviewHint(server string) string {
	s := shellWord(server)
	return fmt.Sprintf("`otter mcp diff %s` shows the change, `otter mcp approve %s` takes it", s, s)
}

// shellWord quotes name for a shell line when it needs it.
func shellWord(name string) string {
	if name != "" && strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-+/:@", r))
	}) < 0 {
		return name
	}
	return "'" + strings.ReplaceAll(termtext.Line(name), "'", `'\''`) + "'"
}

// heldBackNote is `otter mcp list`'s note on what a server holds back:
// "1 tool changed, 1 new tool, instructions changed (held back: `otter
// mcp diff NAME`)"; "" when nothing is.
func heldBackNote(st app.ServerStatus) string {
	changed, added := 0, 0
	for _, h := range st.HeldBack {
		if h.New {
			added++
		} else {
			changed++
		}
	}
	var parts []string
	if changed > 0 {
		parts = append(parts, plural(changed, "tool")+" changed")
	}
	if added > 0 {
		parts = append(parts, fmt.Sprintf("%d new %s", added, pluralWord(added, "tool")))
	}
	if st.InstructionsHeldBack {
		parts = append(parts, "instructions changed")
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ", ") + " since pinned, held back: " + reviewHint(st.Name)
}

func pluralWord(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// heldBackLines are the lines `otter -p` prints on stderr for a server's
// held-back tools and instructions, one each.
func heldBackLines(st app.ServerStatus) []string {
	var out []string
	hint := reviewHint(st.Name)
	for _, h := range st.HeldBack {
		why := "its definition changed since it was pinned"
		if h.New {
			why = "the server added it since its tools were pinned"
		}
		out = append(out, fmt.Sprintf("tool %s of MCP server %s is held back, not offered to the model: %s; %s",
			termtext.Line(h.Name), termtext.Line(st.Name), why, hint))
	}
	if st.InstructionsHeldBack {
		out = append(out, fmt.Sprintf("the instructions of MCP server %s changed since they were pinned and are not sent to the model; %s",
			termtext.Line(st.Name), hint))
	}
	return out
}

// MCPPinsOptions are the options of `otter mcp diff` and `otter mcp approve`.
type MCPPinsOptions struct {
	Server string
	Tools  []string // approve: the tools to take; none: every change
	JSON   bool
}

// changeJSON is one change in `otter mcp diff --json`.
type changeJSON struct {
	Kind   string `json:"kind"` // changed, new, instructions
	Tool   string `json:"tool,omitempty"`
	Pinned string `json:"pinned"`
	Now    string `json:"now"`
	Diff   string `json:"diff"`
}

// RunMCPDiff starts one server and shows what its tools and instructions
// changed since they were pinned, as unified diffs.
func RunMCPDiff(ctx context.Context, f *Factory, o MCPPinsOptions) error {
	s, err := startMCPSession(ctx, f, mcpSessionOptions{conn: &ConnOptions{}, only: o.Server})
	if err != nil {
		return err
	}
	defer s.close()
	changes, err := s.app.ToolChanges(o.Server)
	if err != nil {
		return ExitCode(2, err)
	}
	if o.JSON {
		out := make([]changeJSON, 0, len(changes))
		for _, c := range changes {
			out = append(out, changeJSON{Kind: string(c.Kind), Tool: c.Tool, Pinned: c.Pinned, Now: c.Now, Diff: c.Diff()})
		}
		return writeJSON(f.IO.Out, out)
	}
	if len(changes) == 0 {
		fmt.Fprintf(f.IO.ErrOut, "otter: MCP server %s sends the tools and instructions that were pinned; nothing is held back\n", termtext.Line(o.Server))
		return nil
	}
	for _, c := range changes {
		// What a server sent is shown with every character visible.
		if _, err := io.WriteString(f.IO.Out, termtext.Visible(c.Diff())); err != nil {
			return err
		}
	}
	fmt.Fprintf(f.IO.ErrOut, "otter: %s held back; `otter mcp approve %s` takes %s\n",
		changeCount(changes), shellWord(o.Server), map[bool]string{true: "it", false: "them all, or name the tools to take"}[len(changes) == 1])
	return nil
}

// changeCount says how many changes there are: "2 changes".
func changeCount(changes []app.ToolChange) string { return plural(len(changes), "change") }

// RunMCPApprove starts one server and takes its current definitions of the
// named tools (every held-back tool and its instructions when none is
// named) as their pins.
func RunMCPApprove(ctx context.Context, f *Factory, o MCPPinsOptions) error {
	s, err := startMCPSession(ctx, f, mcpSessionOptions{conn: &ConnOptions{}, only: o.Server})
	if err != nil {
		return err
	}
	defer s.close()
	taken, err := s.app.ApproveTools(ctx, o.Server, o.Tools)
	if err != nil {
		return ExitCode(2, err)
	}
	if len(taken) == 0 {
		fmt.Fprintf(f.IO.Out, "MCP server %s holds nothing back: its tools and instructions are the pinned ones.\n", termtext.Line(o.Server))
		return nil
	}
	var what []string
	for _, c := range taken {
		switch c.Kind {
		case app.InstructionsChanged:
			what = append(what, "its instructions")
		case app.ToolAdded:
			what = append(what, termtext.Line(c.Tool)+" (new)")
		default:
			what = append(what, termtext.Line(c.Tool)+" (changed)")
		}
	}
	_, err = fmt.Fprintf(f.IO.Out, "Approved for MCP server %s: %s; offered to the model from now on.\n", termtext.Line(o.Server), strings.Join(what, ", "))
	return err
}
