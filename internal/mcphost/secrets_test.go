package mcphost

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/servers"
)

// TestSecretsAreMaskedInStatusAndLogs: what otter shows about a server —
// its error (otter mcp list, table and --json, and /mcp print it), its
// stderr tail, its log lines — hides the secrets the configuration handed
// it: the password and api_key of its url, the values of its env and
// headers, even when the server echoes them. (Before, `cannot connect to
// http://user:<password>@…/mcp?api_key=<key>` was printed and logged in
// clear, and a server's stderr showed an echoed token verbatim.)
func TestSecretsAreMaskedInStatusAndLogs(t *testing.T) {
	const pw, key, token = "hunter2-pw", "k-0123456789", "tok-abcdefgh"
	echo := stdioServer(t, "echoer", "exit")
	echo.Env["OTTER_TEST_ECHO"] = token
	var logs bytes.Buffer
	h := newHarness(t, configOf(
		config.Server{Name: "remote", Transport: "http", URL: "http://bob:" + pw + "@127.0.0.1:1/mcp?api_key=" + key, StartupTimeout: dur(liveness),
			Headers: map[string]string{"X-Auth": "Bearer " + token}},
		echo,
	), servers.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	h.m.Start(context.Background())
	if err := h.m.WaitSettled(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"remote", "echoer"} {
		st, _ := h.m.Status(name)
		shown := st.Error + "\n" + strings.Join(st.StderrTail, "\n")
		for _, secret := range []string{pw, key, token} {
			if strings.Contains(shown, secret) {
				t.Errorf("%s shows the secret %q:\n%s", name, secret, shown)
			}
		}
		if !strings.Contains(shown, "****") {
			t.Errorf("%s: no **** where the secret was:\n%s", name, shown)
		}
	}
	for _, secret := range []string{pw, key, token} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the log shows the secret %q:\n%s", secret, logs.String())
		}
	}
}

// TestSecretsAreMaskedInServerLogs: a server's notifications/message log
// entry (shown by /mcp logs and -p's stream) that echoes a secret the
// configuration handed it shows "****" instead.
func TestSecretsAreMaskedInServerLogs(t *testing.T) {
	const token = "tok-abcdefgh"
	srv := stdioServer(t, "normal", "normal")
	srv.Env["OTTER_TEST_ECHO"] = token
	h := newHarness(t, configOf(srv), servers.Options{})
	h.m.Start(context.Background())
	h.waitState("normal", servers.StateConnected)
	h.callText("normal", "log", `{}`)
	logs := h.eventsOf(func(e servers.Event) bool { _, ok := e.(servers.ServerLog); return ok })
	if len(logs) != 1 || string(logs[0].(servers.ServerLog).Data) != `"disk almost full (token ****)"` {
		t.Errorf("log events = %+v, want the token masked", logs)
	}
}
