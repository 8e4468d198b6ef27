package oauth

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/ask"
)

func TestTerminalPrompterNoTerminal(t *testing.T) {
	req := ask.Login{Server: "remote", AuthURL: "http://127.0.0.1:9/authorize?x=1", CanPasteRedirect: true}
	var out strings.Builder
	p := newTerminalPrompter(nil, &out, false, func(string) string { return "" })
	_, err := p.Login(context.Background(), req)
	if le, ok := errors.AsType[*LoginRequiredError](err); !ok || le.Server != "remote" || !le.NeedsTerminal {
		t.Fatalf("no terminal, no $BROWSER: got %v, want a LoginRequiredError for remote that needs a terminal", err)
	}

	out.Reset()
	p = newTerminalPrompter(nil, &out, false, func(k string) string {
		if k == "BROWSER" {
			return "lynx"
		}
		return ""
	})
	reply, err := p.Login(context.Background(), req)
	if err != nil || reply.Choice != ask.LoginOpenBrowser {
		t.Fatalf("no terminal, $BROWSER set: %+v, %v", reply, err)
	}
	if !strings.Contains(out.String(), req.AuthURL) {
		t.Errorf("the URL is not printed: %q", out.String())
	}
}

func TestTerminalPrompterChoices(t *testing.T) {
	req := ask.Login{Server: "remote", AuthURL: "http://127.0.0.1:9/authorize?x=1", CanPasteRedirect: true}
	redirect := "http://127.0.0.1:5555/callback?code=c&state=s"
	for _, tc := range []struct {
		input string
		want  ask.LoginReply
	}{
		{"\n", ask.LoginReply{Choice: ask.LoginOpenBrowser}},
		{"u\n", ask.LoginReply{Choice: ask.LoginShowURL}},
		{"p\n  " + redirect + "  \n", ask.LoginReply{Choice: ask.LoginPasteRedirect, RedirectURL: redirect}},
		{"q\n", ask.LoginReply{Choice: ask.LoginLater}},
		// The redirect address pasted at the menu itself (over SSH, after
		// Enter found no browser) is taken, not refused.
		{redirect + "\n", ask.LoginReply{Choice: ask.LoginPasteRedirect, RedirectURL: redirect}},
		// A slip of the finger asks again.
		{"x\nu\n", ask.LoginReply{Choice: ask.LoginShowURL}},
		{"x\nx\nx\n", ask.LoginReply{Choice: ask.LoginLater}},
	} {
		var out strings.Builder
		p := newTerminalPrompter(strings.NewReader(tc.input), &out, true, func(string) string { return "" })
		got, err := p.Login(context.Background(), req)
		if err != nil || got != tc.want {
			t.Errorf("input %q: got %+v, %v; want %+v", tc.input, got, err, tc.want)
		}
		if !strings.Contains(out.String(), req.AuthURL) {
			t.Errorf("input %q: the URL is not shown: %q", tc.input, out.String())
		}
	}
}

func TestParsePasted(t *testing.T) {
	res, err := parsePasted(" http://127.0.0.1:5555/callback?code=abc&state=s1&iss=https%3A%2F%2Fas ", "s1")
	if err != nil || res.Code != "abc" || res.State != "s1" || res.Iss != "https://as" {
		t.Fatalf("parsePasted: %+v, %v", res, err)
	}
	for _, bad := range []string{"abc", "http://127.0.0.1:5555/callback?code=abc&state=other", "http://127.0.0.1:5555/callback?state=s1"} {
		if _, err := parsePasted(bad, "s1"); err == nil {
			t.Errorf("parsePasted(%q) accepted", bad)
		}
	}
	_, err = parsePasted("http://127.0.0.1:5555/callback?error=access_denied&error_description=no+thanks&state=s1", "s1")
	if err == nil || !strings.Contains(err.Error(), "access_denied") || !strings.Contains(err.Error(), "no thanks") {
		t.Errorf("an error redirect: %v", err)
	}
}

// TestOpenBrowserEnv: $BROWSER is a colon-separated list of commands tried
// in order; %s stands for the URL.
func TestOpenBrowserEnv(t *testing.T) {
	record := filepath.Join(t.TempDir(), "args")
	t.Setenv(envBrowser, "1")
	t.Setenv(envBrowserRecord, record)
	const url = "http://127.0.0.1:9/authorize?a=1&b=2"
	t.Setenv("BROWSER", "/nonexistent/browser --new-window:"+os.Args[0]+" --flag %s")
	if err := OpenBrowser(url); err != nil {
		t.Fatal(err)
	}
	// The stand-in writes its arguments and exits.
	var got []byte
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(record); err == nil {
			got = b
			break
		}
	}
	if want := "--flag\n" + url; string(got) != want {
		t.Fatalf("the browser got arguments %q, want %q", got, want)
	}

	t.Setenv("BROWSER", "/nonexistent/a:/nonexistent/b")
	if err := OpenBrowser(url); !errors.Is(err, ErrNoBrowser) {
		t.Fatalf("no usable $BROWSER: got %v, want ErrNoBrowser", err)
	}
}
