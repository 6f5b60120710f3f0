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
