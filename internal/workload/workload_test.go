package workload

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestWaitIsExcluded(t *testing.T) {
	var op Op
	if err := op.Wait(context.Background(), 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if op.Excluded < 20*time.Millisecond {
		t.Fatalf("excluded %v, want at least the wait", op.Excluded)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := op.Wait(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait on a cancelled context: %v", err)
	}
}
