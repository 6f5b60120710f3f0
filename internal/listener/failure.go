package listener

import (
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// Failure classifies why a session did not reach the forwarding state; metrics count
// sessions by it.
type Failure uint8

// Failures.
const (
	FailNone               Failure = iota
	FailBadStartup                 // malformed startup packet
	FailStartupTimeout             // the client was too slow in the startup phase
	FailClientGone                 // the client closed during the startup phase
	FailTLSHandshake               // the TLS handshake failed
	FailTLSRequired                // the client did not ask for TLS and the listener requires it
	FailBadIntent                  // an intent value the listener does not know
	FailNoTarget                   // no node may take the session (refusal)
	FailBackendUnreachable         // no candidate was left, and the last one tried could not be reached
	FailBackendStartup             // the backend ended the session before it was ready (auth failed, ...)
	FailShuttingDown               // the listener is closing
	FailBackendRefused             // every candidate refused the session at startup; the client got the last one's error
	FailBadCausalParam             // a malformed agbench.min_lsn or agbench.consistency
	FailCausalNoTarget             // no node of the routing list had replayed what the session must see
	FailCausalFuture               // agbench.min_lsn beyond the primary's WAL
	FailCausalNoPrimary            // the primary's WAL position, needed to route causally, could not be read
	FailRoleChanged                // the chosen node changed role while the session was routed, again and again
)

var failureNames = [...]string{"none", "bad_startup", "startup_timeout", "client_gone", "tls_handshake",
	"tls_required", "bad_intent", "no_target", "backend_unreachable", "backend_startup", "shutting_down", "backend_refused",
	"bad_causal_param", "causal_no_target", "causal_future_lsn", "causal_no_primary", "role_changed"}

func (f Failure) String() string {
	if int(f) < len(failureNames) {
		return failureNames[f]
	}
	return "unknown"
}

// SQLSTATEs the listener answers with, from PostgreSQL's errcodes.txt.
const (
	codeProtocolViolation = "08P01" // protocol_violation
	codeRejected          = "08004" // sqlserver_rejected_establishment_of_sqlconnection
	codeConnectionFailure = "08006" // connection_failure
	codeInvalidAuthSpec   = "28000" // invalid_authorization_specification
	codeInvalidParamValue = "22023" // invalid_parameter_value
	codeInvalidTextRepr   = "22P02" // invalid_text_representation
	codeCannotConnectNow  = "57P03" // cannot_connect_now
	codeTooManyConns      = "53300" // too_many_connections
	// codes the health probe reads
	codeInsufficientPrivilege = "42501" // insufficient_privilege
	codeUndefinedFunction     = "42883" // undefined_function
)

// sendError writes a FATAL ErrorResponse to the client; errors are ignored since the
// session ends either way.
func sendError(c net.Conn, code, msg, hint string) {
	b, err := (&pgproto3.ErrorResponse{
		Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: code, Message: msg, Hint: hint,
	}).Encode(nil)
	if err == nil {
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = c.Write(b)
	}
}
