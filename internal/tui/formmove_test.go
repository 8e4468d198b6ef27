package tui

import (
	"reflect"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"
)

// burst hands keys to a form as a loaded machine does: every key of the
// burst reaches the form before any message of the commands they start
// (huh's move to the next field among them). Then it runs those commands
// and hands their messages on until none are left; a command that takes
// longer than a moment (a cursor's blink, the form's own timeout) is
// left out, as if the machine were slower still.
func burst(f *formModal, keys ...string) {
	var queue []tea.Cmd
	for _, k := range keys {
		queue = append(queue, f.update(keyMsg(k)))
	}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		for _, msg := range runCmd(c) {
			queue = append(queue, f.update(msg))
		}
	}
}

// runCmd runs one command, and the commands of a batch or sequence it
// returns, giving up on any that blocks for more than 100 ms.
func runCmd(c tea.Cmd) []tea.Msg {
	if c == nil {
		return nil
	}
	ch := make(chan tea.Msg, 1)
	go func() { ch <- c() }()
	var msg tea.Msg
	select {
	case msg = <-ch:
	case <-time.After(100 * time.Millisecond):
		return nil
	}
	if msg == nil {
		return nil
	}
	if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().Elem() == reflect.TypeFor[tea.Cmd]() {
		var out []tea.Msg
		for i := range v.Len() {
			out = append(out, runCmd(v.Index(i).Interface().(tea.Cmd))...)
		}
		return out
	}
	return []tea.Msg{msg}
}

// Keys typed in the same burst as an Enter go to the field the Enter moves
// to, however late huh's move arrives: within a group, and from a group's
// last field to the next group (two steps in huh, a field move and then a
// group move). Before, keys waited at most 150 ms and then went to the
// field being left, which a loaded machine showed as "MarketingG".
func TestKeysTypedAfterEnterReachTheNextField(t *testing.T) {
	m := newTestModel(t, &fakeHost{}, Options{})
	m.width, m.height = 100, 40
	for _, tc := range []struct {
		name   string
		groups func(a, b, c *string) []*huh.Group
	}{
		{"one group", func(a, b, c *string) []*huh.Group {
			return []*huh.Group{huh.NewGroup(huh.NewInput().Value(a), huh.NewInput().Value(b), huh.NewInput().Value(c))}
		}},
		{"a group each", func(a, b, c *string) []*huh.Group {
			return []*huh.Group{huh.NewGroup(huh.NewInput().Value(a)), huh.NewGroup(huh.NewInput().Value(b)), huh.NewGroup(huh.NewInput().Value(c))}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a, b, c string
			submitted := false
			f := newFormModal(m, "", "", tc.groups(&a, &b, &c)...)
			f.onSubmit = func() tea.Cmd { submitted = true; return nil }
			for _, msg := range runCmd(f.init()) {
				f.update(msg)
			}
			burst(f, "M", "a", "enter", "G", "o", "enter", "x", "enter")
			if a != "Ma" || b != "Go" || c != "x" || !submitted {
				t.Errorf("fields = %q, %q, %q (submitted %v), want \"Ma\", \"Go\", \"x\" (submitted)", a, b, c, submitted)
			}
		})
	}
}

// An Enter on a choice list whose filter matches nothing moves nowhere
// (huh says nothing of it): keys typed behind it go on to the list at
// once, not after a wait for a move that never comes. Here the burst drops
// the form's timeout, so keys held for that move would be lost.
func TestEnterOnAnEmptyChoiceHoldsNoKeys(t *testing.T) {
	m := newTestModel(t, &fakeHost{}, Options{})
	m.width, m.height = 100, 40
	var a, b string
	submitted := false
	f := newFormModal(m, "", "", huh.NewGroup(
		huh.NewSelect[string]().Options(huh.NewOptions("alpha", "beta")...).Value(&a),
		huh.NewInput().Value(&b)))
	f.onSubmit = func() tea.Cmd { submitted = true; return nil }
	for _, msg := range runCmd(f.init()) {
		f.update(msg)
	}
	burst(f, "/", "z", "enter", "backspace", "enter", "x", "enter")
	if a != "alpha" || b != "x" || !submitted {
		t.Errorf("fields = %q, %q (submitted %v), want \"alpha\", \"x\" (submitted)", a, b, submitted)
	}
}
