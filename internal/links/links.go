// Package links serves links with latency between a cluster's clients and its nodes, and on
// its replication connections: TCP relays of the Toxiproxy Go package (embedded, no HTTP
// API), each with a latency toxic of microsecond resolution on the server-to-client stream,
// so that every request-response round trip through a link takes the given latency longer,
// and, when asked, Toxiproxy's bandwidth toxic on each direction, so that each direction of
// each connection carries at most the given bytes per second.
// Relays cost CPU of their own (about 80 µs per round trip was measured here), so a cluster
// gets links only when it asks for latency, and only on the connections that need it.
// Relays (cut.go) are links without latency that a failover drill cuts and heals.
//
// Imports from agbench: only internal/agerr, internal/units.
package links

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/toxics"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/units"
)

// MaxLatency bounds a link's latency.
const MaxLatency = 10 * time.Second

// ToxicType is the name of agbench's latency toxic in Toxiproxy's registry.
const ToxicType = "agbench_latency"

// Latency is a latency toxic whose delay is in microseconds (Toxiproxy's own latency toxic
// counts whole milliseconds, too coarse for a LAN's 0.5 ms).
type Latency struct {
	Micros int64 `json:"latency_us"`
}

// GetBufferSize is the toxic's channel buffer, as Toxiproxy's latency toxic has.
func (t *Latency) GetBufferSize() int { return 1024 }

// Pipe delays every chunk until Micros after it arrived.
func (t *Latency) Pipe(stub *toxics.ToxicStub) {
	d := time.Duration(t.Micros) * time.Microsecond
	timer := time.NewTimer(0)
	<-timer.C
	defer timer.Stop()
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			if wait := d - time.Since(c.Timestamp); wait > 0 {
				timer.Reset(wait)
				select {
				case <-timer.C:
				case <-stub.Interrupt:
					stub.Output <- c
					return
				}
			}
			stub.Output <- c
		}
	}
}

func init() { toxics.Register(ToxicType, new(Latency)) }

// Link is one relay: it listens on Listen and forwards to Upstream.
type Link struct {
	Name     string `json:"name"`
	Listen   string `json:"listen"`
	Upstream string `json:"upstream"`
}

// Shape is what a link does to the bytes it carries: Latency added to each round trip (0:
// none) and Bandwidth, bytes per second in each direction of each connection (0: unlimited).
type Shape struct {
	Latency   time.Duration
	Bandwidth int64
}

// MinBandwidth is the smallest bandwidth a link takes: Toxiproxy's bandwidth toxic counts
// whole kilobytes (1000 bytes) per second.
const MinBandwidth = 1000

// ParseBandwidth reads --link-bandwidth: bytes per second with an optional binary unit and
// an optional "/s" (10M, 512K/s, 1.5M), at least MinBandwidth.
func ParseBandwidth(flag, s string) (int64, error) {
	n, err := units.ParseRate(s)
	if err != nil || n < MinBandwidth {
		return 0, agerr.BadInputf("%s %q: want bytes per second of at least %d, e.g. 10M (10 MiB/s)", flag, s, MinBandwidth)
	}
	return n, nil
}

// ParseLatency reads --link-latency: a duration from 1µs to MaxLatency ("0.5ms", "500us").
func ParseLatency(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d < time.Microsecond || d > MaxLatency {
		return 0, agerr.BadInputf("--link-latency %q: want a duration from 1us to %v, e.g. 0.5ms", s, MaxLatency)
	}
	return d, nil
}

// Server is a running set of links.
type Server struct {
	api     *toxiproxy.ApiServer
	mu      sync.Mutex
	proxies []*toxiproxy.Proxy
}

// Start starts every link with its shape: latency added to each round trip, bandwidth held in
// each direction (none of either for a relay: StartRelays). A link whose address is taken
// fails the whole start, and the links already started are stopped.
func Start(ls []Link, shape Shape) (*Server, error) {
	api := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	s := &Server{api: api}
	for _, l := range ls {
		p := toxiproxy.NewProxy(api, l.Name, l.Listen, l.Upstream)
		if err := api.Collection.Add(p, true); err != nil {
			s.Close()
			return nil, fmt.Errorf("link %s on %s: %w", l.Name, l.Listen, err)
		}
		s.mu.Lock()
		s.proxies = append(s.proxies, p)
		s.mu.Unlock()
		var toxics []string
		if shape.Latency > 0 {
			toxics = append(toxics, fmt.Sprintf(`{"name":"latency","type":%q,"stream":"downstream","attributes":{"latency_us":%d}}`, ToxicType, shape.Latency.Microseconds()))
		}
		if shape.Bandwidth > 0 {
			kb := max(shape.Bandwidth/1000, 1)
			for _, dir := range []string{"upstream", "downstream"} {
				toxics = append(toxics, fmt.Sprintf(`{"name":"bandwidth_%s","type":"bandwidth","stream":%q,"attributes":{"rate":%d}}`, dir, dir, kb))
			}
		}
		for _, toxic := range toxics {
			if _, err := p.Toxics.AddToxicJson(strings.NewReader(toxic)); err != nil {
				s.Close()
				return nil, fmt.Errorf("link %s: %s: %w", l.Name, toxic, err)
			}
		}
	}
	return s, nil
}

// Addr is the address the named link listens on ("" when there is none): a Listen with
// port 0 gets a free port, which it names.
func (s *Server) Addr(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.proxies {
		if p.Name == name {
			p.Lock()
			defer p.Unlock()
			return p.Listen
		}
	}
	return ""
}

// Close stops every link and closes its connections.
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.api.Collection.Clear()
	s.proxies = nil
}

// Serve runs the links until ctx ends.
func Serve(ctx context.Context, ls []Link, shape Shape) error {
	s, err := Start(ls, shape)
	if err != nil {
		return err
	}
	<-ctx.Done()
	s.Close()
	return nil
}
