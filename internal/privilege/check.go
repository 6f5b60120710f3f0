package privilege

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/target"
)

// Needs is what a command needs of the primary's login and of each standby's.
type Needs struct {
	// Command names the command in messages ("tpcc build").
	Command string
	Primary []Need
	Standby []Need
}

// Check connects to every server of t that needs something (the primary, or the listener
// that leads to it when there is no primary; the standbys) as the target's logins, and
// returns bad input naming, per server, the flag, the server, the login, what it lacks and
// the statements that give it; nil when every login holds what the command needs.
func Check(ctx context.Context, t *target.Target, n Needs) error {
	var errs []error
	if len(n.Primary) > 0 {
		flag, cs := t.FlagOfPrimary(), t.Primary
		if cs == "" {
			flag, cs = "--listener", t.Listener
		}
		if cs != "" {
			errs = append(errs, CheckServer(ctx, flag, cs, n.Command, n.Primary))
		}
	}
	if len(n.Standby) > 0 {
		for i, cs := range t.Standbys {
			errs = append(errs, CheckServer(ctx, t.FlagOfStandby(i), cs, n.Command, n.Standby))
		}
	}
	return agerr.Join(errs...)
}

// CheckServer checks needs on the server cs, which flag names.
func CheckServer(ctx context.Context, flag, cs, command string, needs []Need) error {
	c, err := target.Connect(ctx, cs, "agbench")
	if err != nil {
		return fmt.Errorf("%s %s: %w", flag, result.Redact(cs), err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	l, missing, err := Lacks(ctx, c, needs)
	if err != nil {
		return fmt.Errorf("%s %s: %w", flag, result.Redact(cs), err)
	}
	if len(missing) == 0 {
		return nil
	}
	return agerr.BadInputf("%s %s: %s", flag, result.Redact(cs), Refusal(l, command, missing))
}

// Lacks reads the session's login and returns the needs it does not hold.
func Lacks(ctx context.Context, c *pgx.Conn, needs []Need) (*Login, []Need, error) {
	l, err := ReadLogin(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	if len(needs) == 0 {
		return l, nil, nil
	}
	exprs := make([]string, len(needs))
	holds := make([]bool, len(needs))
	dest := make([]any, len(needs))
	for i, n := range needs {
		exprs[i] = "(" + n.Holds + ")"
		dest[i] = &holds[i]
	}
	if err := c.QueryRow(ctx, "SELECT "+strings.Join(exprs, ", ")).Scan(dest...); err != nil {
		return l, nil, fmt.Errorf("read the login's privileges: %w", err)
	}
	var missing []Need
	for i, n := range needs {
		if !holds[i] {
			missing = append(missing, n)
		}
	}
	return l, missing, nil
}

// Refusal says what the login lacks for command and the statements that give it.
func Refusal(l *Login, command string, missing []Need) string {
	var what, grants, by []string
	for _, n := range missing {
		what = append(what, n.What(l)+" ("+n.Why+")")
		grants = append(grants, n.Grant(l))
		if !slices.Contains(by, n.By) {
			by = append(by, n.By)
		}
	}
	return fmt.Sprintf("the login %s (%s) lacks what %s needs: %s; as a superuser or %s, run on the primary: %s",
		l.Name, l.Role(), command, strings.Join(what, "; "), strings.Join(by, " or "), strings.Join(grants, " "))
}
