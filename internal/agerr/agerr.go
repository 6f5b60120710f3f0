// Package agerr owns the typed errors that every agbench package returns and that the
// command layer alone maps to exit codes: bad input (2) and failed work (1).
// It imports nothing from agbench.
//
// Imports from agbench: none.
package agerr

import (
	"errors"
	"fmt"
)

// Exit statuses of the agbench binary.
const (
	ExitOK       = 0
	ExitFailure  = 1
	ExitBadInput = 2
)

// BadInputError says that what the user gave (a flag, a file, a name, a connection string)
// is wrong; nothing was made or changed because of it. Msg is the whole message; Err, when
// set, is the cause kept for errors.Is and errors.As.
type BadInputError struct {
	Msg string
	Err error
}

func (e *BadInputError) Error() string {
	if e.Msg == "" && e.Err != nil {
		return e.Err.Error()
	}
	return e.Msg
}

func (e *BadInputError) Unwrap() error { return e.Err }

// BadInputf returns a BadInputError with a formatted message. A %w verb wraps as fmt.Errorf does.
func BadInputf(format string, a ...any) error {
	err := fmt.Errorf(format, a...)
	return &BadInputError{Msg: err.Error(), Err: errors.Unwrap(err)}
}

// BadInput marks err as bad input; nil stays nil.
func BadInput(err error) error {
	if err == nil {
		return nil
	}
	var b *BadInputError
	if errors.As(err, &b) {
		return err
	}
	return &BadInputError{Err: err}
}

// IsBadInput reports whether err, or any error it wraps, is bad input.
func IsBadInput(err error) bool {
	var b *BadInputError
	return errors.As(err, &b)
}

// ExitCode maps an error to the binary's exit status.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case IsBadInput(err):
		return ExitBadInput
	default:
		return ExitFailure
	}
}

// Join collects several problems (each flag's) into one error; it is bad input when any is.
func Join(errs ...error) error {
	var kept []error
	bad := false
	for _, e := range errs {
		if e != nil {
			kept = append(kept, e)
			bad = bad || IsBadInput(e)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	j := errors.Join(kept...)
	if bad {
		return &BadInputError{Err: j}
	}
	return j
}
