package tui

import (
	"bytes"
	"encoding/base64"
	"io"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// runViewer runs v against a fake terminal and returns what it drew before
// it waited for a key.
func runViewer(t *testing.T, v *imageViewer) string {
	t.Helper()
	var out bytes.Buffer
	in := &keyReader{out: &out, key: "q", seen: make(chan string, 1)}
	v.SetStdin(in)
	v.SetStdout(&out)
	v.SetStderr(io.Discard)
	if err := v.Run(); err != nil {
		t.Fatal(err)
	}
	select {
	case before := <-in.seen:
		return before
	default:
		t.Fatalf("the viewer returned without waiting for a key: %q", out.String())
		return ""
	}
}

// TestResourcePreviewDrawsImages: an image resource previewed in /mcp
// resources is drawn where the terminal can draw images — iTerm2's OSC
// 1337, kitty's graphics protocol with the image sent first — and is
// described, not drawn, where it cannot.
func TestResourcePreviewDrawsImages(t *testing.T) {
	t.Parallel()
	data := testPNG(t, 200, 100)
	res := &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{
		{URI: "demo://notes.txt", MIMEType: "text/plain", Text: "hello"},
		{URI: "demo://logo.png", MIMEType: "image/png", Blob: data},
	}}
	model := func(env func(string) (string, bool)) *model {
		m := newTestModel(t, &fakeHost{provider: Provider{Name: "fake", Model: "m"}}, Options{ImageDir: t.TempDir(), LookupEnv: env})
		m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
		return m
	}

	m := model(envOf("TERM_PROGRAM", "iTerm.app"))
	imgs := previewImages(res, m.ui.opts.ImageDir)
	if len(imgs) != 1 || imgs[0].w != 200 || imgs[0].h != 100 {
		t.Fatalf("previewImages = %+v, want the one 200×100 image", imgs)
	}
	v, err := m.previewImageViewer(imgs[0])
	if err != nil {
		t.Fatal(err)
	}
	drawn := runViewer(t, v)
	seq := regexp.MustCompile("\x1b]1337;File=([^:\a]*):([^\a]*)\a").FindStringSubmatch(drawn)
	if seq == nil || !strings.Contains(seq[1], "inline=1") {
		t.Fatalf("iTerm2: no inline OSC 1337 image drawn: %q", drawn)
	}
	if got, _ := base64.StdEncoding.DecodeString(seq[2]); !bytes.Equal(got, data) {
		t.Error("iTerm2: the drawn image is not the resource's")
	}
	if !strings.Contains(drawn, "resource image") {
		t.Errorf("the viewer's title does not say what it shows: %q", drawn)
	}

	m = model(envOf("TERM", "xterm-kitty"))
	img := previewImages(res, m.ui.opts.ImageDir)[0]
	v, err = m.previewImageViewer(img)
	if err != nil {
		t.Fatal(err)
	}
	opts, payload := kittyCommands(runViewer(t, v))
	if len(opts) < 2 || !strings.Contains(opts[0], "a=T") || payload == "" {
		t.Fatalf("kitty: the image is not sent before it is put: %q", opts)
	}
	if last := opts[len(opts)-1]; !strings.Contains(last, "a=p") {
		t.Errorf("kitty: the last command %q does not put the image", last)
	}

	m = model(envOf("TERM", "dumb"))
	img = previewImages(res, m.ui.opts.ImageDir)[0]
	if _, err := m.previewImageViewer(img); err == nil || !strings.Contains(err.Error(), "shows no images") {
		t.Errorf("a terminal without images: err = %v, want the no-images explanation", err)
	}
}
