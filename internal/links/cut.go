package links

import (
	"context"
	"errors"
	"fmt"
	"strings"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
)

// Relays are links without latency that can be cut and healed, one per upstream: a failover
// drill routes a cluster's replication connections through them to cut the primary off from
// its standbys.
type Relays struct {
	s      *Server
	byName map[string]*toxiproxy.Proxy
}

// cutToxics are the names of the two toxics of a cut, one for each direction.
var cutToxics = map[string]string{"cut_upstream": "upstream", "cut_downstream": "downstream"}

// StartRelays starts a relay for each link; a Listen with port 0 gets a free port (Addr).
func StartRelays(ls []Link) (*Relays, error) {
	s, err := Start(ls, Shape{})
	if err != nil {
		return nil, err
	}
	r := &Relays{s: s, byName: map[string]*toxiproxy.Proxy{}}
	for _, p := range s.proxies {
		r.byName[p.Name] = p
	}
	return r, nil
}

// Addr is the address the named relay listens on ("" when there is none).
func (r *Relays) Addr(name string) string { return r.s.Addr(name) }

// Cut makes the named relay silent, as a partitioned network is: every byte is dropped both
// ways (Toxiproxy's timeout toxic with no timeout), and connections, old and new, stay open
// and unanswered until Heal.
func (r *Relays) Cut(name string) error {
	p := r.byName[name]
	if p == nil {
		return fmt.Errorf("no relay %q", name)
	}
	for toxic, stream := range cutToxics {
		js := fmt.Sprintf(`{"name":%q,"type":"timeout","stream":%q,"attributes":{"timeout":0}}`, toxic, stream)
		if _, err := p.Toxics.AddToxicJson(strings.NewReader(js)); err != nil && !errors.Is(err, toxiproxy.ErrToxicAlreadyExists) {
			return fmt.Errorf("cut relay %s: %w", name, err)
		}
	}
	return nil
}

// Heal undoes Cut; removing the toxics closes the connections that lived through the cut
// (their streams lost bytes), so that their ends connect again. It is a no-op on a relay
// that is not cut.
func (r *Relays) Heal(name string) error {
	p := r.byName[name]
	if p == nil {
		return fmt.Errorf("no relay %q", name)
	}
	var errs []error
	for toxic := range cutToxics {
		if err := p.Toxics.RemoveToxic(context.Background(), toxic); err != nil && !errors.Is(err, toxiproxy.ErrToxicNotFound) {
			errs = append(errs, fmt.Errorf("heal relay %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// IsCut reports whether the named relay is cut.
func (r *Relays) IsCut(name string) bool {
	p := r.byName[name]
	if p == nil {
		return false
	}
	for toxic := range cutToxics {
		if p.Toxics.GetToxic(toxic) != nil {
			return true
		}
	}
	return false
}

// Close stops every relay and closes its connections.
func (r *Relays) Close() { r.s.Close() }
