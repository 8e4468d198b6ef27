package ask

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// The clock is synctest's: the pause lasts 300 ms of it, and the timeout
// ends exactly the 100 ms it had left after the pause, without the test
// waiting for either.
func TestPausableTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := WithPausableTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		resume := PauseTimeout(ctx)
		inner := PauseTimeout(ctx) // pauses nest
		time.Sleep(300 * time.Millisecond)
		inner()
		synctest.Wait()
		if err := ctx.Err(); err != nil {
			t.Fatalf("the clock ran while paused: %v", err)
		}
		resume()
		resume() // a second call is harmless
		resumed := time.Now()
		time.Sleep(99 * time.Millisecond)
		synctest.Wait()
		if err := ctx.Err(); err != nil {
			t.Fatalf("the timeout ended %s after the pause, before the 100ms it had left: %v", time.Since(resumed), err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the timeout never ended after the pause")
		}
		if took := time.Since(resumed); took != 100*time.Millisecond {
			t.Errorf("the timeout ended %s after the pause, want the 100ms it had left", took)
		}
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Errorf("Err = %v, want DeadlineExceeded", ctx.Err())
		}
	})

	parent, stop := context.WithCancel(context.Background())
	ctx, cancel := WithPausableTimeout(parent, time.Hour)
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
