package cluster

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
)

// Under Patroni, Open takes the roles Patroni gives now in memory only, OpenLocked saves
// them and holds the lock; with no REST API answering both keep the recorded roles.
func TestOpenFollowsPatroni(t *testing.T) {
	t.Parallel()
	const leader = "standby1"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"members":[{"name":"primary","role":"replica","state":"streaming"},{"name":"` + leader + `","role":"leader","state":"running"}]}`))
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	rest, _ := strconv.Atoi(port)

	home := t.TempDir()
	dir := ClusterDir(home, "p")
	save := func(restPort int) {
		t.Helper()
		topo := &Topology{Schema: TopologySchema, Name: "p", Dir: dir, Patroni: &PatroniInfo{Scope: "agbench-p"}, Nodes: []Node{
			{Name: "primary", Role: RolePrimary, Host: "127.0.0.1", RESTPort: restPort},
			{Name: "standby1", Role: RoleStandby, Host: "127.0.0.1", Slot: "standby1", RESTPort: restPort}}}
		if err := errors.Join(os.MkdirAll(dir, 0o700), topo.Save()); err != nil {
			t.Fatal(err)
		}
	}
	recorded := func() string {
		t.Helper()
		topo, err := Load(home, "p")
		if err != nil {
			t.Fatal(err)
		}
		return topo.Primary().Name
	}
	ctx := context.Background()

	save(rest)
	topo, err := Open(ctx, home, "p")
	if err != nil || topo.Primary().Name != "standby1" || recorded() != "primary" {
		t.Fatalf("Open: primary %s (%v), recorded %s; want standby1 in memory, primary on file", topo.Primary().Name, err, recorded())
	}
	topo, unlock, err := OpenLocked(ctx, home, "p")
	if err != nil || topo.Primary().Name != "standby1" || recorded() != "standby1" {
		t.Fatalf("OpenLocked: primary %s (%v), recorded %s; want standby1 both", topo.Primary().Name, err, recorded())
	}
	if _, _, err := OpenLocked(ctx, home, "p"); !errors.Is(err, ErrBusy) {
		t.Fatalf("a second OpenLocked while the first holds the lock: %v", err)
	}
	unlock()

	save(1) // nothing answers on port 1
	if topo, err = Open(ctx, home, "p"); err != nil || topo.Primary().Name != "primary" {
		t.Fatalf("Open with no REST API: %v %v", topo, err)
	}
	topo, unlock, err = OpenLocked(ctx, home, "p")
	if err != nil || topo.Primary().Name != "primary" || recorded() != "primary" {
		t.Fatalf("OpenLocked with no REST API: %v, recorded %s", err, recorded())
	}
	unlock()
	if _, err := Open(ctx, home, "none"); err == nil {
		t.Fatal("Open of no cluster")
	}
}
