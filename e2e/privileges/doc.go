// Package privileges is the privilege matrix, end to end: the commands that connect to a
// cluster (tpcc build, run and check, stress, scan, the listener, an observe drill, and
// readahead's refusal of a cluster it did not make) run as a superuser, a pg_monitor login
// and a plain login, on a cluster agbench made, one built by hand (initdb and
// pg_basebackup) and a Patroni cluster. Each run either succeeds with its figures right or
// absent naming the privilege that would give them, or is refused before it makes anything
// (exit 2) naming the flag, the server, the login and the statements to run; a refused
// login is then given exactly those statements and the same command runs. docs/privileges.md
// is what it checks.
//
// The three clusters are made once and run side by side; on each, the commands that read
// cluster-wide figures (tpcc) run one after another, the others side by side, and the
// observe drill (a switchover per cycle) last.
//
// Imports from agbench: none.
package privileges
