package scan

import "testing"

func TestQuery(t *testing.T) {
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{Table: "customer", Rows: 1000000}, `SELECT * FROM "customer" LIMIT 1000000`},
		{Config{Table: "tpcc.customer"}, `SELECT * FROM "tpcc"."customer"`},
		{Config{Table: `we"ird; DROP TABLE x`, Rows: 5}, `SELECT * FROM "we""ird; DROP TABLE x" LIMIT 5`},
	}
	for _, c := range cases {
		if got := c.cfg.Query(); got != c.want {
			t.Errorf("%+v: %s, want %s", c.cfg, got, c.want)
		}
	}
}
