package tpcc

import (
	"fmt"
	"sync"

	"github.com/agbench/agbench/internal/result"
)

// ownWrites counts, over a window, the Order-Status reads that followed the same VU's
// Payment of that customer (Workload.OwnWrites), by the node the read session is on.
type ownWrites struct {
	mu          sync.Mutex
	nodes       map[string]result.StaleNode
	errors      int64
	errorSample string
}

func (o *ownWrites) reset() {
	o.mu.Lock()
	o.nodes, o.errors, o.errorSample = map[string]result.StaleNode{}, 0, ""
	o.mu.Unlock()
}

// add counts one own-write read on node; a failed read is counted apart and in no figure.
func (o *ownWrites) add(node string, out Outcome, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err != nil {
		if o.errors == 0 {
			o.errorSample = err.Error()
		}
		o.errors++
		return
	}
	if o.nodes == nil {
		o.nodes = map[string]result.StaleNode{}
	}
	n := o.nodes[node]
	n.Reads++
	if out.Stale {
		n.Stale++
	}
	o.nodes[node] = n
}

// write stores the window's counts as the step's own-writes section; in functions mode,
// where they are not measured, a warning says why.
func (o *ownWrites) write(w *Workload, step *result.Step) error {
	if !w.OwnWrites || !w.ReadIntent {
		return nil
	}
	if w.Mode != ModeClient {
		step.Warnings = append(step.Warnings, "tpcc: own-write stale reads not measured: in functions mode payment() and ostat() "+
			"do not return c_payment_cnt (run with --mode client)")
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	s := result.StaleStep{Mode: result.StaleOwnWrites, Nodes: o.nodes, Errors: o.errors, ErrorSample: o.errorSample}
	if err := step.SetExtra(result.ExtraStaleOwn, s); err != nil {
		return fmt.Errorf("tpcc own-write reads: %w", err)
	}
	return nil
}
