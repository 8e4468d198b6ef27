package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPEditsRefuseAnInlineServersArray: with the servers written as an
// inline array, `otter mcp disable|enable|remove|add` change nothing and
// say where to edit by hand — disable used to turn all of MCP off, and
// remove to delete every server of the array.
func TestMCPEditsRefuseAnInlineServersArray(t *testing.T) {
	paths := configTestHome(t)
	file := paths.UserConfigFile()
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	mine := "[mcp]\nservers = [ {name=\"x\", command=\"echo\"}, {name=\"mem\", command=\"echo\"} ]\n"
	if err := os.WriteFile(file, []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"disable", "x"}, "write enabled = false inside its { … } by hand"},
		{[]string{"enable", "x"}, "write enabled = true inside its { … } by hand"},
		{[]string{"remove", "mem"}, "delete its { … } from the array by hand"},
		{[]string{"add", "y", "--", "echo", "hi"}, `add { name = "y", transport = "stdio", command = "echo", args = ["hi"] } to the array by hand`},
	} {
		stdout, _, err := runOtter(t, append([]string{"mcp"}, c.args...)...)
		wantExit(t, err, 2)
		if !strings.HasPrefix(err.Error(), file+":2: ") || !strings.Contains(err.Error(), "nothing changed") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("mcp %s: %v", strings.Join(c.args, " "), err)
		}
		if stdout != "" {
			t.Errorf("mcp %s said %q", strings.Join(c.args, " "), stdout)
		}
		if data, _ := os.ReadFile(file); string(data) != mine {
			t.Fatalf("mcp %s changed the file to\n%s", strings.Join(c.args, " "), data)
		}
	}
	stdout, _, err := runOtter(t, "mcp", "get", "x", "--json")
	if err != nil || !strings.Contains(stdout, `"enabled": true`) {
		t.Errorf("x after the refused edits: %v\n%s", err, stdout)
	}
}
