package listener

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/agbench/agbench/internal/routing"
	"github.com/agbench/agbench/internal/status"
)

// Intent is what a session declared: ReadOnly or ReadWrite.
type Intent = routing.Intent

// Intents, as the routing package defines them.
const (
	ReadWrite = routing.ReadWrite
	ReadOnly  = routing.ReadOnly
)

// Listener is a running listener. Its methods are safe for concurrent use.
type Listener struct {
	cfg     Config
	router  *routing.Router
	health  *health
	metrics *metrics
	// watches read each node's WAL position while causal sessions wait on it.
	watches map[string]*lsnWatch
	// kfwd forwards sessions in the kernel after their startup phase; nil: the copy loops
	// do. forwarding says which, and why not the kernel.
	kfwd       *kernelForwarder
	forwarding string

	ln, roLn, httpLn net.Listener
	httpSrv          *http.Server

	cancelProbe context.CancelFunc
	probeDone   chan struct{}
	acceptWG    sync.WaitGroup
	sessWG      sync.WaitGroup

	mu       sync.Mutex
	closed   bool
	sessions map[*session]struct{}
	keys     map[string]*session // cancel key (pid and secret) -> session

	closeOnce sync.Once
	done      chan struct{}
}

// Start validates cfg, opens its ports, probes every backend once, and serves until
// Close is called or ctx ends. Bad configuration is agerr bad input; a port that cannot
// be opened is a plain error. Start returns once the first probe round has settled, so
// the first sessions are routed by real roles.
func Start(ctx context.Context, cfg Config) (*Listener, error) {
	cfg = cfg.withDefaults()
	pol, err := cfg.policy()
	if err != nil {
		return nil, err
	}
	l := &Listener{
		cfg:      cfg,
		router:   routing.NewRouter(pol),
		metrics:  newMetrics(),
		sessions: map[*session]struct{}{},
		keys:     map[string]*session{},
		done:     make(chan struct{}),
	}
	l.health = newHealth(cfg.Backends, cfg.ProbeInterval, l.emit, l.endSessions)
	l.watches = make(map[string]*lsnWatch, len(cfg.Backends))
	for _, b := range cfg.Backends {
		l.watches[b.Name] = newLSNWatch(b, l.health.timeout)
	}
	l.health.observe = func(node string, r lsnReading) { l.watches[node].observe(r) }
	if err := l.setForwarding(); err != nil {
		return nil, err
	}
	if err := l.listen(); err != nil {
		l.closeListeners()
		l.closeForwarder()
		return nil, err
	}
	probeCtx, cancel := context.WithCancel(context.Background())
	l.cancelProbe = cancel
	l.health.round(probeCtx)
	l.probeDone = make(chan struct{})
	go func() {
		defer close(l.probeDone)
		l.health.run(probeCtx)
	}()
	l.serve(l.ln, false)
	if l.roLn != nil {
		l.serve(l.roLn, true)
	}
	if l.httpLn != nil {
		l.httpSrv = &http.Server{Handler: l.httpHandler(), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = l.httpSrv.Serve(l.httpLn) }()
	}
	go func() {
		select {
		case <-ctx.Done():
			l.Close()
		case <-l.done:
		}
	}()
	return l, nil
}

func (l *Listener) listen() error {
	var err error
	if l.ln, err = net.Listen("tcp", l.cfg.Listen); err != nil {
		return fmt.Errorf("--listen %s: %w", l.cfg.Listen, err)
	}
	if a := l.cfg.ReadOnlyListen; a != "" {
		if l.roLn, err = net.Listen("tcp", a); err != nil {
			return fmt.Errorf("--read-only-listen %s: %w", a, err)
		}
	}
	if a := l.cfg.Metrics; a != "" {
		if l.httpLn, err = net.Listen("tcp", a); err != nil {
			return fmt.Errorf("--metrics %s: %w", a, err)
		}
	}
	return nil
}

func (l *Listener) serve(ln net.Listener, readOnlyPort bool) {
	l.acceptWG.Add(1)
	go func() {
		defer l.acceptWG.Done()
		var delay time.Duration
		for {
			c, err := ln.Accept()
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				// Out of file descriptors and the like: back off, as net/http does.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			delay = 0
			l.sessWG.Add(1)
			go func() {
				defer l.sessWG.Done()
				l.handle(c, readOnlyPort)
			}()
		}
	}()
}

// Addr is the main port's address.
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

// ReadOnlyAddr is the read-only port's address, or nil when there is none.
func (l *Listener) ReadOnlyAddr() net.Addr {
	if l.roLn == nil {
		return nil
	}
	return l.roLn.Addr()
}

// MetricsAddr is the HTTP address (metrics, status, route), or nil when there is none.
func (l *Listener) MetricsAddr() net.Addr {
	if l.httpLn == nil {
		return nil
	}
	return l.httpLn.Addr()
}

// Status returns what the listener knows of each backend.
func (l *Listener) Status() []NodeStatus { return l.health.status() }

// Route returns the backend (its name and address) that a new session of the given
// intent would go to now. It is the redirect path's answer (see Resolve).
func (l *Listener) Route(intent Intent) (name, addr string, err error) {
	d, err := l.router.Choose(intent, l.health.routingNodes())
	if err != nil {
		return "", "", err
	}
	return d.Node, l.backend(d.Node).Addr, nil
}

func (l *Listener) backend(name string) *Backend {
	for i := range l.cfg.Backends {
		if l.cfg.Backends[i].Name == name {
			return &l.cfg.Backends[i]
		}
	}
	return nil
}

// setForwarding loads the kernel forwarder as cfg.Forward asks.
func (l *Listener) setForwarding() error {
	switch l.cfg.Forward {
	case ForwardUser:
		l.forwarding = "user (as configured)"
		return nil
	case ForwardKernel, ForwardAuto:
	}
	k, err := newKernelForwarder()
	if err != nil {
		if l.cfg.Forward == ForwardKernel {
			return fmt.Errorf("--forward kernel: %w", err)
		}
		l.forwarding = "user (kernel unavailable: " + err.Error() + ")"
		return nil
	}
	l.kfwd, l.forwarding = k, "kernel"
	return nil
}

func (l *Listener) closeForwarder() {
	if l.kfwd != nil {
		l.kfwd.close()
	}
}

// Forwarding says how sessions are forwarded after their startup phase: "kernel", or
// "user (...)" with the reason.
func (l *Listener) Forwarding() string { return l.forwarding }

// State is the listener's settings and what it knows of each backend now, as it shows them
// when it starts.
func (l *Listener) State() status.ListenerState {
	st := status.ListenerState{Addr: l.Addr().String(), Routing: l.cfg.Routing, RoutingList: l.cfg.RoutingList, RoutingLists: l.cfg.RoutingLists,
		Consistency: l.cfg.Consistency.String(), CausalWait: l.cfg.CausalWait, MaxLag: l.cfg.MaxLag, Forwarding: l.forwarding, Nodes: l.Status(),
		ConsistencyShown: l.cfg.Consistency == Session || l.cfg.CausalWait != DefaultCausalWait}
	if a := l.ReadOnlyAddr(); a != nil {
		st.ReadOnlyAddr = a.String()
	}
	if a := l.MetricsAddr(); a != nil {
		st.MetricsAddr = a.String()
	}
	return st
}

// Done is closed when the listener has closed.
func (l *Listener) Done() <-chan struct{} { return l.done }

// Close stops accepting, waits up to DrainTimeout for sessions to end, cuts the rest,
// and stops the probes. It is idempotent and safe to call from several goroutines.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() {
		l.mu.Lock()
		l.closed = true
		l.mu.Unlock()
		l.closeListeners()
		l.acceptWG.Wait()
		drained := make(chan struct{})
		go func() {
			l.sessWG.Wait()
			close(drained)
		}()
		select {
		case <-drained:
		case <-time.After(l.cfg.DrainTimeout):
			l.mu.Lock()
			for s := range l.sessions {
				s.kill()
			}
			l.mu.Unlock()
			<-drained
		}
		if l.httpSrv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = l.httpSrv.Shutdown(ctx)
			cancel()
		}
		if l.cancelProbe != nil {
			l.cancelProbe()
			<-l.probeDone
		}
		for _, w := range l.watches {
			w.close()
		}
		l.closeForwarder()
		close(l.done)
	})
	return nil
}

func (l *Listener) closeListeners() {
	for _, ln := range []net.Listener{l.ln, l.roLn, l.httpLn} {
		if ln != nil {
			_ = ln.Close()
		}
	}
}

func (l *Listener) emit(e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	if l.cfg.OnEvent != nil {
		l.cfg.OnEvent(e)
	}
}

// endSessions cuts every session that went to a node in the role it has lost: as the
// primary (the node must not keep taking writes), or as a standby (it was promoted: the
// read-intent sessions are routed again when their clients reconnect). Sessions that
// went to a promoted node as the primary, read-write ones and read-intent ones routed to
// it by a list that names it, are not touched.
func (l *Listener) endSessions(r roleLoss) {
	asPrimary := r.was == routing.RolePrimary
	l.mu.Lock()
	n := 0
	for s := range l.sessions {
		if s.node == r.node && s.primary == asPrimary {
			s.kill()
			n++
		}
	}
	l.mu.Unlock()
	if asPrimary {
		l.metrics.addDemotionEnded(r.node, n)
	} else {
		l.metrics.addPromotionEnded(r.node, n)
	}
	switch {
	case n == 0:
	case asPrimary:
		l.emit(Event{Kind: "ended", Node: r.node, Msg: fmt.Sprintf("%d session(s) ended: the node is no longer the primary", n)})
	default:
		l.emit(Event{Kind: "ended", Node: r.node, Msg: fmt.Sprintf("%d read-intent session(s) ended: the node is no longer a standby (now %s); their clients are routed again when they reconnect", n, r.now)})
	}
}
