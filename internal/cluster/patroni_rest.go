package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/status"
)

// Patroni's REST API, as agbench reads it: GET /cluster (the members as the DCS knows them),
// GET /patroni (one member's own state), GET /config (its dynamic configuration) and POST
// /switchover.

// restTimeout bounds one request to a Patroni REST API.
const restTimeout = 3 * time.Second

var restClient = &http.Client{Timeout: restTimeout}

// GET /cluster as agbench reads it (status.PatroniView).
type (
	PatroniView   = status.PatroniView
	PatroniMember = status.PatroniMember
)

// PatroniState is GET /patroni of one member: its PostgreSQL's state and role as Patroni
// sees it (role "master" or "primary" on the leader, by Patroni's version; "replica").
type PatroniState struct {
	State    string `json:"state"`
	Role     string `json:"role"`
	Timeline int    `json:"timeline,omitempty"`
	// PostmasterStart changes when Patroni restarts its PostgreSQL in place.
	PostmasterStart string `json:"postmaster_start_time,omitempty"`
	// Xlog is the WAL position, in bytes: written (Location) on the primary, received and
	// replayed on a replica.
	Xlog struct {
		Location *uint64 `json:"location,omitempty"`
		Received *uint64 `json:"received_location,omitempty"`
		Replayed *uint64 `json:"replayed_location,omitempty"`
		Paused   bool    `json:"paused,omitempty"`
	} `json:"xlog"`
}

// IsPrimary reports whether the member says it runs as the writable primary.
func (s *PatroniState) IsPrimary() bool {
	return s.State == "running" && (s.Role == "master" || s.Role == "primary")
}

func getJSON(ctx context.Context, url string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, restTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := restClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	// Patroni answers GET /patroni with 503 and a body when its PostgreSQL is not running.
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("GET %s: %s: %v", url, resp.Status, err)
	}
	return nil
}

// PatroniClusterAt reads GET /cluster from one REST API.
func PatroniClusterAt(ctx context.Context, url string) (*PatroniView, error) {
	v := &PatroniView{From: url}
	if err := getJSON(ctx, strings.TrimRight(url, "/")+"/cluster", v); err != nil {
		return nil, err
	}
	return v, nil
}

// PatroniStateAt reads GET /patroni from one REST API.
func PatroniStateAt(ctx context.Context, url string) (*PatroniState, error) {
	var s PatroniState
	if err := getJSON(ctx, strings.TrimRight(url, "/")+"/patroni", &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// PatroniConfig is GET /config: Patroni's dynamic configuration as its DCS holds it (only
// what agbench reads of it).
type PatroniConfig struct {
	status.PatroniTiming
	SynchronousModeStrict bool `json:"synchronous_mode_strict"`
}

// PatroniConfigAt reads GET /config from the first of the REST APIs that answers; the error
// names every one that did not.
func PatroniConfigAt(ctx context.Context, urls ...string) (*PatroniConfig, error) {
	var errs []error
	for _, u := range urls {
		var c PatroniConfig
		err := getJSON(ctx, strings.TrimRight(u, "/")+"/config", &c)
		if err == nil {
			return &c, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("no Patroni REST API answered GET /config: %w", errors.Join(errs...))
}

// PatroniView reads GET /cluster from the first of the nodes' REST APIs that answers; the
// error names every one that did not.
func (t *Topology) PatroniView(ctx context.Context) (*PatroniView, error) {
	return PatroniViewAt(ctx, t.RESTURLs()...)
}

// PatroniViewAt reads GET /cluster from the first of the REST APIs that answers; the error
// names every one that did not.
func PatroniViewAt(ctx context.Context, urls ...string) (*PatroniView, error) {
	var errs []error
	for _, u := range urls {
		v, err := PatroniClusterAt(ctx, u)
		if err == nil {
			return v, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("no Patroni REST API answered: %w", errors.Join(errs...))
}

// FollowPatroni sets the nodes' roles to Patroni's (followPatroni) and saves the topology
// when one changed; it says whether one did.
func (t *Topology) FollowPatroni(ctx context.Context) (bool, error) {
	changed, err := t.followPatroni(ctx)
	if err != nil || !changed {
		return false, err
	}
	return true, t.Save()
}

// followPatroni sets the nodes' roles, in memory, to Patroni's: the running leader is the
// primary, the others standbys (Patroni names their slots). With no running leader the
// roles stay as they were.
func (t *Topology) followPatroni(ctx context.Context) (bool, error) {
	if t.Patroni == nil {
		return false, nil
	}
	v, err := t.PatroniView(ctx)
	if err != nil {
		return false, err
	}
	l := v.Leader()
	if l == nil || l.State != "running" || t.Node(l.Name) == nil {
		return false, nil
	}
	changed := false
	for i := range t.Nodes {
		n := &t.Nodes[i]
		role := RoleStandby
		if n.Name == l.Name {
			role = RolePrimary
		}
		if n.Role != role {
			n.Role, changed = role, true
		}
		n.Slot = ""
	}
	return changed, nil
}

// waitPatroniLeader waits until the named node runs as Patroni's leader.
func (t *Topology) waitPatroniLeader(ctx context.Context, name string, timeout time.Duration) error {
	n := t.Node(name)
	deadline := time.Now().Add(timeout)
	for {
		s, err := PatroniStateAt(ctx, n.RESTURL())
		if err == nil && s.IsPrimary() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s is not Patroni's running leader after %v (%+v, %v)%s", name, timeout, s, err, logTail(n.PatroniLog))
		}
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// PatroniWholeTimeout bounds a wait for Patroni's view to be whole.
const PatroniWholeTimeout = patroniLeaderTimeout + streamingTimeout

// PatroniWhole is what a whole view of a cluster under Patroni shows, read from its REST APIs
// (URLs): a running leader, every other member named in Names streaming (or running, as
// Patroni 3.0 says of a replica) and, with SyncMode, one of them its synchronous standby.
// With Names nil (a cluster known only by its REST APIs, whose member names the user may not
// have given), every member Patroni lists counts, and there must be one per URL.
type PatroniWhole struct {
	URLs     []string
	Names    []string
	SyncMode bool
}

// PatroniWhole is what t's whole view under Patroni shows.
func (t *Topology) PatroniWhole() PatroniWhole {
	return PatroniWhole{URLs: t.RESTURLs(), Names: t.NodeNames(), SyncMode: t.Patroni != nil && t.Patroni.SynchronousMode}
}

// Problem reads Patroni's view and says what keeps it from whole ("" when whole), with the
// view (nil when no REST API answered).
func (w PatroniWhole) Problem(ctx context.Context) (string, *PatroniView) {
	v, err := PatroniViewAt(ctx, w.URLs...)
	if err != nil {
		return err.Error(), nil
	}
	names := w.Names
	if names == nil {
		if len(v.Members) < len(w.URLs) {
			return fmt.Sprintf("%d members for %d REST APIs", len(v.Members), len(w.URLs)), v
		}
		for _, m := range v.Members {
			names = append(names, m.Name)
		}
	}
	return patroniWholeProblem(v, names, w.SyncMode), v
}

// Wait waits until Patroni's view is whole, at most timeout; the error says what kept it
// from whole last.
func (w PatroniWhole) Wait(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		problem, _ := w.Problem(ctx)
		if problem == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("Patroni's view not whole after %v: %s", timeout, problem)
		}
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// waitPatroniWhole waits until Patroni's view of t is whole (PatroniWhole); the topology's
// roles then follow Patroni's.
func (t *Topology) waitPatroniWhole(ctx context.Context, timeout time.Duration) error {
	if err := t.PatroniWhole().Wait(ctx, timeout); err != nil {
		return fmt.Errorf("cluster %s under Patroni: %w%s", t.Name, err, logTail(t.Primary().PatroniLog))
	}
	_, err := t.FollowPatroni(ctx)
	return err
}

// patroniWholeProblem says what keeps Patroni's view from whole ("" when whole): a running
// leader, every named member streaming (or running, as Patroni 3.0 says of a replica), and in
// synchronous mode a synchronous standby.
func patroniWholeProblem(v *PatroniView, names []string, syncMode bool) string {
	l := v.Leader()
	if l == nil || l.State != "running" {
		return "no running leader"
	}
	sync := false
	for _, name := range names {
		i := slices.IndexFunc(v.Members, func(m PatroniMember) bool { return m.Name == name })
		if i < 0 {
			return name + " is not a member"
		}
		m := v.Members[i]
		if m.Name == l.Name {
			continue
		}
		if m.State != "streaming" && m.State != "running" {
			return fmt.Sprintf("%s is %s", m.Name, m.State)
		}
		if m.Role == "sync_standby" {
			sync = true
		}
	}
	if syncMode && !sync {
		return "no synchronous standby yet"
	}
	return ""
}

// PatroniSwitchover asks the leader's Patroni for a switchover (POST /switchover) to the
// named candidate ("" lets Patroni choose) and returns its answer.
func (t *Topology) PatroniSwitchover(ctx context.Context, candidate string) (string, error) {
	return PatroniSwitchoverAt(ctx, t.Primary().RESTURL(), t.Primary().Name, candidate)
}

// PatroniSwitchoverAt asks the Patroni at url for a switchover from leader to candidate.
func PatroniSwitchoverAt(ctx context.Context, url, leader, candidate string) (string, error) {
	body := map[string]string{"leader": leader}
	if candidate != "" {
		body["candidate"] = candidate
	}
	b, _ := json.Marshal(body)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second) // Patroni answers when the switchover is done
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(url, "/")+"/switchover", bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("POST %s/switchover: %w", url, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	msg := strings.TrimSpace(string(out))
	if resp.StatusCode != http.StatusOK {
		return msg, fmt.Errorf("POST %s/switchover: %s: %s", url, resp.Status, msg)
	}
	return msg, nil
}

// patroniStatus is Patroni's view for `cluster status`, and the roles in memory follow it
// (the topology file is not written: status takes no lock). When no REST API answers, the
// view holds the error.
func (t *Topology) patroniStatus(ctx context.Context) *PatroniView {
	v, err := t.PatroniView(ctx)
	if err != nil {
		return &PatroniView{Error: err.Error()}
	}
	_, _ = t.followPatroni(ctx)
	return v
}

// RolesFromPatroni sets the nodes' roles to Patroni's in memory only (no lock needed; the
// file is not written), for commands that read the cluster: the primary they name is the
// one Patroni runs now. With no REST API answering, the roles stay as recorded.
func (t *Topology) RolesFromPatroni(ctx context.Context) {
	_, _ = t.followPatroni(ctx)
}
