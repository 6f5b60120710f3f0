package experiment

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/listener"
	"github.com/agbench/agbench/internal/runner"
	"github.com/agbench/agbench/internal/target"
)

// RoutingKey is the name of the compared knob of a routing comparison.
const RoutingKey = "routing"

// routeWait bounds waiting for the in-process listeners to route again after a restart.
const routeWait = time.Minute

// ParseRoutingCompare reads --compare for a command that compares routing only:
// "routing=off,on" (in either order).
func ParseRoutingCompare(s string) (*runner.Axis, error) {
	ax, err := runner.ParseCompare(s)
	if err != nil {
		return nil, err
	}
	if ax.Name != RoutingKey {
		return nil, agerr.BadInputf("--compare %q: this command compares routing=off,on", s)
	}
	for _, v := range ax.Values {
		if v != "off" && v != "on" {
			return nil, agerr.BadInputf("--compare routing=%s: routing is off or on", strings.Join(ax.Values, ","))
		}
	}
	return ax, nil
}

// CheckRoutingTarget says whether a routing comparison can run on the target: it starts its
// own listeners in front of the servers, so it needs the servers, not a listener.
func CheckRoutingTarget(tgt *target.Target) error {
	if tgt.Primary == "" || tgt.Listener != "" {
		return agerr.BadInputf("--compare routing=off,on starts its own listeners in front of the servers: give --cluster, or --primary and --standby, not --listener")
	}
	return nil
}

// Routes are the in-process agbench listeners of a routing comparison, one per variant in
// front of the target's servers: routing off (read intent lands on the primary, as an
// availability group without a routing list) and routing on (read intent routed to the
// standbys by the default routing list). Both variants connect the same way, with read
// intent, through a listener, so that only routing differs.
type Routes struct {
	tgt       *target.Target
	values    []string
	conns     map[string]string
	listeners []*listener.Listener
	// Addr describes the listeners for the result's topology.
	Addr string
}

// StartRoutes starts one listener per value of the routing axis and waits until each
// routes read intent where its variant sends it.
func StartRoutes(ctx context.Context, tgt *target.Target, ax *runner.Axis) (*Routes, error) {
	cfg, err := listenerConfig(tgt)
	if err != nil {
		return nil, err
	}
	r := &Routes{tgt: tgt, values: ax.Values, conns: map[string]string{}}
	for _, v := range ax.Values {
		c := cfg
		c.Routing = v == "on"
		l, err := listener.Start(ctx, c)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("start the in-process listener (routing %s): %w", v, err)
		}
		r.listeners = append(r.listeners, l)
		host, port, _ := net.SplitHostPort(l.Addr().String())
		r.conns[v] = target.Redirect(tgt.Primary, host, port)
		if r.Addr != "" {
			r.Addr += "; "
		}
		r.Addr += fmt.Sprintf("routing=%s %s", v, l.Addr())
	}
	if err := r.Wait(ctx); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// ConnString is where a read-intent session of the variant goes ("" for an unknown one).
func (r *Routes) ConnString(variant string) string {
	if r == nil || r.conns[variant] == "" {
		return ""
	}
	return target.WithIntent(r.conns[variant], target.ReadOnly)
}

// Close stops the listeners. It is safe on nil and more than once.
func (r *Routes) Close() error {
	if r == nil {
		return nil
	}
	var errs []error
	for _, l := range r.listeners {
		errs = append(errs, l.Close())
	}
	r.listeners = nil
	return errors.Join(errs...)
}

// Wait waits (up to a minute) until every listener routes read intent where its variant
// sends it, e.g. after the servers were restarted.
func (r *Routes) Wait(ctx context.Context) error {
	if r == nil {
		return nil
	}
	deadline := time.Now().Add(routeWait)
	primary := r.tgt.NameOfPrimary()
	for i, l := range r.listeners {
		wantStandby := r.values[i] == "on" && len(r.tgt.Standbys) > 0
		for {
			name, _, err := l.Route(listener.ReadOnly)
			if err == nil && (name != primary) == wantStandby {
				break
			}
			if time.Now().After(deadline) {
				why := fmt.Sprintf("it routes read intent to %s", name)
				if err != nil {
					why = err.Error()
				}
				return fmt.Errorf("the in-process listener of routing=%s did not route read intent as its variant needs within %v: %s", r.values[i], routeWait, why)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

// listenerConfig describes the target's servers to a listener on a free loopback port.
func listenerConfig(tgt *target.Target) (listener.Config, error) {
	var cfg listener.Config
	if tgt.Topo != nil {
		cfg = listener.ConfigFromTopology(tgt.Topo)
	} else {
		for i, cs := range append([]string{tgt.Primary}, tgt.Standbys...) {
			c, err := pgx.ParseConfig(cs)
			if err != nil {
				return cfg, err
			}
			name := tgt.NameOfPrimary()
			if i > 0 {
				name = tgt.NameOfStandby(i - 1)
			}
			cfg.Backends = append(cfg.Backends, listener.Backend{Name: name, Addr: net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port))), ProbeConnString: cs})
		}
	}
	if tgt.Topo != nil && cfg.RoutingList == "" {
		cfg.RoutingList = tgt.Topo.RoutingList
	}
	cfg.Listen, cfg.ReadOnlyListen, cfg.Metrics = "127.0.0.1:0", "", ""
	return cfg, nil
}
