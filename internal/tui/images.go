package tui

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	_ "image/gif" // decoders for image.Decode and image.DecodeConfig
	_ "image/jpeg"
	_ "image/png"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/ansi/iterm2"
	"github.com/charmbracelet/x/ansi/kitty"
	"github.com/charmbracelet/x/ansi/sixel"
	"github.com/charmbracelet/x/term"
	"golang.org/x/image/draw"
)

// Images in tool results are always saved and named by a text placeholder.
// Where the terminal speaks an image protocol they are also shown:
//
//   - kitty graphics (kitty, Ghostty): inline in the transcript. The image
//     is transmitted once as a virtual placement (U=1) and the transcript
//     draws a grid of Unicode placeholder cells where it belongs, so it
//     scrolls and redraws with the text like any other line.
//   - iTerm2 inline images (iTerm2, WezTerm) and sixel (foot, mlterm,
//     xterm -ti vt340, Windows Terminal, …): these are drawn at the cursor
//     and cannot share the cell grid with a redrawing TUI, so the transcript
//     offers a viewer (/image N, ctrl+y) that takes over the terminal until
//     a key is pressed. Sixel support is learnt from the terminal's primary
//     device attributes (attribute 4), asked for at startup.

// imageProtocol is how the terminal shows images.
type imageProtocol int

const (
	imagesOff    imageProtocol = iota // the text placeholder only
	imagesKitty                       // inline, kitty graphics with Unicode placeholders
	imagesITerm2                      // a viewer, iTerm2 inline image protocol
	imagesSixel                       // a viewer, sixel graphics
)

func (p imageProtocol) String() string {
	switch p {
	case imagesKitty:
		return "kitty"
	case imagesITerm2:
		return "iterm2"
	case imagesSixel:
		return "sixel"
	}
	return "off"
}

// imageSupport is what detectImages found.
type imageSupport struct {
	proto imageProtocol
	tmux  bool // inside tmux: sequences go through its passthrough
	// askSixel: nothing was found in the environment, so ask the terminal
	// whether it speaks sixel (its primary device attributes).
	askSixel bool
}

// detectImages decides from the environment how images can be shown.
// OTTER_IMAGES=kitty|iterm2|sixel|off overrides the detection. Inside tmux the
// answer is "off" unless overridden: passthrough needs `allow-passthrough
// on` and a terminal behind tmux that speaks the protocol, which otter
// cannot see from inside.
func detectImages(lookup func(string) (string, bool)) imageSupport {
	get := func(k string) string { v, _ := lookup(k); return v }
	_, inTmux := lookup("TMUX")
	switch v := strings.ToLower(strings.TrimSpace(get("OTTER_IMAGES"))); v {
	case "":
	case "kitty":
		return imageSupport{proto: imagesKitty, tmux: inTmux}
	case "iterm2", "iterm":
		return imageSupport{proto: imagesITerm2, tmux: inTmux}
	case "off", "none", "0", "false", "no":
		return imageSupport{}
	case "sixel":
		return imageSupport{proto: imagesSixel, tmux: inTmux}
	default:
		slog.Warn("OTTER_IMAGES: unknown value, detecting the terminal instead", "value", v, "valid", "kitty, iterm2, sixel, off")
	}
	if inTmux {
		return imageSupport{}
	}
	termProgram := get("TERM_PROGRAM")
	switch strings.ToLower(termProgram) {
	case "ghostty":
		return imageSupport{proto: imagesKitty}
	case "iterm.app", "wezterm":
		return imageSupport{proto: imagesITerm2}
	}
	if t := get("TERM"); t == "xterm-kitty" || t == "xterm-ghostty" || get("KITTY_WINDOW_ID") != "" {
		return imageSupport{proto: imagesKitty}
	}
	if get("LC_TERMINAL") == "iTerm2" {
		return imageSupport{proto: imagesITerm2}
	}
	return imageSupport{askSixel: true}
}

// sixelAttribute is the primary device attribute of a terminal that
// speaks sixel.
const sixelAttribute = 4

// deviceAttributes learns from the terminal's answer to the primary device
// attributes request whether it speaks sixel.
func (m *model) deviceAttributes(da uv.PrimaryDeviceAttributesEvent) {
	if !m.imgs.askSixel || m.imgs.proto != imagesOff {
		return
	}
	m.imgs.askSixel = false
	if slices.Contains(da, sixelAttribute) {
		m.imgs.proto = imagesSixel
	}
}

// toolImage is one image of a tool result.
type toolImage struct {
	n      int    // 1-based number in this session: /image N
	mime   string // as the server said
	data   []byte
	path   string // where it was saved; "" when not saved
	w, h   int    // pixels; 0 when the format is not decodable
	format string // "png", "jpeg", "gif"; "" when not decodable
	label  string // the text placeholder

	// kitty
	id         uint32 // image id, encoded in the placeholder cells' colour
	cols, rows int    // placement size in cells; 0 when not shown inline
	sent       bool   // the terminal has the image
}

// newToolImage saves data under dir and describes it.
func newToolImage(mimeType string, data []byte, dir string) *toolImage {
	img := &toolImage{mime: mimeType, data: data}
	if cfg, format, err := image.DecodeConfig(bytes.NewReader(data)); err == nil && cfg.Width > 0 && cfg.Height > 0 {
		img.w, img.h, img.format = cfg.Width, cfg.Height, format
	}
	detail := ""
	if img.w > 0 {
		detail = fmt.Sprintf("%d×%d", img.w, img.h)
	}
	img.label, img.path = placeholder("image", mimeType, detail, data, dir)
	return img
}

const (
	// imageMaxRows caps the height of an inline image in the transcript.
	imageMaxRows = 20
	// A terminal cell is taken as 10×20 pixels to size images in cells
	// (the terminal's real cell size is not known).
	cellPixelsW, cellPixelsH = 10, 20
	// kittyMaxCells is how many rows and columns the placeholder
	// diacritics can address.
	kittyMaxCells = 297
	// maxInlinePixels bounds what is decoded to show inline (a 40
	// megapixel image takes 160 MB decoded); larger ones keep the
	// placeholder.
	maxInlinePixels = 40_000_000
)

// fitCells returns the cells a w×h pixel image takes at its natural size,
// scaled down (keeping the aspect ratio) to fit maxCols×maxRows.
func fitCells(w, h, maxCols, maxRows int) (cols, rows int) {
	if w <= 0 || h <= 0 || maxCols <= 0 || maxRows <= 0 {
		return 0, 0
	}
	c, r := float64(w)/cellPixelsW, float64(h)/cellPixelsH
	s := min(1, float64(maxCols)/c, float64(maxRows)/r)
	cols = min(max(int(math.Round(c*s)), 1), maxCols)
	rows = min(max(int(math.Round(r*s)), 1), maxRows)
	return cols, rows
}

// inlineCells is the size of an inline image in a transcript w columns
// wide (the block indents it by 4).
func inlineCells(img *toolImage, w int) (cols, rows int) {
	return fitCells(img.w, img.h, min(max(w, 20)-6, kittyMaxCells), imageMaxRows)
}

// kittyID numbers the images of a session: the low byte (16…255, a
// 256-colour index that survives colour down-sampling) is the placeholder
// cells' foreground colour, the high byte their third diacritic.
func kittyID(n int) uint32 {
	n--
	return uint32(n/240%256)<<24 | uint32(16+n%240)
}

// kittyGrid returns the placeholder cells that show image id in a
// cols×rows placement, one line per row, each line indented.
func kittyGrid(id uint32, cols, rows int, indent string) []string {
	fg := ansi.NewStyle().ForegroundColor(ansi.IndexedColor(id & 0xff)).String()
	msb := kitty.Diacritic(int(id >> 24))
	lines := make([]string, rows)
	var b strings.Builder
	for r := range rows {
		b.Reset()
		b.WriteString(indent + fg)
		for c := range cols {
			b.WriteRune(kitty.Placeholder)
			b.WriteRune(kitty.Diacritic(r))
			b.WriteRune(kitty.Diacritic(c))
			b.WriteRune(msb)
		}
		b.WriteString(ansi.ResetStyle)
		lines[r] = b.String()
	}
	return lines
}

// kittyTransmit returns the sequence that sends the image to the terminal
// (a=T) with a virtual placement (U=1) of cols×rows cells.
func kittyTransmit(data []byte, id uint32, cols, rows int, tmux bool) (string, error) {
	m, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return "", fmt.Errorf("decoding the image: %w", err)
	}
	// Transmission must be set: EncodeGraphics sends no data without it.
	o := &kitty.Options{Action: kitty.TransmitAndPut, Transmission: kitty.Direct, Format: kitty.PNG, ID: int(id),
		PlacementID: 1, VirtualPlacement: true, Columns: cols, Rows: rows, Quiet: 2, Chunk: true}
	if tmux {
		o.ChunkFormatter = ansi.TmuxPassthrough
	}
	var b strings.Builder
	if err := kitty.EncodeGraphics(&b, m, o); err != nil {
		return "", fmt.Errorf("encoding the image for kitty: %w", err)
	}
	return b.String(), nil
}

// kittyCommand returns a kitty graphics command without data (a put or a
// delete), wrapped for tmux when needed.
func kittyCommand(o *kitty.Options, tmux bool) string {
	o.Quiet = 2
	var b strings.Builder
	_ = kitty.EncodeGraphics(&b, nil, o) // no image, no file: cannot fail
	if tmux {
		return ansi.TmuxPassthrough(b.String())
	}
	return b.String()
}

// kittyPlace moves the virtual placement of an image to a new size.
func kittyPlace(id uint32, cols, rows int, tmux bool) string {
	return kittyCommand(&kitty.Options{Action: kitty.Put, ID: int(id), PlacementID: 1,
		VirtualPlacement: true, Columns: cols, Rows: rows}, tmux)
}

type (
	// kittyReadyMsg carries an encoded transmission to the event loop.
	kittyReadyMsg struct {
		it         *toolItem
		img        *toolImage
		seq        string
		cols, rows int // the placement size seq was made for
	}
	kittyFailedMsg struct {
		it  *toolItem
		img *toolImage
		err error
	}
	imageViewedMsg struct{ err error }
)

// addImages numbers the images of a finished tool call and, in kitty,
// starts their transmission (encoding runs off the event loop).
func (m *model) addImages(it *toolItem, imgs []*toolImage) tea.Cmd {
	var cmds []tea.Cmd
	for _, img := range imgs {
		m.shown = append(m.shown, img)
		img.n = len(m.shown)
		if m.imgs.proto != imagesKitty || img.format == "" || img.w*img.h > maxInlinePixels {
			continue
		}
		img.id = kittyID(img.n)
		img.cols, img.rows = inlineCells(img, m.tr.width)
		data, id, cols, rows, tmux := img.data, img.id, img.cols, img.rows, m.imgs.tmux
		cmds = append(cmds, func() tea.Msg {
			seq, err := kittyTransmit(data, id, cols, rows, tmux)
			if err != nil {
				return kittyFailedMsg{it, img, err}
			}
			return kittyReadyMsg{it, img, seq, cols, rows}
		})
	}
	it.images = imgs
	return tea.Batch(cmds...)
}

// imageMsg handles the messages of this file; ok is false for others.
func (m *model) imageMsg(msg tea.Msg) (cmd tea.Cmd, ok bool) {
	switch msg := msg.(type) {
	case kittyReadyMsg:
		img := msg.img
		if !slices.Contains(m.shown, img) {
			return nil, true // forgotten (/clear) while it was encoded
		}
		img.sent = true
		seq := msg.seq
		if img.cols != msg.cols || img.rows != msg.rows { // resized while encoding
			seq += kittyPlace(img.id, img.cols, img.rows, m.imgs.tmux)
		}
		return tea.Raw(seq), true
	case kittyFailedMsg:
		slog.Warn("showing an image inline", "image", msg.img.path, "err", msg.err)
		msg.img.cols, msg.img.rows = 0, 0
		msg.it.drop()
		return nil, true
	case uv.PrimaryDeviceAttributesEvent:
		m.deviceAttributes(msg)
		return nil, true
	case imageViewedMsg:
		if msg.err != nil {
			m.notice(itemError, "image viewer: "+msg.err.Error())
		}
		return nil, true
	}
	return nil, false
}

// resizeImages fits inline images to a new transcript width.
func (m *model) resizeImages() tea.Cmd {
	if m.imgs.proto != imagesKitty {
		return nil
	}
	var seq strings.Builder
	for _, img := range m.shown {
		if img.cols == 0 {
			continue
		}
		cols, rows := inlineCells(img, m.tr.width)
		if cols == img.cols && rows == img.rows {
			continue
		}
		img.cols, img.rows = cols, rows
		if img.sent { // else the transmission, when it arrives, places it
			seq.WriteString(kittyPlace(img.id, cols, rows, m.imgs.tmux))
		}
	}
	if seq.Len() == 0 {
		return nil
	}
	return tea.Raw(seq.String())
}

// imageLines returns what a tool block shows below its text for its
// images: the placeholder grid in kitty, a line naming the viewer in
// iTerm2, nothing when the terminal shows no images.
func (m *model) imageLines(it *toolItem) []string {
	if m.imgs.proto == imagesOff {
		return nil
	}
	var out []string
	for _, img := range it.images {
		if m.imgs.proto == imagesKitty {
			if img.cols == 0 {
				continue // not decodable, or the terminal did not take it
			}
			out = append(out, kittyGrid(img.id, img.cols, img.rows, "    ")...)
		}
		hint := fmt.Sprintf("image %d · /image %d opens it · ctrl+y the latest", img.n, img.n)
		out = append(out, "    "+m.st.dim.Render(ansi.Truncate(hint, max(m.tr.width-5, 10), "…")))
	}
	return out
}

// viewImage opens image n (0: the latest) in the viewer.
func (m *model) viewImage(n int) tea.Cmd {
	if len(m.shown) == 0 {
		m.hint = "no image in this conversation yet"
		return nil
	}
	if n == 0 {
		n = len(m.shown)
	}
	if n < 1 || n > len(m.shown) {
		has := fmt.Sprintf("images 1 to %d", len(m.shown))
		if len(m.shown) == 1 {
			has = "one image: /image 1"
		}
		m.notice(itemError, fmt.Sprintf("no image %d: this conversation has %s", n, has))
		return nil
	}
	img := m.shown[n-1]
	switch {
	case m.imgs.proto == imagesOff:
		m.notice(itemInfo, fmt.Sprintf("This terminal shows no images (otter shows them in kitty, Ghostty, iTerm2, WezTerm and terminals that speak sixel; OTTER_IMAGES=kitty, iterm2 or sixel forces one). Image %d: %s", n, img.label))
		return nil
	case m.imgs.proto == imagesSixel && img.format == "":
		m.notice(itemInfo, fmt.Sprintf("Image %d cannot be shown here (only PNG, JPEG and GIF are): %s", n, img.label))
		return nil
	case m.imgs.proto == imagesKitty && !img.sent:
		m.notice(itemInfo, fmt.Sprintf("Image %d cannot be shown here (only PNG, JPEG and GIF are, once sent to the terminal): %s", n, img.label))
		return nil
	}
	return tea.Exec(m.imageViewer(img), func(err error) tea.Msg { return imageViewedMsg{err} })
}

// imageViewer returns the viewer that shows img as large as the screen
// allows.
func (m *model) imageViewer(img *toolImage) *imageViewer {
	v := &imageViewer{title: fmt.Sprintf("image %d · %s", img.n, strings.Trim(img.label, "[]"))}
	cols, rows := max(m.width, 20), max(m.height-3, 3)
	v.title = ansi.Truncate(v.title, cols, "…")
	if m.imgs.proto == imagesKitty {
		// The image is in the terminal already: put a second, real
		// placement at the cursor and remove it on the way out. Only the
		// dimension that limits it is given: kitty derives the other
		// from the image, keeping its aspect ratio exactly.
		put := &kitty.Options{Action: kitty.Put, ID: int(img.id), PlacementID: 2}
		if c, r := fitCells(img.w, img.h, cols, rows); r == rows {
			put.Rows = r
		} else {
			put.Columns = c
		}
		v.seq = kittyCommand(put, m.imgs.tmux)
		v.after = kittyCommand(&kitty.Options{Action: kitty.Delete, Delete: kitty.DeleteID, ID: int(img.id), PlacementID: 2}, m.imgs.tmux)
	} else if m.imgs.proto == imagesSixel {
		seq, err := sixelImage(img, cols, rows, m.imgs.tmux)
		if err != nil {
			seq = "cannot draw this image: " + err.Error()
		}
		v.seq = seq
	} else {
		v.seq = iterm2Image(img, cols, rows, m.imgs.tmux)
	}
	return v
}

// sixelImage returns the sixel sequence of img, scaled down to fit
// maxCols×maxRows cells (never up: sixel pixels are the terminal's).
func sixelImage(img *toolImage, maxCols, maxRows int, tmux bool) (string, error) {
	if img.format == "" || img.w*img.h > maxInlinePixels {
		return "", fmt.Errorf("only PNG, JPEG and GIF images up to %d megapixels can be drawn", maxInlinePixels/1_000_000)
	}
	src, _, err := image.Decode(bytes.NewReader(img.data))
	if err != nil {
		return "", fmt.Errorf("decoding the %s image: %w", img.format, err)
	}
	cols, rows := fitCells(img.w, img.h, maxCols, maxRows)
	w, h := min(img.w, cols*cellPixelsW), min(img.h, rows*cellPixelsH)
	// Keep the aspect ratio within w×h.
	if s := min(float64(w)/float64(img.w), float64(h)/float64(img.h)); s < 1 {
		w, h = max(int(float64(img.w)*s), 1), max(int(float64(img.h)*s), 1)
	}
	var dst image.Image = src
	if w != img.w || h != img.h {
		scaled := image.NewRGBA(image.Rect(0, 0, w, h))
		draw.ApproxBiLinear.Scale(scaled, scaled.Bounds(), src, src.Bounds(), draw.Over, nil)
		dst = scaled
	}
	var payload bytes.Buffer
	if err := new(sixel.Encoder).Encode(&payload, dst); err != nil {
		return "", fmt.Errorf("encoding the image as sixel: %w", err)
	}
	// P2 = 1: pixels left at colour 0 stay transparent.
	seq := ansi.SixelGraphics(0, 1, 0, payload.Bytes())
	if tmux {
		seq = ansi.TmuxPassthrough(seq)
	}
	return seq, nil
}

// iterm2Image returns the inline image sequence of img, fitted to
// maxCols×maxRows cells (or filling them when its size is not known).
func iterm2Image(img *toolImage, maxCols, maxRows int, tmux bool) string {
	cols, rows := fitCells(img.w, img.h, maxCols, maxRows)
	if cols == 0 {
		cols, rows = maxCols, maxRows // the terminal keeps the aspect ratio
	}
	name := "image"
	if img.path != "" {
		name = filepath.Base(img.path)
	}
	seq := ansi.ITerm2(iterm2.File{
		Name:    base64.StdEncoding.EncodeToString([]byte(name)),
		Size:    int64(len(img.data)),
		Width:   iterm2.Cells(cols),
		Height:  iterm2.Cells(rows),
		Inline:  true,
		Content: []byte(base64.StdEncoding.EncodeToString(img.data)),
	})
	if tmux {
		seq = ansi.TmuxPassthrough(seq)
	}
	return seq
}

// imageViewer is a tea.ExecCommand: while Bubble Tea has let go of the
// terminal it shows one image on the alternate screen, waits for a key and
// returns, after which Bubble Tea redraws the transcript.
type imageViewer struct {
	title string // the first line
	seq   string // draws the image at the cursor
	after string // written before leaving (removes the image)

	in  io.Reader
	out io.Writer
}

func (v *imageViewer) SetStdin(r io.Reader)  { v.in = r }
func (v *imageViewer) SetStdout(w io.Writer) { v.out = w }
func (v *imageViewer) SetStderr(io.Writer)   {}

func (v *imageViewer) Run() error {
	if v.in == nil || v.out == nil {
		return fmt.Errorf("the image viewer has no terminal to draw on")
	}
	// Bubble Tea restored the terminal's cooked mode: a single key press
	// needs raw mode again.
	if f, ok := v.in.(interface{ Fd() uintptr }); ok && term.IsTerminal(f.Fd()) {
		if st, err := term.MakeRaw(f.Fd()); err == nil {
			defer func() { _ = term.Restore(f.Fd(), st) }()
		}
	}
	screen := ansi.SetModeAltScreenSaveCursor + ansi.EraseEntireScreen + ansi.CursorHomePosition + ansi.HideCursor +
		v.title + "\r\n" + v.seq + "\r\n" + "any key returns to otter"
	if _, err := io.WriteString(v.out, screen); err != nil {
		return fmt.Errorf("drawing the image: %w", err)
	}
	// One read takes one key press, escape sequences included. End of
	// input counts as a key.
	var buf [256]byte
	_, rerr := v.in.Read(buf[:])
	if _, err := io.WriteString(v.out, v.after+ansi.ShowCursor+ansi.ResetModeAltScreenSaveCursor); err != nil {
		return fmt.Errorf("leaving the image viewer: %w", err)
	}
	if rerr != nil && rerr != io.EOF {
		return fmt.Errorf("waiting for a key: %w", rerr)
	}
	return nil
}

// parseImageArg reads the N of /image N ("" is 0: the latest).
func parseImageArg(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("usage: /image [N] — N is the number under the image, e.g. /image 2")
	}
	return n, nil
}

// lookupEnv is the environment detection reads (Options.LookupEnv).
func (o Options) lookupEnv() func(string) (string, bool) {
	if o.LookupEnv != nil {
		return o.LookupEnv
	}
	return os.LookupEnv
}

// forgetImages drops the conversation's images (/clear) and, in kitty,
// frees them in the terminal.
func (m *model) forgetImages() tea.Cmd {
	var seq strings.Builder
	for _, img := range m.shown {
		if img.sent {
			seq.WriteString(kittyCommand(&kitty.Options{Action: kitty.Delete, Delete: kitty.DeleteID, DeleteResources: true, ID: int(img.id)}, m.imgs.tmux))
		}
	}
	m.shown = nil
	if seq.Len() == 0 {
		return nil
	}
	return tea.Raw(seq.String())
}
