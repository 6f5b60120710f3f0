package routing

// The startup parameters by which a session tells an agbench listener how to route it
// (pgx sends unknown connection-string keys as startup parameters; a dotted name is a
// custom setting to PostgreSQL, so libpq can also send them as options=-c name=value).
// The listener removes them before it forwards the startup message.
const (
	// IntentParam declares the session's intent (agbench.intent=read-only).
	IntentParam = "agbench.intent"
	// MinLSNParam names the WAL position a read-intent session must see
	// (agbench.min_lsn=0/3000148).
	MinLSNParam = "agbench.min_lsn"
)
