package servers

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestURLElicitationErrorText(t *testing.T) {
	e := &URLElicitationError{What: "mcp__s__t", again: "call again", Message: "URL elicitation required"}
	for i := range 7 {
		e.Elicitations = append(e.Elicitations, URLElicitation{URL: fmt.Sprintf("https://e.com/%d", i)})
	}
	want := "mcp__s__t: the server needs you to open https://e.com/0, https://e.com/1, https://e.com/2, https://e.com/3, https://e.com/4 and 2 more in a browser, then call again"
	if got := e.Error(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	e.Elicitations = e.Elicitations[:2]
	e.Elicitations[1].Message = "\u202eevil\u202c\x1b]8;;x\x07 two\r\nlines"
	want = "mcp__s__t: the server needs you to open https://e.com/0 and https://e.com/1 (evil two lines) in a browser, then call again"
	if got := e.Error(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	long := printable(strings.Repeat("é", urlElicitMaxText))
	if len(long) > urlElicitMaxText+len("…") || !strings.HasSuffix(long, "é…") {
		t.Errorf("long text cut to %d bytes: …%s", len(long), long[len(long)-10:])
	}
	if ParseURLElicitation(errors.New("x"), "w", "s", "") != nil ||
		ParseURLElicitation(&jsonrpc.Error{Code: sdk.CodeURLElicitationRequired, Message: "m"}, "w", "s", "") != nil {
		t.Error("an error without URLs is not a URLElicitationError")
	}
}
