package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/listener"
	"github.com/agbench/agbench/internal/target"
)

// startRouting starts, for --compare routing=off,on, one in-process agbench listener per
// variant in front of the target's servers: routing off (read intent lands on the primary,
// as an availability group without a routing list) and routing on (read intent routed to
// the standbys by the default routing list). Both variants connect the same way, with read
// intent, through a listener, so that only routing differs.
func (p *loadPlan) startRouting(ctx context.Context) error {
	if !p.routing {
		return nil
	}
	cfg, err := p.listenerConfig()
	if err != nil {
		return err
	}
	p.routes = map[string]string{}
	for _, v := range p.sweep.Compare.Values {
		c := cfg
		c.Routing = v == "on"
		l, err := listener.Start(ctx, c)
		if err != nil {
			p.stopRouting()
			return fmt.Errorf("start the in-process listener (routing %s): %w", v, err)
		}
		p.listeners = append(p.listeners, l)
		host, port, _ := net.SplitHostPort(l.Addr().String())
		p.routes[v] = target.Redirect(p.tgt.Primary, host, port)
		if p.listenerAddr != "" {
			p.listenerAddr += "; "
		}
		p.listenerAddr += fmt.Sprintf("routing=%s %s", v, l.Addr())
	}
	return nil
}

// listenerConfig describes the target's servers to a listener on a free loopback port.
func (p *loadPlan) listenerConfig() (listener.Config, error) {
	var cfg listener.Config
	if p.tgt.Topo != nil {
		cfg = listener.ConfigFromTopology(p.tgt.Topo)
	} else {
		for i, cs := range append([]string{p.tgt.Primary}, p.tgt.Standbys...) {
			c, err := pgx.ParseConfig(cs)
			if err != nil {
				return cfg, err
			}
			name := "primary"
			if i > 0 {
				name = "standby" + strconv.Itoa(i)
			}
			cfg.Backends = append(cfg.Backends, listener.Backend{Name: name, Addr: net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port))), ProbeConnString: cs})
		}
	}
	cfg.Listen, cfg.ReadOnlyListen, cfg.Metrics = "127.0.0.1:0", "", ""
	return cfg, nil
}

func (p *loadPlan) stopRouting() {
	var errs []error
	for _, l := range p.listeners {
		errs = append(errs, l.Close())
	}
	p.listeners = nil
	_ = errors.Join(errs...)
}

// waitRoutes waits (up to a minute) until every in-process listener routes read intent
// where its variant sends it again, after the servers were restarted.
func (p *loadPlan) waitRoutes(ctx context.Context) error {
	deadline := time.Now().Add(time.Minute)
	for i, l := range p.listeners {
		wantStandby := p.sweep.Compare.Values[i] == "on" && len(p.tgt.Standbys) > 0
		for {
			name, _, err := l.Route(listener.ReadOnly)
			if err == nil && (name != p.primaryName()) == wantStandby {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("listener (routing %s) does not route after the restart: %v", p.sweep.Compare.Values[i], err)
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

func (p *loadPlan) primaryName() string {
	if p.tgt.Topo != nil {
		return p.tgt.Topo.Primary().Name
	}
	return "primary"
}
