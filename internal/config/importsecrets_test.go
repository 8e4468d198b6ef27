package config

import (
	"slices"
	"testing"
)

// Two servers that give GITHUB_TOKEN different values get different
// variables; the same value shares one; a value with a ${…} stays.
func TestReferenceSecretsNamesEachValueOnce(t *testing.T) {
	servers := []Server{
		{Name: "gh-work", Env: map[string]string{"GITHUB_TOKEN": "ghp_aaaaaaaaaaaaaaaaaaaaaaaa"}},
		{Name: "gh-home", Env: map[string]string{"GITHUB_TOKEN": "ghp_bbbbbbbbbbbbbbbbbbbbbbbb"}},
		{Name: "gh-copy", Env: map[string]string{"GITHUB_TOKEN": "ghp_aaaaaaaaaaaaaaaaaaaaaaaa", "PATH_X": "${HOME}/x"}},
	}
	out, found := ReferenceSecrets(servers)
	got := []string{out[0].Env["GITHUB_TOKEN"], out[1].Env["GITHUB_TOKEN"], out[2].Env["GITHUB_TOKEN"], out[2].Env["PATH_X"]}
	want := []string{"${GITHUB_TOKEN}", "${GH_HOME_GITHUB_TOKEN}", "${GITHUB_TOKEN}", "${HOME}/x"}
	if !slices.Equal(got, want) || len(found) != 3 {
		t.Errorf("got %q (%d found), want %q", got, len(found), want)
	}
	if servers[0].Env["GITHUB_TOKEN"] != "ghp_aaaaaaaaaaaaaaaaaaaaaaaa" {
		t.Error("the servers given were changed")
	}
}
