package tui

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/ansi/kitty"
	"github.com/charmbracelet/x/ansi/sixel"
	"github.com/charmbracelet/x/exp/teatest/v2"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/toolname"
)

// TestMain pins image detection for the tests that use the real
// environment (the harness's default Options): run from kitty or iTerm2,
// they would otherwise see images their assertions do not expect. The tmux
// tests share one otter binary, which testpeer.Run removes afterwards;
// run as an MCP server (testserver_test.go), the binary serves instead.
func TestMain(m *testing.M) {
	if mode := os.Getenv(testServerEnv); mode != "" {
		os.Exit(runTestServer(mode)) // testserver_test.go
	}
	os.Setenv("OTTER_IMAGES", "off")
	os.Exit(testpeer.Run(m))
}

func envOf(kv ...string) func(string) (string, bool) {
	env := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		env[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

func TestDetectImages(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want imageSupport
	}{
		// Nothing in the environment: ask the terminal about sixel.
		{nil, imageSupport{askSixel: true}},
		{[]string{"TERM", "xterm-256color", "COLORTERM", "truecolor"}, imageSupport{askSixel: true}},
		{[]string{"TERM", "xterm-kitty"}, imageSupport{proto: imagesKitty}},
		{[]string{"TERM", "xterm-256color", "KITTY_WINDOW_ID", "3"}, imageSupport{proto: imagesKitty}},
		{[]string{"TERM", "xterm-ghostty", "TERM_PROGRAM", "ghostty"}, imageSupport{proto: imagesKitty}},
		{[]string{"TERM_PROGRAM", "iTerm.app"}, imageSupport{proto: imagesITerm2}},
		{[]string{"LC_TERMINAL", "iTerm2"}, imageSupport{proto: imagesITerm2}},
		{[]string{"TERM_PROGRAM", "WezTerm", "TERM", "xterm-256color"}, imageSupport{proto: imagesITerm2}},
		// WezTerm started from kitty inherits KITTY_WINDOW_ID; TERM_PROGRAM says who draws.
		{[]string{"TERM_PROGRAM", "WezTerm", "KITTY_WINDOW_ID", "1"}, imageSupport{proto: imagesITerm2}},
		// tmux: off unless asked for, and then through its passthrough.
		{[]string{"TERM", "tmux-256color", "TMUX", "/tmp/tmux-0/default,1,0", "KITTY_WINDOW_ID", "1"}, imageSupport{}},
		{[]string{"TMUX", "/tmp/t,1,0", "OTTER_IMAGES", "kitty"}, imageSupport{proto: imagesKitty, tmux: true}},
		{[]string{"OTTER_IMAGES", "off", "TERM", "xterm-kitty"}, imageSupport{}},
		{[]string{"OTTER_IMAGES", "iterm2", "TERM", "xterm-kitty"}, imageSupport{proto: imagesITerm2}},
		{[]string{"OTTER_IMAGES", "Kitty"}, imageSupport{proto: imagesKitty}},
		{[]string{"OTTER_IMAGES", "sixel", "TERM", "xterm-kitty"}, imageSupport{proto: imagesSixel}},
		{[]string{"OTTER_IMAGES", "bogus", "TERM", "xterm-kitty"}, imageSupport{proto: imagesKitty}},
	} {
		if got := detectImages(envOf(c.env...)); got != c.want {
			t.Errorf("detectImages(%q) = %+v, want %+v", c.env, got, c.want)
		}
	}
}

func TestFitCells(t *testing.T) {
	for _, c := range []struct{ w, h, maxC, maxR, cols, rows int }{
		{200, 100, 94, 20, 20, 5},    // natural size
		{200, 100, 14, 20, 14, 4},    // narrower: scaled, aspect kept
		{1920, 1080, 94, 20, 71, 20}, // a screenshot: the height cap wins
		{10, 10, 94, 20, 1, 1},       // tiny: at least one cell
		{0, 0, 94, 20, 0, 0},         // not decodable
	} {
		cols, rows := fitCells(c.w, c.h, c.maxC, c.maxR)
		if cols != c.cols || rows != c.rows {
			t.Errorf("fitCells(%d×%d in %d×%d) = %d×%d, want %d×%d", c.w, c.h, c.maxC, c.maxR, cols, rows, c.cols, c.rows)
		}
	}
}

// testPNG is a w×h PNG.
func testPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			m.Set(x, y, color.RGBA{uint8(x), uint8(y), 200, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// runCmds runs cmd and the commands it batches, and returns their messages.
func runCmds(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, runCmds(c)...)
		}
		return out
	}
	return []tea.Msg{msg}
}

// rawOf returns the bytes of the tea.RawMsg among msgs.
func rawOf(t *testing.T, msgs []tea.Msg) string {
	t.Helper()
	for _, msg := range msgs {
		if r, ok := msg.(tea.RawMsg); ok {
			return fmt.Sprint(r.Msg)
		}
	}
	t.Fatalf("no tea.RawMsg among %#v", msgs)
	return ""
}

// imageModel returns a model of a w-column terminal whose one tool call
// returned a text and a PNG.
func imageModel(t *testing.T, env func(string) (string, bool), w int, data []byte) (*model, tea.Cmd) {
	t.Helper()
	m := newTestModel(t, &fakeHost{provider: Provider{Name: "fake", Model: "m"}}, Options{ImageDir: t.TempDir(), LookupEnv: env})
	m.Update(tea.WindowSizeMsg{Width: w, Height: 40})
	m.Update(chatEventMsg{turn: m.turn, ev: agent.ToolCallStarted{ID: "i", Name: "mcp__everything__get-tiny-image"}})
	_, cmd := m.Update(chatEventMsg{turn: m.turn, ev: agent.ToolCallFinished{ID: "i", Result: &tool.Result{Content: []sdk.Content{
		&sdk.TextContent{Text: "Here's the image:"}, &sdk.ImageContent{Data: data, MIMEType: "image/png"}}}}})
	return m, cmd
}

// imagesHost is a fake Part whose server "everything" has a read-only tool,
// name, answering with content; the model calls it once for the first
// message and then says "done".
func imagesHost(name string, content ...sdk.Content) *fakeHost {
	return &fakeHost{
		provider: Provider{Name: "fake", Model: "m1"},
		tools:    []tool.Entry{entry("everything", name, "", `{}`, &sdk.ToolAnnotations{ReadOnlyHint: true})},
		replies: []llmtest.Reply{
			{Calls: []llmtest.Call{{ID: "i", Name: toolname.Qualified("everything", name), Args: `{}`}}},
			{Text: []string{"done"}},
		},
		call: func(context.Context, string, json.RawMessage) (*tool.Result, error) {
			return &tool.Result{Content: content}, nil
		},
	}
}

var kittyAPC = regexp.MustCompile("\x1b_G([^;\x1b]*)(?:;([^\x1b]*))?\x1b\\\\")

// kittyCommands splits a raw sequence into kitty graphics commands: their
// options and the base64 payload of all chunks together.
func kittyCommands(s string) (opts []string, payload string) {
	for _, m := range kittyAPC.FindAllStringSubmatch(s, -1) {
		opts = append(opts, m[1])
		payload += m[2]
	}
	return opts, payload
}

// gridRow is row r of the placeholder grid of image id, cols wide.
func gridRow(id uint32, r, cols int) string {
	var b strings.Builder
	for c := range cols {
		b.WriteRune(kitty.Placeholder)
		b.WriteRune(kitty.Diacritic(r))
		b.WriteRune(kitty.Diacritic(c))
		b.WriteRune(kitty.Diacritic(int(id >> 24)))
	}
	return b.String()
}

// TestKittyInlineImage: in kitty the image is transmitted once as a
// virtual placement and the transcript draws its placeholder grid, in
// the image id's colour, below the text placeholder.
func TestKittyInlineImage(t *testing.T) {
	data := testPNG(t, 200, 100)
	m, cmd := imageModel(t, envOf("TERM", "xterm-kitty"), 100, data)
	msgs := runCmds(cmd)
	if len(msgs) != 1 {
		t.Fatalf("finishing the tool call gave %d messages, want one transmission: %#v", len(msgs), msgs)
	}
	_, cmd = m.Update(msgs[0])
	raw := rawOf(t, runCmds(cmd))

	opts, payload := kittyCommands(raw)
	if len(opts) == 0 || !strings.HasPrefix(raw, "\x1b_G") {
		t.Fatalf("the raw bytes are not a kitty graphics command: %q", raw)
	}
	for _, want := range []string{"a=T", "U=1", "i=16", "c=20", "r=5", "f=100", "q=2"} {
		if !strings.Contains(","+opts[0]+",", ","+want+",") {
			t.Errorf("the transmission's options %q lack %s", opts[0], want)
		}
	}
	png, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		t.Fatalf("the payload is not base64: %v", err)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(png))
	if err != nil || format != "png" || cfg.Width != 200 || cfg.Height != 100 {
		t.Fatalf("the terminal gets a %s %d×%d (%v), want the 200×100 png", format, cfg.Width, cfg.Height, err)
	}

	screen := m.render()
	plain := ansi.Strip(screen)
	if !strings.Contains(plain, "[image image/png, 200×100, ") || !strings.Contains(plain, "image 1 · /image 1 opens it") {
		t.Errorf("the placeholder text or the image's number is missing:\n%s", plain)
	}
	for r := range 5 {
		if !strings.Contains(screen, "    \x1b[38;5;16m"+gridRow(16, r, 20)+"\x1b[m") {
			t.Errorf("row %d of the 20×5 grid in colour 16 is missing:\n%q", r, screen)
		}
	}
	if strings.Contains(screen, gridRow(16, 5, 20)) || strings.Contains(plain, gridRow(16, 0, 21)) {
		t.Errorf("the grid is larger than 20×5")
	}
	if !strings.Contains(plain, "Here's the image:") {
		t.Errorf("the text of the result is gone:\n%s", plain)
	}

	// A narrower terminal moves the placement to a smaller size.
	_, cmd = m.Update(tea.WindowSizeMsg{Width: 20, Height: 40})
	opts, _ = kittyCommands(rawOf(t, runCmds(cmd)))
	if len(opts) != 1 || !strings.Contains(opts[0], "a=p") || !strings.Contains(opts[0], "U=1") ||
		!strings.Contains(opts[0], "i=16") || !strings.Contains(opts[0], "c=14") || !strings.Contains(opts[0], "r=4") {
		t.Errorf("resizing sent %q, want a put of image 16 at 14×4", opts)
	}
	screen = m.render()
	if !strings.Contains(screen, gridRow(16, 3, 14)+"\x1b[m") || strings.Contains(screen, gridRow(16, 4, 14)) {
		t.Errorf("after the resize the grid is not 14×4:\n%q", screen)
	}

	// /image puts a second, full-screen placement of the same image and
	// removes it after a key.
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	v := m.imageViewer(m.shown[0])
	var out bytes.Buffer
	v.SetStdin(&keyReader{out: &out, key: "\r", seen: make(chan string, 1)})
	v.SetStdout(&out)
	if err := v.Run(); err != nil {
		t.Fatal(err)
	}
	opts, payload = kittyCommands(out.String())
	if len(opts) != 2 || payload != "" || opts[0] != "q=2,i=16,p=2,c=20,a=p" || opts[1] != "q=2,i=16,p=2,d=i,a=d" {
		t.Errorf("the viewer sent %q (payload %d bytes), want a put of placement 2 at 20 columns and its deletion", opts, len(payload))
	}

	// /clear frees the image in the terminal.
	m.input.SetValue("/clear")
	_, cmd = m.Update(keyMsg("enter"))
	opts, _ = kittyCommands(rawOf(t, runCmds(cmd)))
	if len(opts) != 1 || !strings.Contains(opts[0], "a=d") || !strings.Contains(opts[0], "d=I") || !strings.Contains(opts[0], "i=16") {
		t.Errorf("/clear sent %q, want a delete of image 16", opts)
	}
}

// TestKittyImageThroughBubbleTea runs the whole program: the bytes that
// reach a kitty terminal hold the transmission and the placeholder grid
// with its colour and diacritics.
func TestKittyImageThroughBubbleTea(t *testing.T) {
	data := testPNG(t, 200, 100)
	b := imagesHost("get-tiny-image", &sdk.TextContent{Text: "Here's the image:"}, &sdk.ImageContent{Data: data, MIMEType: "image/png"})
	u := New(Options{ImageDir: t.TempDir(), LookupEnv: envOf("TERM", "xterm-kitty")})
	h := runHarness(t, u, newModel(u, b.build(t, u)), b,
		teatest.WithProgramOptions(tea.WithEnvironment([]string{"TERM=xterm-kitty", "CLICOLOR_FORCE=1"})))
	tm := h.tm
	h.enterLine("show me")
	h.waitFor("[image image/png, 200×100, ", "image 1 · /image 1 opens it", gridRow(16, 4, 20))

	var out bytes.Buffer
	teatest.WaitFor(t, io.TeeReader(tm.Output(), &out), func(bts []byte) bool {
		return bytes.Contains(bts, []byte("\x1b_Gf=100,q=2,i=16,p=1,U=1,c=20,r=5,a=T")) &&
			bytes.Contains(bts, []byte("38;5;16m"+gridRow(16, 0, 20))) &&
			bytes.Contains(bts, []byte(gridRow(16, 4, 20)))
	}, teatest.WithDuration(20*time.Second))
}

// TestITerm2Viewer: in iTerm2 the block names the viewer, and the viewer
// draws the image with OSC 1337 on the alternate screen, waits for a key,
// and gives the terminal back.
func TestITerm2Viewer(t *testing.T) {
	data := testPNG(t, 200, 100)
	m, cmd := imageModel(t, envOf("TERM_PROGRAM", "iTerm.app"), 100, data)
	if msgs := runCmds(cmd); len(msgs) != 0 {
		t.Errorf("iTerm2 sent something to the terminal on arrival: %#v", msgs)
	}
	plain := ansi.Strip(m.render())
	if !strings.Contains(plain, "image 1 · /image 1 opens it · ctrl+y the latest") || strings.ContainsRune(plain, kitty.Placeholder) {
		t.Fatalf("the block does not offer the viewer (or draws a kitty grid):\n%s", plain)
	}
	if _, cmd = m.Update(keyMsg("ctrl+y")); cmd == nil {
		t.Fatal("ctrl+y did nothing")
	}

	v := m.imageViewer(m.shown[0])
	var out bytes.Buffer
	in := &keyReader{out: &out, key: "q", seen: make(chan string, 1)}
	v.SetStdin(in)
	v.SetStdout(&out)
	v.SetStderr(io.Discard)
	if err := v.Run(); err != nil {
		t.Fatal(err)
	}
	var before string // the screen when the viewer started waiting
	select {
	case before = <-in.seen:
	default:
		t.Fatalf("the viewer returned without waiting for a key: %q", trim(out.String()))
	}
	seq := regexp.MustCompile("\x1b]1337;File=([^:\a]*):([^\a]*)\a").FindStringSubmatch(before)
	if seq == nil {
		t.Fatalf("no OSC 1337 File= image before the key was read: %q", trim(before))
	}
	if !strings.Contains(seq[1], "inline=1") || !strings.Contains(seq[1], fmt.Sprintf("size=%d", len(data))) ||
		!strings.Contains(seq[1], "width=20") || !strings.Contains(seq[1], "height=5") {
		t.Errorf("the image's arguments are %q", seq[1])
	}
	if got, _ := base64.StdEncoding.DecodeString(seq[2]); !bytes.Equal(got, data) {
		t.Error("the viewer's image is not the tool's")
	}
	if !strings.HasPrefix(before, ansi.SetModeAltScreenSaveCursor) || !strings.Contains(before, "image 1 · image image/png, 200×100") ||
		strings.Contains(before, ansi.ResetModeAltScreenSaveCursor) {
		t.Errorf("the viewer did not draw on the alternate screen and wait: %q", trim(before))
	}
	if all := out.String(); !strings.HasSuffix(all, ansi.ResetModeAltScreenSaveCursor) {
		t.Errorf("the viewer did not leave the alternate screen after the key: %q", trim(all))
	}
}

// TestSixelFromDeviceAttributes: with nothing in the environment otter
// asks the terminal for its primary device attributes at startup, and
// offers the viewer for images when the answer includes sixel (4).
func TestSixelFromDeviceAttributes(t *testing.T) {
	data := testPNG(t, 40, 20)
	b := imagesHost("img", &sdk.ImageContent{Data: data, MIMEType: "image/png"})
	h := start(t, b, Options{ImageDir: t.TempDir(), LookupEnv: envOf("TERM", "foot")})
	var out bytes.Buffer
	teatest.WaitFor(t, io.TeeReader(h.tm.Output(), &out), func(bts []byte) bool {
		return bytes.Contains(out.Bytes(), []byte(ansi.RequestPrimaryDeviceAttributes))
	}, teatest.WithDuration(20*time.Second))
	h.tm.Send(uv.PrimaryDeviceAttributesEvent{62, 4, 22}) // foot's answer
	h.enterLine("show me")
	h.waitFor("image 1 · /image 1 opens it")

	// A terminal without sixel keeps the placeholder.
	m := newTestModel(t, &fakeHost{}, Options{LookupEnv: envOf("TERM", "xterm-256color")})
	m.Update(uv.PrimaryDeviceAttributesEvent{62, 22})
	if m.imgs.proto != imagesOff {
		t.Errorf("a terminal without attribute 4 got %s images", m.imgs.proto)
	}
}

// TestSixelViewer: the viewer draws the image as sixel, scaled to fit the
// screen, before it waits for the key.
func TestSixelViewer(t *testing.T) {
	data := testPNG(t, 400, 200)
	m, _ := imageModel(t, envOf("OTTER_IMAGES", "sixel"), 100, data)
	m.Update(tea.WindowSizeMsg{Width: 30, Height: 40}) // the viewer gets 30 columns: 300 pixels
	v := m.imageViewer(m.shown[0])
	var out bytes.Buffer
	in := &keyReader{out: &out, key: "q", seen: make(chan string, 1)}
	v.SetStdin(in)
	v.SetStdout(&out)
	if err := v.Run(); err != nil {
		t.Fatal(err)
	}
	before := <-in.seen
	dcs := regexp.MustCompile("\x1bP0;1q([^\x1b]*)\x1b\\\\").FindStringSubmatch(before)
	if dcs == nil {
		t.Fatalf("no sixel image before the key was read: %q", trim(before))
	}
	img, err := new(sixel.Decoder).Decode(strings.NewReader(dcs[1] + "\x1b\\"))
	if err != nil {
		t.Fatalf("the viewer's sixel data does not decode: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 300 || b.Dy() != 150 {
		t.Errorf("sixel image is %dx%d pixels, want 300x150 (400x200 fitted to 30 columns)", b.Dx(), b.Dy())
	}
}

// TestImageViewerThroughBubbleTea: ctrl+y hands the terminal to the viewer
// and takes it back.
func TestImageViewerThroughBubbleTea(t *testing.T) {
	data := testPNG(t, 40, 20)
	b := imagesHost("img", &sdk.ImageContent{Data: data, MIMEType: "image/png"})
	h := start(t, b, Options{ImageDir: t.TempDir(), LookupEnv: envOf("LC_TERMINAL", "iTerm2")})
	h.enterLine("show me")
	h.waitFor("image 1 · /image 1 opens it")
	h.press("ctrl+y")
	teatest.WaitFor(t, h.tm.Output(), func(bts []byte) bool {
		return bytes.Contains(bts, []byte("\x1b]1337;File=")) && bytes.Contains(bts, []byte("inline=1"))
	}, teatest.WithDuration(20*time.Second))
	h.enterLine("/help") // the UI is back and takes input
	h.waitFor("Commands")
	h.press("end") // /help starts at its top; its keys are further down
	h.waitFor("ctrl+y view the latest image")
}

// TestImagesOff: with no image protocol (or OTTER_IMAGES=off) the block
// keeps the text placeholder only, nothing is sent to the terminal, and
// /image says why.
func TestImagesOff(t *testing.T) {
	data := testPNG(t, 200, 100)
	for _, env := range [][]string{{"TERM", "xterm-256color"}, {"TERM", "xterm-kitty", "OTTER_IMAGES", "off"}} {
		m, cmd := imageModel(t, envOf(env...), 100, data)
		if msgs := runCmds(cmd); len(msgs) != 0 {
			t.Errorf("%q: sent %#v to the terminal", env, msgs)
		}
		screen := m.render()
		plain := ansi.Strip(screen)
		if !strings.Contains(plain, "  ⎿ Here's the image:\n    [image image/png, 200×100, ") || strings.Contains(plain, "/image 1") ||
			strings.ContainsRune(screen, kitty.Placeholder) {
			t.Errorf("%q: want the text placeholder only:\n%s", env, plain)
		}
		m.input.SetValue("/image")
		m.Update(keyMsg("enter"))
		if plain = ansi.Strip(m.render()); !strings.Contains(plain, "This terminal shows no images") {
			t.Errorf("%q: /image does not say why:\n%s", env, plain)
		}
	}
}

// TestKittyInTmuxPassthrough: OTTER_IMAGES=kitty inside tmux wraps every
// chunk in tmux's passthrough.
func TestKittyInTmuxPassthrough(t *testing.T) {
	m, cmd := imageModel(t, envOf("TMUX", "/tmp/tmux-0/default,1,0", "OTTER_IMAGES", "kitty"), 100, testPNG(t, 64, 64))
	msgs := runCmds(cmd)
	if len(msgs) != 1 {
		t.Fatalf("got %#v", msgs)
	}
	_, cmd = m.Update(msgs[0])
	raw := rawOf(t, runCmds(cmd))
	if !strings.HasPrefix(raw, "\x1bPtmux;\x1b\x1b_G") || !strings.Contains(raw, "U=1") || !strings.HasSuffix(raw, "\x1b\x1b\\\x1b\\") {
		t.Errorf("the transmission is not wrapped for tmux: %q", trim(raw))
	}
}

// TestUndecodableImageInKitty: an image Go cannot decode keeps its text
// placeholder and gets no grid.
func TestUndecodableImageInKitty(t *testing.T) {
	junk := []byte("\x89PNG\r\n\x1a\n" + strings.Repeat("x", 2040))
	m, cmd := imageModel(t, envOf("TERM", "xterm-kitty"), 100, junk)
	if msgs := runCmds(cmd); len(msgs) != 0 {
		t.Errorf("sent %#v for an undecodable image", msgs)
	}
	screen := m.render()
	if plain := ansi.Strip(screen); !strings.Contains(plain, "[image image/png, 2.0 KB, saved to ") || strings.ContainsRune(screen, kitty.Placeholder) {
		t.Errorf("want the text placeholder only:\n%s", plain)
	}
}

func trim(s string) string {
	if len(s) > 400 {
		return s[:200] + "…" + s[len(s)-200:]
	}
	return s
}

// keyReader delivers one key, recording what the screen showed when it
// was asked for it (the viewer runs in the test's goroutine).
type keyReader struct {
	out  *bytes.Buffer
	key  string
	seen chan string
	once sync.Once
}

func (k *keyReader) Read(p []byte) (int, error) {
	n := 0
	k.once.Do(func() {
		k.seen <- k.out.String()
		n = copy(p, k.key)
	})
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}
