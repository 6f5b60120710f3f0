// Package links serves links with latency between a cluster's clients and its nodes, and on
// its replication connections: TCP relays of the Toxiproxy Go package (embedded, no HTTP
// API), each with a latency toxic of microsecond resolution on the server-to-client stream,
// so that every request-response round trip through a link takes the given latency longer.
// Relays cost CPU of their own (about 80 µs per round trip was measured here), so a cluster
// gets links only when it asks for latency, and only on the connections that need it.
// Relays (cut.go) are links without latency that a failover drill cuts and heals.
//
// Imports from agbench: only internal/agerr.
package links

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/toxics"

	"github.com/agbench/agbench/internal/agerr"
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

// Start starts every link with latency added to each round trip (none when latency is 0). A link whose address is
// taken fails the whole start, and the links already started are stopped.
func Start(ls []Link, latency time.Duration) (*Server, error) {
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
		if latency <= 0 { // a relay (StartRelays)
			continue
		}
		toxic := fmt.Sprintf(`{"name":"latency","type":%q,"stream":"downstream","attributes":{"latency_us":%d}}`, ToxicType, latency.Microseconds())
		if _, err := p.Toxics.AddToxicJson(strings.NewReader(toxic)); err != nil {
			s.Close()
			return nil, fmt.Errorf("link %s: latency: %w", l.Name, err)
		}
	}
	return s, nil
}

// Close stops every link and closes its connections.
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.api.Collection.Clear()
	s.proxies = nil
}

// Serve runs the links until ctx ends.
func Serve(ctx context.Context, ls []Link, latency time.Duration) error {
	s, err := Start(ls, latency)
	if err != nil {
		return err
	}
	<-ctx.Done()
	s.Close()
	return nil
}

// WaitListening waits until every link accepts connections.
func WaitListening(ctx context.Context, ls []Link, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for _, l := range ls {
		for {
			c, err := net.DialTimeout("tcp", l.Listen, time.Second)
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("link %s does not listen on %s after %v: %w", l.Name, l.Listen, timeout, err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}
