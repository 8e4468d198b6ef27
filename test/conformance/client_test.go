package conformance

import (
	"slices"
	"strings"
	"testing"
)

// mustPass are the client scenarios otter must pass; they may never be
// baselined.
var mustPass = []string{"initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"}

// TestClientScenarios runs every client scenario of the suite, except the
// auth/* ones (auth_test.go), through adapter.sh and otter's headless CLI.
// A scenario fails the test when it fails and is not in baseline.txt, or
// passes and is.
func TestClientScenarios(t *testing.T) {
	client, _ := listScenarios(t)
	for _, name := range client {
		if strings.HasPrefix(name, "auth/") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			// Sequential: sse-retry measures the client's reconnection
			// timing, which a busy machine would blur.
			checkBaseline(t, name, runClientScenario(t, name))
		})
	}
}

// TestMustPassScenarios guards the scenarios otter promises to pass: the
// suite still has them, and nobody baselined them away.
func TestMustPassScenarios(t *testing.T) {
	client, _ := listScenarios(t)
	base := loadBaseline(t)
	for _, name := range mustPass {
		if !slices.Contains(client, name) {
			t.Errorf("the conformance suite no longer has the client scenario %s", name)
		}
		if reason, ok := base[name]; ok {
			t.Errorf("%s must pass; it may not be in baseline.txt (listed because: %s)", name, reason)
		}
	}
}

// TestBaselineNamesKnownScenarios keeps baseline.txt honest: every entry
// names a scenario the suite has.
func TestBaselineNamesKnownScenarios(t *testing.T) {
	client, server := listScenarios(t)
	for name := range loadBaseline(t) {
		if !slices.Contains(client, name) && !slices.Contains(server, name) {
			t.Errorf("baseline.txt lists %s, which the conformance suite does not have: remove it", name)
		}
	}
}
