package render

import (
	"fmt"
	"io"

	"github.com/agbench/agbench/internal/result"
)

// Merged says which segments a merged run was made of, on which hosts, how far apart they
// began each step, and which are missing; nothing for a run that was not merged.
func Merged(w io.Writer, r *result.Result) {
	if r.Meta.Merged == nil {
		return
	}
	for _, l := range r.Meta.Merged.Lines() {
		fmt.Fprintln(w, "segments  "+l)
	}
}

// SegmentLine says that a run was one segment of several load generators and that its
// figures are its share (seg nil: a whole run, nothing).
func SegmentLine(w io.Writer, seg *result.Segment) {
	if seg == nil {
		return
	}
	fmt.Fprintf(w, "segment %d/%d of run %s: every load and figure below is this segment's share; agbench merge makes the whole run of the %d\n",
		seg.Index, seg.Of, seg.Run, seg.Of)
}
