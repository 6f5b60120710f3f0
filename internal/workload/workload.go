// Package workload owns the contract between a workload and the runner, and the registry of
// workloads by name. A workload makes one Worker per virtual user; the runner alone owns
// goroutines, ramp-up, duration, rate, measurement and error tolerance. Capabilities beyond
// the core (closing a worker, reporting where its session landed, step hooks, schema set-up)
// are optional interfaces, found by type assertion.
//
// Workloads live in subpackages (stress, scan, tpcc, ...) and register themselves in an init
// function; package all blank-imports every one. This package imports only the split of a
// run into segments; workloads must not import the runner, the cluster, the listener or the
// report.
//
// Imports from agbench: only internal/segment.
package workload

import (
	"context"
	"time"

	"github.com/agbench/agbench/internal/segment"
)

// Workload makes the per-virtual-user state of a run.
type Workload interface {
	// NewWorker makes one virtual user's state: its connection, random source and prepared
	// statements, made once and used for every operation of the step.
	NewWorker(ctx context.Context, vu VU) (Worker, error)
}

// VU describes the virtual user a worker is made for.
type VU struct {
	// ID is the VU's number in its step, 0-based, counted over all the segments of a run
	// split into segments (the segment's VUs are Segment.Range(Of)).
	ID int
	// Of is the number of VUs in the step, all segments together.
	Of int
	// Segment is the share of the run this load generator runs (the zero value: all of it).
	Segment segment.Segment
	// Seed derives the worker's randomness: the run's --seed, the step and the VU.
	Seed int64
	// Params are the step's knobs, including the compared variant's ("routing": "on").
	Params map[string]string
}

// Worker runs the operations of one virtual user, one call at a time.
type Worker interface {
	// Do runs one operation and describes it in op. An error counts the operation as
	// failed (its latency goes to the error histogram); the run goes on.
	Do(ctx context.Context, op *Op) error
}

// Op is one operation as the worker describes it to the runner. The runner clears it
// before every call.
type Op struct {
	// Name is the operation type ("query", "new_order"); "" means the workload's only type,
	// DefaultOp. A workload that picks a transaction per call sets it on every call.
	Name string
	// Rows and Bytes are what the operation returned to the client.
	Rows, Bytes int64
	// Retries counts retries inside the operation (e.g. after a serialization failure).
	Retries int64
	// Excluded is time inside Do that is not part of the operation's latency: keying and
	// think time. Wait adds to it.
	Excluded time.Duration
	// Submitted, when set, is when the operation was asked for before Do took it up: a
	// request that waited in a queue for the worker (a transaction monitor's). Its latency
	// is then measured from Submitted, so that the queueing is in it, less Excluded.
	Submitted time.Time
}

// DefaultOp is the name of an operation whose worker left Op.Name empty.
const DefaultOp = "op"

// Wait sleeps for d (keying or think time) without counting it in the latency. It returns
// early with the context's error when ctx ends.
func (o *Op) Wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	// The clock is read before the timer is made: read after, a preemption between the two
	// (0.7 ms under -race on a busy machine) was part of the wait but not of Excluded, and a
	// wait of 30 ms counted 29.3 ms. Read before, Excluded is never less than the wait.
	start := time.Now()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		o.Excluded += time.Since(start)
		return nil
	case <-ctx.Done():
		o.Excluded += time.Since(start)
		return ctx.Err()
	}
}

// Tallier is a Worker with figures of its own about its operations that must cover the
// same operations as the runner's histograms (a transaction monitor's queue waits, which
// are part of the response times): the runner calls Tally, on the VU's goroutine, once for
// each operation it recorded in the measured window, right after recording it, with the Op
// as Do described it and whether it failed. An operation begun before the window opened,
// or ended after it closed, is recorded by neither.
type Tallier interface {
	Tally(op *Op, failed bool)
}

// Closer is a Worker (or Workload) holding something to release: a connection, a file.
type Closer interface {
	Close() error
}

// Landing says where a session landed: the node's name (or host:port) and whether it was
// in recovery (a standby) when the session began.
type Landing struct {
	Node       string
	InRecovery bool
}

// Lander is a Worker that reports where its session(s) landed, for the result's count of
// sessions per node.
type Lander interface {
	Landings() []Landing
}

// Reconnector is a Worker whose session can be lost (a server restart, a failover, a
// terminated backend, a broken network) and made again. After an operation fails, the
// runner asks Lost; when it is, the runner calls Reconnect, with a bounded backoff between
// attempts, until it succeeds or the step ends, and counts what it did. A workload never
// waits or retries a lost session itself.
type Reconnector interface {
	// Lost reports whether the worker's session (any of them) is gone.
	Lost() bool
	// Reconnect makes every lost session again (connect, prepare) and reports the first
	// failure; a session that was not lost is kept.
	Reconnect(ctx context.Context) error
}

// Remaker is a Reconnector of several sessions that says which of them, by their place in
// Landings, were made again since it was last asked, so that the runner records every
// session made (result.Step.Sessions). Without it the runner takes a worker of one session
// to have made that one again, and one of several those whose landing changed.
type Remaker interface {
	Remade() []int
}

// StepHooks is a Workload with work of its own around each measured step: restarting a
// server for a cold read, reading the server's buffer counters before and after. Counters
// returned by AfterStep go into the step's counters.
type StepHooks interface {
	BeforeStep(ctx context.Context, params map[string]string) error
	AfterStep(ctx context.Context, params map[string]string, window time.Duration) (map[string]float64, error)
}
