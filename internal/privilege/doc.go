// Package privilege owns what each command needs of the login it connects as, and the
// check of it before anything is made: the needs of a command (Need: a privilege, the SQL
// that reads whether the login holds it, and the GRANT that gives it), what a login holds
// (Login: superuser, pg_monitor, pg_read_all_stats, replication), and Check, which reads
// both on every server a target names and refuses a command its login cannot run as bad
// input (exit 2) naming the flag, the server, the login and the exact statement to run.
//
// A privilege that only some figures need (pg_read_all_stats for replication lag, for
// instance) is no Need: the command runs and those figures are absent, naming the
// privilege, where they are measured. docs/privileges.md lists both, per command.
//
// It reads only the catalogue and the privilege functions (has_database_privilege,
// has_schema_privilege, has_table_privilege, pg_has_role) and never changes a server. It
// must not import the experiments, the workloads, the runner or the report.
//
// Imports from agbench: only internal/agerr, internal/result, internal/target.
package privilege
