package session

import (
	"context"

	"github.com/otter-sh/otter/internal/record"
)

// Record returns a Recorder saving to the session info (NewRecorder).
func (s *Store) Record(info record.Info, onError func(error)) record.Recorder {
	return NewRecorder(s, info, onError)
}

var (
	_ record.Store    = (*Store)(nil)
	_ record.Recorder = (*Recorder)(nil)
)

// OpenStore opens the database at path as a record.Store: for writing
// (Open), or for reading only when readOnly (OpenReadOnly).
func OpenStore(ctx context.Context, path string, readOnly bool) (record.Store, error) {
	open := Open
	if readOnly {
		open = OpenReadOnly
	}
	s, err := open(ctx, path)
	if err != nil {
		return nil, err // not a nil *Store in a non-nil interface
	}
	return s, nil
}
