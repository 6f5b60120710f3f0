package listener

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/internal/cluster"
)

// ResolveError is the listener's answer when it cannot place a session: Status 503 is a
// routing refusal (no node of the list is available), 400 a bad intent.
type ResolveError struct {
	Status int
	Msg    string
}

func (e *ResolveError) Error() string {
	return fmt.Sprintf("agbench listener: %s (HTTP %d)", e.Msg, e.Status)
}

var resolveClient = &http.Client{Timeout: 10 * time.Second}

// Resolve asks the listener whose metrics address is addr (host:port, or an http:// URL)
// where a session of the given intent belongs now, and returns that node's host:port.
// This is the redirect path: the client then connects to the node directly and routing
// costs one round trip per session, not per query. Ask again after a connection error,
// since roles change on failover.
func Resolve(ctx context.Context, addr string, intent Intent) (string, error) {
	a, err := ResolveNode(ctx, addr, intent)
	return a.Addr, err
}

// ResolveNode is Resolve returning the node's name too.
func ResolveNode(ctx context.Context, addr string, intent Intent) (RouteAnswer, error) {
	return ResolveRequest(ctx, addr, RouteRequest{Intent: intent})
}

// RouteRequest is what a redirect asks the listener for.
type RouteRequest struct {
	Intent Intent
	// MinLSN, when not zero, is a WAL position the session must see (as routing.MinLSNParam).
	MinLSN uint64
	// Consistency, when set ("eventual" or "session"), overrides the listener's.
	Consistency string
}

// ResolveRequest is ResolveNode for a session that may have to see a WAL position: the
// listener answers with a node that has replayed it (waiting up to its causal wait), or
// refuses (a *ResolveError: 503 when no listed node caught up, 400 for a position beyond
// the primary's).
func ResolveRequest(ctx context.Context, addr string, req RouteRequest) (RouteAnswer, error) {
	base := addr
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	q := url.Values{"intent": {req.Intent.String()}}
	if req.MinLSN != 0 {
		q.Set("min_lsn", cluster.FormatLSN(req.MinLSN))
	}
	if req.Consistency != "" {
		q.Set("consistency", req.Consistency)
	}
	u := strings.TrimSuffix(base, "/") + "/route?" + q.Encode()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return RouteAnswer{}, err
	}
	resp, err := resolveClient.Do(hreq)
	if err != nil {
		return RouteAnswer{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return RouteAnswer{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return RouteAnswer{}, &ResolveError{Status: resp.StatusCode, Msg: strings.TrimSpace(string(body))}
	}
	var a RouteAnswer
	if err := json.Unmarshal(body, &a); err != nil || a.Addr == "" {
		return RouteAnswer{}, fmt.Errorf("agbench listener at %s: bad /route answer %q", addr, body)
	}
	return a, nil
}

// Redirect resolves the intent's node and points cfg at it (Host and Port, no
// fallbacks), keeping user, database, TLS and credentials as they were. pgx.ConnConfig
// and pgxpool.Config embed a pgconn.Config; a pool's BeforeConnect hook can call this
// for every new connection.
func Redirect(ctx context.Context, addr string, intent Intent, cfg *pgconn.Config) error {
	hp, err := Resolve(ctx, addr, intent)
	if err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(hp)
	if err != nil {
		return err
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return fmt.Errorf("agbench listener: bad port in %q", hp)
	}
	cfg.Host, cfg.Port, cfg.Fallbacks = host, uint16(p), nil
	return nil
}
