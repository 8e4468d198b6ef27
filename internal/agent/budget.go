package agent

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/otter-sh/otter/internal/compact"
)

// This file shares the request among what goes into it besides the
// conversation: the servers' instructions are capped here, the tools'
// definitions in deferred.go, the answer's reserve in window.go.

// Caps of the MCP servers' instructions in the system prompt, which every
// request carries: all servers together may take a twentieth of the
// window, each at most maxInstructionTokens (8 KB) and at least
// minInstructionTokens, so that a server cannot crowd out the
// conversation (5 MB of instructions went into every request before).
const (
	maxInstructionTokens = 2048
	minInstructionTokens = 128
)

// instructionCap is how many bytes of instructions each of n servers may
// put in a request to a model with this window.
func instructionCap(window, n int) int {
	if n <= 0 {
		return 0
	}
	per := max(min(window/20/n, maxInstructionTokens), minInstructionTokens)
	return per * compact.BytesPerToken
}

// serverInstructions is the system prompt's part holding the connected
// servers' instructions, each cut to its share of the request with a note
// saying so.
func (a *Agent) serverInstructions() string {
	if a.opts.Instructions == nil {
		return ""
	}
	instr := a.opts.Instructions()
	names := make([]string, 0, len(instr))
	for n, s := range instr {
		if strings.TrimSpace(s) != "" {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	limit := instructionCap(a.Facts().ContextWindow, len(names))
	var b strings.Builder
	b.WriteString("\n# Instructions from the connected MCP servers\n")
	for _, n := range names {
		text := strings.TrimSpace(instr[n])
		if len(text) > limit {
			text = cutInstructions(text, limit)
		}
		fmt.Fprintf(&b, "\n## Server %q (its tools are named mcp__%s__…)\n%s\n", n, n, text)
	}
	return b.String()
}

// cutInstructions cuts text to about limit bytes, at a line end where one
// is near, with a note of what was left out.
func cutInstructions(text string, limit int) string {
	total := len(text)
	cut := text[:limit]
	if i := strings.LastIndexByte(cut, '\n'); i > limit/2 {
		cut = cut[:i]
	}
	for len(cut) > 0 && !utf8.ValidString(cut[max(0, len(cut)-utf8.UTFMax):]) {
		cut = cut[:len(cut)-1] // not in the middle of a character
	}
	return fmt.Sprintf("%s\n[otter cut this server's instructions to %d of their %d bytes to keep room for the conversation]", strings.TrimRight(cut, " \n"), len(cut), total)
}
