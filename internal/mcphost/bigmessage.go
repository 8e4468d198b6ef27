package mcphost

// Large messages. A server's message longer than keepMessageBytes is never
// held whole: as it is read it goes to a file (up to spillMessageBytes) and
// through a shrinker, which rebuilds it with long strings cut and, past a
// budget, items left out. The SDK then decodes the shrunk message, whose
// tool result carries a note naming the file. Over stdio the stdoutFilter
// does this line by line; over streamable HTTP, shrinkingBody for a JSON
// body (an SSE event the SDK itself bounds to 16 MiB). Before, the SDK and otter
// made copies of a message as it went from bytes to a result to text: a
// 200 MiB result peaked otter at 2 GB, and a 500 MiB one was refused only
// after 700 MB.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"unicode/utf8"
)

const (
	// keepMessageBytes is the longest message a server's answer reaches the
	// SDK whole in: the SDK's own default line limit, so that whatever a
	// server tested against an SDK's defaults sends is kept exactly. Decoding
	// one costs otter about ten times its length at most (~160 MB).
	keepMessageBytes = 16 << 20
	// spillMessageBytes bounds the file a longer message is written to; the
	// rest is read and dropped, and the note says the file holds the start.
	// A server cannot fill the disk, and 256 MiB is more than any model or
	// person reads of one answer.
	spillMessageBytes = 256 << 20
	// shrinkBudget is the length past which the shrinker leaves out the
	// remaining items (array elements, object members) below the message's
	// own fields; with cutStringBytes it bounds a shrunk message to about
	// 5 MiB.
	shrinkBudget = 4 << 20
	// cutStringBytes is the longest string a shrunk message keeps: ten times
	// what a model is shown of a result by default (100,000 characters), so
	// that a model or a person configured to see more still gets its share.
	cutStringBytes = 1 << 20
	// cutKeyBytes is the longest object key a shrunk message keeps.
	cutKeyBytes = 256
	// maxNumberBytes is the longest number a message may hold.
	maxNumberBytes = 256
)

// messageFields are the members of a JSON-RPC message; a shrunk message
// keeps only these, each once.
var messageFields = map[string]bool{"jsonrpc": true, "id": true, "method": true, "params": true, "result": true, "error": true}

// cutMarker ends a string otter cut; total is its length in bytes before.
func cutMarker(total int64) string {
	return fmt.Sprintf("%s%d bytes in all]", cutMarkerStart, total)
}

const cutMarkerStart = "… [cut by otter: "

// shrinkFrame is one open container of the message being shrunk.
type shrinkFrame struct {
	obj     bool
	emitted int    // members or elements written so far
	key     []byte // an object's current key (raw, cut to cutKeyBytes)
	seen    map[string]bool
}

// Tokenizer states.
const (
	stValue       = iota // a value is expected
	stArrayStart         // after '[': a value or ']'
	stObjectStart        // after '{': a key or '}'
	stKey                // after ',' in an object: a key
	stColon              // after a key
	stAfter              // after a value: ',' or the closer, or the end at the top
	stString
	stNumber
	stLiteral
	stDone // the top-level value is complete
)

// shrinker rebuilds one JSON message fed to it in pieces, compacted, with
// strings longer than their cap cut (cutMarker at the end; base64 data
// left empty, since a cut would not decode), and, once the output passes
// shrinkBudget, the remaining items below the message's own fields left
// out. It holds at most about shrinkBudget + cutStringBytes.
type shrinker struct {
	out   []byte
	stack []shrinkFrame
	state int
	// muted > 0: the element of the container at this depth is being
	// left out; nothing is written until it ends.
	muted int

	// The string being read: its raw (escaped) bytes up to its cap.
	inKey   bool
	str     []byte
	strCap  int
	strLen  int64 // raw bytes in all
	strCut  bool
	esc     int // 0: none; 1: after '\'; 2–5: hex digits of \u read so far + 1
	literal string
	litPos  int
	numLen  int

	read    int64
	cut     int // strings cut
	dropped int // items left out
	err     error
}

func (s *shrinker) depth() int { return len(s.stack) }

func (s *shrinker) emit(b ...byte) {
	if s.muted == 0 {
		s.out = append(s.out, b...)
	}
}

// fieldDepth is the depth of the containers whose members are the
// message's own fields: 1, or 2 in a batch.
func (s *shrinker) fieldDepth() int {
	if len(s.stack) > 0 && !s.stack[0].obj {
		return 2
	}
	return 1
}

func (s *shrinker) fail(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf("not a JSON message: "+format+" at byte %d", append(args, s.read)...)
	}
}

// Write feeds the next piece of the message. It never fails; a malformed
// message is reported by finish.
func (s *shrinker) Write(p []byte) (int, error) {
	for i := 0; i < len(p) && s.err == nil; i++ {
		c := p[i]
		if s.state == stString {
			// Fast path: plain bytes of a string.
			j := i
			for j < len(p) && p[j] != '"' && p[j] != '\\' && p[j] >= 0x20 && s.esc == 0 {
				s.strByte(p[j])
				j++
			}
			s.read += int64(j - i)
			if j > i {
				i = j - 1
				continue
			}
		}
		s.read++
		s.step(c)
	}
	return len(p), nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (s *shrinker) step(c byte) {
	switch s.state {
	case stString:
		s.stringStep(c)
	case stNumber:
		if c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			if s.numLen++; s.numLen > maxNumberBytes {
				s.fail("a number of more than %d characters", maxNumberBytes)
			}
			s.emit(c)
			return
		}
		s.endValue()
		s.step(c)
	case stLiteral:
		if s.litPos < len(s.literal) && c == s.literal[s.litPos] {
			s.emit(c)
			if s.litPos++; s.litPos == len(s.literal) {
				s.endValue()
			}
			return
		}
		s.fail("%q is not a JSON value", s.literal[:s.litPos]+string(c))
	case stValue, stArrayStart:
		switch {
		case isSpace(c):
		case c == ']' && s.state == stArrayStart:
			s.closeContainer(false)
		default:
			if s.state == stArrayStart || s.depth() > 0 && !s.stack[len(s.stack)-1].obj {
				s.startElement()
			}
			s.startValue(c)
		}
	case stObjectStart, stKey:
		switch {
		case isSpace(c):
		case c == '}' && s.state == stObjectStart:
			s.closeContainer(true)
		case c == '"':
			s.inKey, s.str, s.strCap, s.strLen, s.strCut = true, s.str[:0], cutKeyBytes, 0, false
			s.state = stString
		default:
			s.fail("expected an object key, found %q", c)
		}
	case stColon:
		switch {
		case isSpace(c):
		case c == ':':
			s.emit(':')
			s.state = stValue
		default:
			s.fail("expected ':', found %q", c)
		}
	case stAfter:
		if isSpace(c) {
			return
		}
		top := &s.stack[len(s.stack)-1]
		switch {
		case c == ',':
			s.endElement()
			if top.obj {
				s.state = stKey
			} else {
				s.state = stValue
			}
		case c == '}' && top.obj, c == ']' && !top.obj:
			s.closeContainer(top.obj)
		default:
			s.fail("expected ',' or the end of the container, found %q", c)
		}
	case stDone:
		if !isSpace(c) {
			s.fail("more after the message")
		}
	}
}

// startElement decides whether the next element of the array on top is
// written, and writes the comma before it.
func (s *shrinker) startElement() {
	if s.muted == 0 {
		s.admit(s.depth() > s.fieldDepth())
	}
}

// admit decides whether the next item of the container on top is
// written: a budgeted one is left out once the budget is spent; one that
// is written gets its comma.
func (s *shrinker) admit(budgeted bool) bool {
	if budgeted && len(s.out) >= shrinkBudget {
		s.muted = s.depth()
		s.dropped++
		return false
	}
	top := &s.stack[len(s.stack)-1]
	if top.emitted > 0 {
		s.emit(',')
	}
	top.emitted++
	return true
}

// endElement ends the element of the container on top: one that was left
// out is written again from the next one on.
func (s *shrinker) endElement() {
	if s.muted == s.depth() {
		s.muted = 0
	}
}

func (s *shrinker) startValue(c byte) {
	switch {
	case c == '{' || c == '[':
		s.emit(c)
		s.stack = append(s.stack, shrinkFrame{obj: c == '{'})
		if c == '{' {
			s.state = stObjectStart
		} else {
			s.state = stArrayStart
		}
	case c == '"':
		s.inKey, s.str, s.strLen, s.strCut = false, s.str[:0], 0, false
		s.strCap = s.valueCap()
		s.state = stString
	case c == '-' || c >= '0' && c <= '9':
		s.emit(c)
		s.numLen = 1
		s.state = stNumber
	case c == 't' || c == 'f' || c == 'n':
		s.literal = map[byte]string{'t': "true", 'f': "false", 'n': "null"}[c]
		s.litPos = 1
		s.emit(c)
		s.state = stLiteral
	default:
		s.fail("%q does not start a JSON value", c)
	}
}

// valueCap is the cap of a string value under the current key: a tool's
// description its own cap, base64 data none (kept whole or left empty).
func (s *shrinker) valueCap() int {
	if s.depth() == 0 || !s.stack[len(s.stack)-1].obj {
		return cutStringBytes
	}
	switch string(s.stack[len(s.stack)-1].key) {
	case "description":
		return maxDescriptionBytes
	}
	return cutStringBytes
}

// isBinaryKey: the key of an image's or audio's data, or a blob resource's.
func (s *shrinker) isBinaryKey() bool {
	if s.depth() == 0 || !s.stack[len(s.stack)-1].obj {
		return false
	}
	k := string(s.stack[len(s.stack)-1].key)
	return k == "data" || k == "blob"
}

func (s *shrinker) closeContainer(obj bool) {
	if s.muted == s.depth() {
		s.muted = 0 // its last element was left out; the container ends
	}
	s.stack = s.stack[:len(s.stack)-1]
	if obj {
		s.emit('}')
	} else {
		s.emit(']')
	}
	s.endValue()
}

// endValue follows a complete value.
func (s *shrinker) endValue() {
	if s.depth() == 0 {
		s.state = stDone
		return
	}
	s.state = stAfter
}

// stringStep reads one byte of a string (the fast path in Write takes
// plain bytes).
func (s *shrinker) stringStep(c byte) {
	switch {
	case s.esc == 1:
		switch c {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			s.esc = 0
		case 'u':
			s.esc = 2
		default:
			s.fail("a bad escape \\%c in a string", c)
			return
		}
		s.strAppend(c)
	case s.esc >= 2:
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			s.fail("a bad \\u escape in a string")
			return
		}
		if s.esc++; s.esc == 6 {
			s.esc = 0
		}
		s.strAppend(c)
	case c == '\\':
		s.strByte(c)
		s.esc = 1
	case c == '"':
		s.endString()
	case c < 0x20:
		s.fail("a control character in a string")
	default:
		s.strByte(c)
	}
}

// strByte adds a byte that may start a character (not within an escape):
// once the string holds its cap, it is cut here, on a character's start.
func (s *shrinker) strByte(c byte) {
	s.strLen++
	if s.strCut {
		return
	}
	if c < 0x80 || c >= 0xC0 { // a character starts here
		if len(s.str) >= s.strCap {
			s.strCut = true
			return
		}
	}
	s.str = append(s.str, c)
}

// strAppend adds a byte within a character (an escape's).
func (s *shrinker) strAppend(c byte) {
	s.strLen++
	if !s.strCut {
		s.str = append(s.str, c)
	}
}

func (s *shrinker) endString() {
	if s.inKey {
		s.endKey()
		return
	}
	if s.strCut {
		s.cut++
		if s.isBinaryKey() {
			s.str = s.str[:0] // half of a base64 text would not decode
		} else {
			s.str = append(s.str, cutMarker(s.strLen)...)
		}
	}
	s.emit('"')
	s.emit(s.str...)
	s.emit('"')
	if cap(s.str) > 64<<10 {
		s.str = nil
	}
	s.endValue()
}

// endKey decides whether the member whose key was just read is written:
// of the message's own fields only the JSON-RPC ones, each once; below
// them, none once the budget is spent.
func (s *shrinker) endKey() {
	top := &s.stack[len(s.stack)-1]
	top.key = append(top.key[:0], s.str...)
	s.state = stColon
	if s.muted > 0 {
		return
	}
	fields := s.depth() == s.fieldDepth()
	if fields {
		k := string(s.str)
		if !messageFields[k] || top.seen[k] || s.strCut {
			s.muted = s.depth()
			return
		}
		if top.seen == nil {
			top.seen = make(map[string]bool)
		}
		top.seen[k] = true
	}
	if !s.admit(!fields) {
		return
	}
	if s.strCut {
		s.cut++
		s.str = append(s.str, cutMarker(s.strLen)...)
	}
	s.emit('"')
	s.emit(s.str...)
	s.emit('"')
}

// finish returns the shrunk message, or why the bytes were not one JSON
// value.
func (s *shrinker) finish() ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.state == stNumber || s.state == stLiteral && s.litPos == len(s.literal) {
		s.endValue()
	}
	if s.state != stDone {
		return nil, errors.New("not a JSON message: it ends before its last value does")
	}
	return s.out, nil
}

// bigMessage is one message longer than keepMessageBytes, on its way to a
// file and through a shrinker.
type bigMessage struct {
	sh       shrinker
	f        *os.File
	w        *bufio.Writer
	spilled  int64
	spillErr error
	total    int64
}

// newBigMessage starts a big message; create makes its file.
func newBigMessage(create func() (*os.File, error)) *bigMessage {
	b := &bigMessage{}
	b.f, b.spillErr = create()
	if b.spillErr == nil {
		b.w = bufio.NewWriterSize(b.f, 256<<10)
	}
	return b
}

func (b *bigMessage) Write(p []byte) (int, error) {
	b.total += int64(len(p))
	_, _ = b.sh.Write(p)
	if b.w != nil && b.spillErr == nil && b.spilled < spillMessageBytes {
		n := min(int64(len(p)), spillMessageBytes-b.spilled)
		_, b.spillErr = b.w.Write(p[:n])
		b.spilled += n
	}
	return len(p), nil
}

// abandon closes and removes the file of a message that could not be
// read to its end.
func (b *bigMessage) abandon() {
	if b.f != nil {
		b.f.Close()
		os.Remove(b.f.Name())
	}
}

// finish closes the file and returns the shrunk message with a note
// (what was cut, where the whole is) put first in a tool result's content
// — where a model shown only the start of a long result still reads it —
// and the note itself.
func (b *bigMessage) finish() ([]byte, string, error) {
	if b.w != nil {
		if err := b.w.Flush(); b.spillErr == nil {
			b.spillErr = err
		}
		if err := b.f.Close(); b.spillErr == nil {
			b.spillErr = err
		}
	}
	msg, err := b.sh.finish()
	if err != nil {
		if b.f != nil {
			os.Remove(b.f.Name())
		}
		return nil, "", err
	}
	note := b.note()
	return annotate(msg, note), note, nil
}

func mib(n int64) string { return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB" }

// note says, for a person and a model, what happened to the message.
func (b *bigMessage) note() string {
	where := ""
	switch {
	case b.spillErr != nil:
		where = fmt.Sprintf("it could not be saved whole (%v)", b.spillErr)
	case b.spilled < b.total:
		where = fmt.Sprintf("its first %s, as the server sent them (JSON-RPC), are in %s", mib(b.spilled), b.f.Name())
	default:
		where = "the whole answer, as the server sent it (JSON-RPC), is in " + b.f.Name()
	}
	what := fmt.Sprintf("%d strings longer than %d KiB were cut", b.sh.cut, cutStringBytes>>10)
	if b.sh.cut == 1 {
		what = fmt.Sprintf("1 string longer than %d KiB was cut", cutStringBytes>>10)
	}
	if b.sh.dropped > 0 {
		what += fmt.Sprintf(" and %d items past the first %s were left out", b.sh.dropped, mib(shrinkBudget))
	}
	return fmt.Sprintf("[otter: the server's answer was %s, more than the %d MiB otter keeps of one message: %s; %s]",
		mib(b.total), keepMessageBytes>>20, what, where)
}

// annotate puts note first in msg's content when msg is a tool result (a
// result with content); any other message is returned as it is.
func annotate(msg []byte, note string) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil || m["result"] == nil {
		return msg
	}
	var res map[string]json.RawMessage
	if json.Unmarshal(m["result"], &res) != nil || res == nil {
		return msg
	}
	var content []json.RawMessage
	if c, ok := res["content"]; !ok || json.Unmarshal(c, &content) != nil {
		return msg // not a tool result: the note is in the stderr tail
	}
	item, _ := json.Marshal(map[string]string{"type": "text", "text": note})
	content = append([]json.RawMessage{item}, content...)
	res["content"], _ = json.Marshal(content)
	m["result"], _ = json.Marshal(res)
	out, err := json.Marshal(m)
	if err != nil {
		return msg
	}
	return out
}

// readMessage reads one message from r to its end: whole when it ends
// within keepMessageBytes, else written to a file made by create and
// shrunk as it is read (bigMessage).
func readMessage(r io.Reader, create func() (*os.File, error)) ([]byte, error) {
	buf, err := io.ReadAll(io.LimitReader(r, keepMessageBytes+1))
	if err != nil || len(buf) <= keepMessageBytes {
		return buf, err
	}
	big := newBigMessage(create)
	_, _ = big.Write(buf)
	buf = nil
	if _, err := io.Copy(big, r); err != nil {
		big.abandon()
		return nil, err
	}
	msg, _, err := big.finish()
	return msg, err
}

// shrinkingBody is a JSON response body read through readMessage: the SDK
// reads such a body whole (io.ReadAll) and decodes it in several copies,
// so a longer one reaches it shrunk.
type shrinkingBody struct {
	rc     io.ReadCloser
	create func() (*os.File, error)
	read   bool
	msg    []byte
	err    error
}

func (b *shrinkingBody) Read(p []byte) (int, error) {
	if !b.read {
		b.read = true
		b.msg, b.err = readMessage(b.rc, b.create)
	}
	if len(b.msg) > 0 {
		n := copy(p, b.msg)
		b.msg = b.msg[n:]
		return n, nil
	}
	if b.err != nil {
		return 0, b.err
	}
	return 0, io.EOF
}

func (b *shrinkingBody) Close() error { return b.rc.Close() }

// validUTF8Prefix returns the longest prefix of s of at most n bytes that
// ends on a character boundary.
func validUTF8Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
