package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigValidateRefusesWhatOtherCommandsRefuse: `otter config
// validate` and `otter mcp list` run one validation, so a rate limit that
// the web-data tools refuse when they start fails both, each naming the
// file and line. (Before, validate passed these with exit 0 and `mcp list`
// exited 2 with no file or line.)
func TestConfigValidateRefusesWhatOtherCommandsRefuse(t *testing.T) {
	configTestHome(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, toml string
		want       string
	}{
		{"negative burst", "[tools]\nmax_output_chars = 1000\n\n[tools.rate_limits.scrape_page]\nburst = -1\n", ":5: tools.rate_limits.scrape_page.burst = -1 is not a number of calls"},
		{"unknown tool", "[tools.rate_limits.scrape_pages]\nrpm = 5\n", `:1: [tools.rate_limits.scrape_pages]: no built-in tool has that name (did you mean "scrape_page"?`},
		{"infinite rpm", "[tools.rate_limits.get_status]\nrpm = inf\n", ":2: tools.rate_limits.get_status.rpm = +Inf is not a rate"},
	} {
		file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".toml")
		if err := os.WriteFile(file, []byte(tc.toml), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"config", "validate", file}, {"config", "validate", "--config", file}, {"mcp", "list", "--config", file}} {
			_, _, err := runOtter(t, args...)
			wantExit(t, err, 2)
			if !strings.Contains(err.Error(), file+tc.want) {
				t.Errorf("%s: otter %s: %v\nwant …%s%s…", tc.name, strings.Join(args, " "), err, file, tc.want)
			}
		}
	}
}
