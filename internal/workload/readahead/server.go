package readahead

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Server is the PostgreSQL server the experiment runs on, as the command layer provides it
// (an agbench cluster's primary, or a private throwaway one). The experiment needs more than
// a connection: it restarts the server to empty shared buffers, and reads and evicts the
// relation files under its data directory, so the server must run on this machine.
type Server interface {
	// Connect opens a superuser session to database db.
	Connect(ctx context.Context, db string) (*pgx.Conn, error)
	// Restart stops the server (a clean shutdown, which writes every dirty buffer) and
	// starts it again, waiting until it accepts sessions.
	Restart(ctx context.Context) error
	// DataDir is the server's data directory.
	DataDir() string
	// OSUser is the uid and gid the server runs as (owner of a tablespace folder).
	OSUser() (uid, gid int)
	// HasStandbys is true when standbys on this machine replay the server's WAL: a
	// tablespace would then be created at the same path by each of them, so none is made.
	HasStandbys() bool
}
