package agent

// Attached reports what a front end attached to the user's message before
// it went to the model (resources named with @SERVER:URI), one short
// description per attachment, for a compact chip in the transcript.
type Attached struct{ Items []string }

func (Attached) isEvent() {}
