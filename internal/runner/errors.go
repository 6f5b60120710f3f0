package runner

import (
	"context"
	"errors"
	"io"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// Classes of errors the server did not send a SQLSTATE for.
const (
	// ClassConnectionFailure is SQLSTATE 08006 (connection_failure): the operation failed
	// and the worker's session was lost with it (the server went away, the network broke).
	ClassConnectionFailure = "08006"
	// ClassClient is any other error of the client (a timeout, a bad value).
	ClassClient = "client"
)

// ErrNoSuccess ends a step whose window had not one successful operation: it measured
// nothing but errors (or nothing at all).
var ErrNoSuccess = errors.New("no successful operation in the window")

// sqlStater is an error that carries a SQLSTATE (pgconn.PgError has this method), found
// without the runner knowing the driver.
type sqlStater interface{ SQLState() string }

// Classify returns the class of a failed operation's error: the SQLSTATE the server sent;
// else ClassConnectionFailure when the worker's session was lost with it; else ClassClient.
func Classify(err error, lost bool) string {
	var s sqlStater
	if errors.As(err, &s) && s.SQLState() != "" {
		return s.SQLState()
	}
	if lost {
		return ClassConnectionFailure
	}
	return ClassClient
}

// ErrorClasses counts a window's failed operations by class, with their first and last time.
type ErrorClasses map[string]*result.ErrorClass

// Note counts one failed operation of class at time at.
func (e ErrorClasses) Note(class string, err error, at time.Time) {
	c := e[class]
	if c == nil {
		c = &result.ErrorClass{SQLState: class, Message: err.Error(), First: at}
		e[class] = c
	}
	c.Count++
	c.Last = at
}

// List returns the classes, most frequent first (then by SQLSTATE); nil when there are none.
func (e ErrorClasses) List() []result.ErrorClass {
	if len(e) == 0 {
		return nil
	}
	out := make([]result.ErrorClass, 0, len(e))
	for _, c := range e {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].SQLState < out[j].SQLState
	})
	return out
}

// Transient reports whether err says that the server could not be reached for now rather
// than that the work is wrong: a network error, the server closing the connection (EOF),
// SQLSTATE class 08 (connection exception),
// or the server shutting down or starting up (57P01, 57P02, 57P03). Other errors (bad SQL,
// a refused password, too many connections) are not waited out.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	switch c := Classify(err, false); {
	case strings.HasPrefix(c, "08"), c == "57P01", c == "57P02", c == "57P03":
		return true
	}
	return false
}
