package app

import "strings"

// InitCommand is the name of otter's built-in command that has the model
// look at the project with the tools for it and write, or improve,
// AGENTS.md. Typed as a command (the front ends' prefix, then the name,
// then words of the person's own), it is sent as initPrompt; a custom
// command or skill of the same name takes its place.
const InitCommand = "init"

// initPrompt is what the model is sent for InitCommand, worded once for
// every front end.
const initPrompt = `Look at this project and write AGENTS.md at its root: the instructions a coding agent needs to work in it well.

Use the tools for the project to learn it (read_file, find_files and search_files; run_command only for what a command alone shows, such as the version of a tool):
- what the project is, and how it is laid out: the main directories and what lives where;
- how to build it, run its tests (all of them, and a single one), lint and format it: the exact commands, as its build files, scripts and CI configuration give them;
- the conventions its code follows that a glance does not show: naming, error handling, how tests are written, generated files not to edit by hand;
- anything that surprises a newcomer: required environment variables, services the tests need, steps that must run in order.

If AGENTS.md exists, read it first and improve it: keep what is right, correct what is out of date, add what is missing. Read the instruction files of other tools too (CLAUDE.md, GEMINI.md, .cursorrules, .cursor/rules, .github/copilot-instructions.md) and the README, and keep what matters from them.

Keep it short and specific to this project, in Markdown with a few headings: no generic advice, nothing a reader learns from a directory listing. Write it with write_file (edit_file for changes to an existing one), then say in a few lines what you wrote or changed.`

// builtinCommand is the prompt a typed /NAME ARGS of otter's own commands
// stands for; ok is false for any other name.
func builtinCommand(name, args string) (prompt string, ok bool) {
	if name != InitCommand {
		return "", false
	}
	prompt = initPrompt
	if a := strings.TrimSpace(args); a != "" {
		prompt += "\n\nThe user adds: " + a
	}
	return prompt, true
}
