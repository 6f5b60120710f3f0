package experiment

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
)

// The GRANT that the warning of a hidden data_directory names runs as printed, as the
// superuser, for logins whose names need quoting (a reserved keyword, capitals, a dash).
func TestDataDirectoryHiddenGrantRuns(t *testing.T) {
	t.Parallel()
	topo := clustertest.Shared(t, clustertest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	su, err := topo.Connect(ctx, topo.Primary())
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close(context.Background())
	for _, name := range []string{"user", "Group", "app-ro"} {
		q := pgx.Identifier{name}.Sanitize()
		if _, err := su.Exec(ctx, "CREATE ROLE "+q); err != nil {
			t.Fatal(err)
		}
		msg := dataDirectoryHidden(result.PGNodeInfo{Name: "primary", Login: name})
		grant := msg[strings.LastIndex(msg, "(GRANT ")+1 : len(msg)-1]
		if _, err := su.Exec(ctx, grant); err != nil {
			t.Errorf("login %s: %s: %v", name, grant, err)
		}
		if _, err := su.Exec(ctx, "DROP ROLE "+q); err != nil {
			t.Fatal(err)
		}
	}
}
