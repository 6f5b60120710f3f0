package stress

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/agerr"
)

// CheckQueries prepares every query on c, so that SQL the server rejects, or a query that
// takes another number of parameters than the parameters given (width), is bad input
// before anything runs. A query cut short by cancellation is not bad input.
func CheckQueries(ctx context.Context, c *pgx.Conn, queries []string, width int) error {
	for i, q := range queries {
		sd, err := c.Prepare(ctx, fmt.Sprintf("agbench_check%d", i), q)
		if err != nil {
			qe := &QueryError{Index: i, Query: q, Err: err}
			if ctx.Err() != nil || errors.Is(err, context.Canceled) {
				return qe
			}
			return agerr.BadInput(qe)
		}
		if len(sd.ParamOIDs) != width {
			return agerr.BadInput(&QueryError{Index: i, Query: q,
				Err: fmt.Errorf("takes %d parameter(s), --param-file/--param-range give %d", len(sd.ParamOIDs), width)})
		}
	}
	return nil
}
