package cluster

import (
	"context"
	"time"
)

// patroniAskTimeout bounds asking Patroni's REST APIs for the roles when a cluster is opened.
const patroniAskTimeout = 10 * time.Second

// Open loads the named cluster under home for a command that reads it. Under Patroni the
// nodes' roles are Patroni's now, in memory only (RolesFromPatroni: no lock needed); when no
// REST API answers within patroniAskTimeout, they stay as recorded. As Load, it returns the
// topology read even with an error.
func Open(ctx context.Context, home, name string) (*Topology, error) {
	t, err := Load(home, name)
	if err == nil && t.Patroni != nil {
		ctx, cancel := context.WithTimeout(ctx, patroniAskTimeout)
		t.RolesFromPatroni(ctx)
		cancel()
	}
	return t, err
}

// OpenLocked loads the named cluster under home and takes its lock for a change; call
// unlock when done. Under Patroni, which may have moved the primary since agbench last
// looked, the roles follow Patroni's and are saved (FollowPatroni); when no REST API answers
// within patroniAskTimeout (a stopped cluster), they stay as recorded.
func OpenLocked(ctx context.Context, home, name string) (t *Topology, unlock func(), err error) {
	if t, err = Load(home, name); err != nil {
		return nil, nil, err
	}
	if unlock, err = t.Lock(); err != nil {
		return nil, nil, err
	}
	if t.Patroni != nil {
		ctx, cancel := context.WithTimeout(ctx, patroniAskTimeout)
		_, _ = t.FollowPatroni(ctx)
		cancel()
	}
	return t, unlock, nil
}
