package workload

import (
	"context"
	"errors"
	"testing"
	"time"
)

type nop struct{}

func (nop) NewWorker(context.Context, VU) (Worker, error) { return nil, nil }

func TestRegistry(t *testing.T) {
	Register(Meta{Name: "zz-test-b", Description: "b", New: func() Workload { return nop{} }})
	Register(Meta{Name: "zz-test-a", Description: "a", New: func() Workload { return nop{} }})
	if m, ok := Get("zz-test-a"); !ok || m.Description != "a" {
		t.Fatalf("Get: %v %v", m, ok)
	}
	var names []string
	for _, m := range Registered() {
		names = append(names, m.Name)
	}
	if len(names) < 2 || names[len(names)-2] != "zz-test-a" || names[len(names)-1] != "zz-test-b" {
		t.Fatalf("Registered not sorted: %v", names)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("duplicate registration did not panic")
		}
	}()
	Register(Meta{Name: "zz-test-a", New: func() Workload { return nop{} }})
}

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
