package target

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// A login without CONNECT on the database is bad input naming the flag, the login, the
// database and the GRANT, not a failure to connect; with the grant, the check passes.
func TestCheckNamesTheConnectGrant(t *testing.T) {
	t.Parallel()
	topo := clustertest.Shared(t, clustertest.Options{})
	db := clustertest.OwnDatabase(t, topo)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Its sessions wait up to a minute to connect: the first to a new database builds its
	// caches, and at a CI load of 40 took over the 10 s default (the check's premise is
	// the grant, not how fast a session starts).
	const patient = " connect_timeout=60"
	su, err := Connect(ctx, topo.ConnString(topo.Primary(), db)+patient, "agbench-test")
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close(ctx)
	// The database is the ordinary login's: its owner keeps CONNECT through PUBLIC only.
	if _, err := su.Exec(ctx, "ALTER DATABASE "+db+" OWNER TO "+topo.Superuser+"; REVOKE CONNECT ON DATABASE "+db+" FROM PUBLIC"); err != nil {
		t.Fatal(err)
	}
	tgt := &Target{Primary: WithDatabase(clustertest.OrdinaryConnString(topo, topo.Primary()), db) + patient}
	err = tgt.Check(ctx)
	want := "the login app may not connect to database " + db + ` (permission denied for database "` + db +
		`"); as a superuser or the database's owner, run on the primary: GRANT CONNECT ON DATABASE "` + db + `" TO "app";`
	if !agerr.IsBadInput(err) || !strings.HasPrefix(err.Error(), "--primary host=") || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v\nwant bad input with %s", err, want)
	}
	if _, err := su.Exec(ctx, `GRANT CONNECT ON DATABASE "`+db+`" TO "app"`); err != nil {
		t.Fatal(err)
	}
	if err := tgt.Check(ctx); err != nil {
		t.Fatalf("after the grant: %v", err)
	}
}
