package ask

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestPausableTimeout(t *testing.T) {
	ctx, cancel := WithPausableTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	resume := PauseTimeout(ctx)
	inner := PauseTimeout(ctx) // pauses nest
	time.Sleep(300 * time.Millisecond)
	inner()
	if err := ctx.Err(); err != nil {
		t.Fatalf("the clock ran while paused: %v", err)
	}
	resume()
	resume() // a second call is harmless
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the timeout never ended after the pause")
	}
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Errorf("Err = %v, want DeadlineExceeded", ctx.Err())
	}

	parent, stop := context.WithCancel(context.Background())
	ctx, cancel = WithPausableTimeout(parent, time.Hour)
	defer cancel()
	stop()
	<-ctx.Done()
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Errorf("after the parent was cancelled, Err = %v", ctx.Err())
	}
	if PauseTimeout(context.Background()) == nil {
		t.Error("PauseTimeout without a pausable timeout must return a no-op")
	}
}
