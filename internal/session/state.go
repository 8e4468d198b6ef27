package session

import "context"

// RecordState saves small state of the conversation under key (the
// agent's loaded deferred tools, agent.LoadedToolsState), replacing what
// was there; Store.State reads it back when the session resumes. State
// alone does not create a session.
func (r *Recorder) RecordState(key string, value any) {
	if r.ID() == "" {
		return
	}
	r.do("the session's "+key, func(ctx context.Context, id string) error {
		return r.store.SetState(ctx, id, key, value)
	})
}
