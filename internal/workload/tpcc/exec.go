package tpcc

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/workload/pgops"
)

// Mode says where a transaction's logic runs.
type Mode string

// Modes: one call of a server-side function per transaction (as HammerDB does), or the
// statements sent from the client: prepared (pgx's statement cache), pipelined in batches so
// that a transaction costs one or two round trips, the transaction's logic in the client.
const (
	ModeFunctions Mode = "functions"
	ModeClient    Mode = "client"
)

// ParseMode validates --mode.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case ModeFunctions, ModeClient:
		return Mode(s), nil
	}
	return "", agerr.BadInputf("--mode %q: must be functions or client", s)
}

// SQLSTATEs the workload treats specially.
const (
	// StateItemInvalid is raised by neword for the 1% of orders that roll back.
	StateItemInvalid   = "AGB01"
	stateSerialization = "40001"
	stateDeadlock      = "40P01"
	maxAttempts        = 10
)

// Retryable reports whether err is a serialization failure or a deadlock, which the
// transaction is retried for.
func Retryable(err error) bool {
	s := SQLState(err)
	return s == stateSerialization || s == stateDeadlock
}

// SQLState returns the SQLSTATE of a server error, or "" for other errors.
func SQLState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// Outcome is what one transaction did.
type Outcome struct {
	Kind Kind
	// RolledBack marks a New-Order rolled back by its unused item (it counts as done).
	RolledBack bool
	// Retries counts attempts that failed with a serialization failure or a deadlock.
	Retries int
	// OnRead is set when the transaction ran on the read-intent connection.
	OnRead bool
	// Statements counts the statements the client sent for it, retries included (BEGIN and
	// COMMIT count; a function call is one).
	Statements int
	// OwnRead marks an Order-Status that read the customer of the VU's last Payment
	// (Session.OwnWrites); Stale, that it saw fewer of the customer's payments than that
	// Payment left.
	OwnRead, Stale bool
}

// Session runs transactions for one terminal on its connections: Primary for all, or for the
// read-write ones only when Read (a read-intent connection) is set.
type Session struct {
	Primary *pgx.Conn
	Read    *pgx.Conn
	Mode    Mode
	T       *Terminal
	// OwnWrites (client mode, with Read): an Order-Status after the session's Payment reads
	// that Payment's customer and checks it sees the payment (a deviation from clause
	// 2.6.1.2's random customer, for the stale-read probe only).
	OwnWrites bool

	// The output of the last transaction of each kind, returned to the terminal as the
	// specification's output screens show it (clauses 2.4.3.3, 2.5.3.3, 2.6.3.3, 2.8.3.3);
	// reused.
	NO        NewOrderOutput
	Pay       PaymentOutput
	OS        OrderStatusOutput
	LowStock  int
	Delivered int // districts delivered by the last Delivery

	stmts int
	batch pgx.Batch
	// watches watch the terminal's context once per session (Primary's, Read's) rather
	// than pgx once per statement (pgops.SessionContext).
	watches [2]*pgops.SessionContext
	// paid is the last Payment's customer and its c_payment_cnt after it, until an
	// Order-Status reads it; seenCount is the count that Order-Status saw.
	paid      ownPayment
	seenCount int32
}

// ownPayment is a Payment's customer and its payment count after that Payment.
type ownPayment struct {
	w, d, c int
	count   int32
	set     bool
}

// ownWrites reports whether the session checks its Order-Status reads against its own
// Payments.
func (s *Session) ownWrites() bool { return s.OwnWrites && s.Read != nil && s.Mode == ModeClient }

// Run draws the inputs of one transaction of kind k and runs it, retrying serialization
// failures and deadlocks with the same inputs.
func (s *Session) Run(ctx context.Context, k Kind) (out Outcome, err error) {
	out = Outcome{Kind: k}
	s.stmts = 0
	defer func() { out.Statements = s.stmts }()
	conn := s.Primary
	if k.ReadOnly() && s.Read != nil {
		conn, out.OnRead = s.Read, true
	}
	var run func(context.Context, *pgx.Conn) error
	switch k {
	case NewOrder:
		in := s.T.NewOrder()
		run = func(ctx context.Context, c *pgx.Conn) error {
			err := s.newOrder(ctx, c, in)
			if errors.Is(err, errRolledBack) {
				out.RolledBack = true
				return nil
			}
			return err
		}
	case Payment:
		in := s.T.Payment()
		run = func(ctx context.Context, c *pgx.Conn) error { return s.payment(ctx, c, in) }
	case OrderStatus:
		in := s.T.OrderStatus() // drawn always, so that the terminal's random stream is the same
		paid := s.paid
		if out.OwnRead = paid.set && s.ownWrites(); out.OwnRead {
			in, s.paid = OrderStatusInput{W: paid.w, D: paid.d, C: paid.c}, ownPayment{}
		}
		run = func(ctx context.Context, c *pgx.Conn) error {
			err := s.orderStatus(ctx, c, in, out.OwnRead)
			if err == nil && out.OwnRead {
				out.Stale = s.seenCount < paid.count
			}
			return err
		}
	case Delivery:
		in := s.T.Delivery()
		run = func(ctx context.Context, c *pgx.Conn) error { return s.delivery(ctx, c, in) }
	case StockLevel:
		in := s.T.StockLevel()
		run = func(ctx context.Context, c *pgx.Conn) error { return s.stockLevel(ctx, c, in) }
	default:
		return out, fmt.Errorf("unknown transaction kind %d", k)
	}
	watch := s.watch(conn)
	q := watch.Begin(ctx)
	defer watch.End()
	for attempt := 1; ; attempt++ {
		err := run(q, conn)
		if err == nil || !Retryable(err) || attempt == maxAttempts || ctx.Err() != nil {
			if err != nil {
				err = fmt.Errorf("%s: %w", k, err)
			}
			return out, err
		}
		out.Retries++
	}
}

// watch returns the watch of session c, made anew for a session made again.
func (s *Session) watch(c *pgx.Conn) *pgops.SessionContext {
	w := &s.watches[0]
	if c == s.Read {
		w = &s.watches[1]
	}
	if *w == nil || (*w).Conn() != c.PgConn() {
		if *w != nil {
			(*w).Stop()
		}
		*w = pgops.NewSessionContext(c.PgConn())
	}
	return *w
}

// errRolledBack is how the New-Order bodies report the 1% intended rollback.
var errRolledBack = errors.New("new-order rolled back: unused item")

// newBatch returns the session's batch, emptied.
func (s *Session) newBatch() *pgx.Batch {
	s.batch.QueuedQueries = s.batch.QueuedQueries[:0]
	return &s.batch
}

// send pipelines b's statements to c in one round trip (one Sync: without a BEGIN among them
// they run as one implicit transaction) and counts them.
func (s *Session) send(ctx context.Context, c *pgx.Conn, b *pgx.Batch) pgx.BatchResults {
	s.stmts += b.Len()
	return c.SendBatch(ctx, b)
}

// finish closes a batch's results and, when f failed or the batch did, rolls back an
// explicit transaction still open on c. It returns f's error first.
func (s *Session) finish(ctx context.Context, c *pgx.Conn, br pgx.BatchResults, err error) error {
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil && c.PgConn().TxStatus() != 'I' && !c.IsClosed() {
		s.stmts++
		_, _ = c.Exec(context.WithoutCancel(ctx), "ROLLBACK")
	}
	return err
}

// queryRow sends one statement, counted.
func (s *Session) queryRow(ctx context.Context, c *pgx.Conn, sql string, args ...any) pgx.Row {
	s.stmts++
	return c.QueryRow(ctx, sql, args...)
}
