package skill

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/tool"
)

// ToolName is the built-in tool that loads a skill.
const ToolName = "skill"

// Tool returns the built-in tool through which the model loads one of
// skills (its instructions and the list of its bundled files) or reads one
// bundled file. skills is called on each use, so that the list follows the
// user's folders without rebuilding the tool set.
func Tool(skills func() []Skill) tool.Tool { return &skillTool{skills: skills} }

type skillTool struct{ skills func() []Skill }

var inputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "name": {"type": "string", "description": "The skill's name, as listed under Available skills."},
    "file": {"type": "string", "description": "A file the skill bundles, by its path relative to the skill's folder, as its instructions name it. Leave out to load the skill's instructions."}
  },
  "required": ["name"],
  "additionalProperties": false
}`)

func (t *skillTool) Info() tool.Info {
	return tool.Info{
		Name:        ToolName,
		Title:       "Load a skill",
		Description: "Loads one of the available skills: its instructions and the list of files it bundles. With file, reads one of those files.",
		InputSchema: inputSchema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "Load a skill"},
	}
}

func (t *skillTool) Call(_ context.Context, args json.RawMessage) (*tool.Result, error) {
	var in struct {
		Name string `json:"name"`
		File string `json:"file"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return errorResult("the arguments are not a JSON object with name (and file): " + err.Error()), nil
	}
	var s *Skill
	var names []string
	for _, k := range t.skills() {
		names = append(names, k.Name)
		if k.Name == in.Name {
			s = &k
		}
	}
	if s == nil {
		return errorResult(fmt.Sprintf("there is no skill %q; the skills are: %s", in.Name, strings.Join(names, ", "))), nil
	}
	if in.File != "" {
		text, err := s.ReadFile(in.File)
		if err != nil {
			return errorResult(err.Error()), nil
		}
		return tool.TextResult(text), nil
	}
	body, err := s.Body()
	if err != nil {
		return errorResult(fmt.Sprintf("skill %s cannot be read: %v", s.Name, err)), nil
	}
	files, _ := s.Files()
	var b strings.Builder
	fmt.Fprintf(&b, "# Skill: %s\n\n%s\n", s.Name, body)
	if len(files) > 0 {
		fmt.Fprintf(&b, "\nFiles bundled with this skill (read one with the %s tool, name %q and file):\n", ToolName, s.Name)
		for _, f := range files {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	return tool.TextResult(b.String()), nil
}

func errorResult(s string) *tool.Result {
	r := tool.TextResult(s)
	r.IsError = true
	return r
}
