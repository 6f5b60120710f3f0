package target

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/result"
)

// SQLSTATEs that make a connection failure bad input: the command line named a database
// that does not exist or credentials the server refuses.
const (
	stateInvalidPassword      = "28P01"
	stateInvalidAuthorization = "28000"
	stateInvalidCatalogName   = "3D000"
	// stateInsufficientPrivilege at connect: the login lacks CONNECT on the database.
	stateInsufficientPrivilege = "42501"
)

// Check connects to every server the target names and checks, before any load, that each
// is what its flag says it is: the primary accepts writes (pg_is_in_recovery() is false), a
// standby is in recovery, and every server knows the database and accepts the credentials.
// A mismatch is bad input that names the flag, the server (without its password) and what
// it is; a server that cannot be reached is an error of its own.
func (t *Target) Check(ctx context.Context) error {
	var errs []error
	if t.Primary != "" {
		errs = append(errs, checkRole(ctx, t.FlagOfPrimary(), t.Primary, false))
	}
	for i, cs := range t.Standbys {
		errs = append(errs, checkRole(ctx, t.FlagOfStandby(i), cs, true))
	}
	if t.Listener != "" {
		errs = append(errs, checkReach(ctx, "--listener", t.Listener))
	}
	return agerr.Join(errs...)
}

// FlagOfPrimary names the primary as the command line gave it, for messages: --primary,
// or the cluster and node of --cluster.
func (t *Target) FlagOfPrimary() string {
	if t.Topo != nil {
		return fmt.Sprintf("--cluster %s: node %s", t.Topo.Name, t.NameOfPrimary())
	}
	return "--primary"
}

// FlagOfStandby names the i-th standby as FlagOfPrimary names the primary.
func (t *Target) FlagOfStandby(i int) string {
	if t.Topo != nil {
		return fmt.Sprintf("--cluster %s: node %s", t.Topo.Name, t.NameOfStandby(i))
	}
	return "--standby"
}

// checkRole connects and compares pg_is_in_recovery() with what the flag says.
func checkRole(ctx context.Context, flag, cs string, wantStandby bool) error {
	c, err := Connect(ctx, cs, "agbench")
	if err != nil {
		return connectError(flag, cs, err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	var inRecovery bool
	if err := c.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&inRecovery); err != nil {
		return fmt.Errorf("%s %s: %w", flag, result.Redact(cs), err)
	}
	switch {
	case inRecovery && !wantStandby:
		return agerr.BadInputf("%s %s is a standby (pg_is_in_recovery() is true), not a primary: give the primary's connection string", flag, result.Redact(cs))
	case !inRecovery && wantStandby:
		return agerr.BadInputf("%s %s is a primary (pg_is_in_recovery() is false), not a standby", flag, result.Redact(cs))
	}
	return nil
}

// checkReach connects once (a listener routes sessions itself, so it has no role to check).
func checkReach(ctx context.Context, flag, cs string) error {
	c, err := Connect(ctx, cs, "agbench")
	if err != nil {
		return connectError(flag, cs, err)
	}
	c.Close(context.WithoutCancel(ctx))
	return nil
}

// CheckLogin connects to cs and returns bad input when the server refused the login or does
// not know the database; a server that cannot be reached now (down, and perhaps up later, as
// a listener's backends may be) is no error here.
func CheckLogin(ctx context.Context, flag, cs string) error {
	c, err := Connect(ctx, cs, "agbench")
	if err != nil {
		if e := connectError(flag, cs, err); agerr.IsBadInput(e) {
			return e
		}
		return nil
	}
	c.Close(context.WithoutCancel(ctx))
	return nil
}

// connectError makes a refused database or login bad input; other failures stay errors.
func connectError(flag, cs string, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case stateInvalidCatalogName:
			return agerr.BadInputf("%s %s: the database does not exist (%s)", flag, result.Redact(cs), pe.Message)
		case stateInvalidPassword, stateInvalidAuthorization:
			return agerr.BadInputf("%s %s: the server refused the login (%s)", flag, result.Redact(cs), pe.Message)
		case stateInsufficientPrivilege:
			if cfg, perr := pgx.ParseConfig(cs); perr == nil {
				return agerr.BadInputf("%s %s: the login %s may not connect to database %s (%s); as a superuser or the database's owner, run on the primary: GRANT CONNECT ON DATABASE %s TO %s;",
					flag, result.Redact(cs), cfg.User, cfg.Database, pe.Message, pgx.Identifier{cfg.Database}.Sanitize(), pgx.Identifier{cfg.User}.Sanitize())
			}
		}
	}
	return fmt.Errorf("%s %s: %w", flag, result.Redact(cs), err)
}
