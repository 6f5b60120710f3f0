package proc

import (
	"errors"
	"os"
	"testing"
)

func TestIO(t *testing.T) {
	io, err := fixture.IO(8749)
	if want := (IO{RChar: 1744440, WChar: 2217, ReadBytes: 147456, WriteBytes: 28672}); err != nil || io != want {
		t.Errorf("fixture: %+v, %v; want %+v", io, err, want)
	}
	if _, err := fixture.IO(1); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no process 1: %v, want a file that does not exist", err)
	}
	if _, err := rootWith(t, "7/io", "rchar: x\n").IO(7); err == nil {
		t.Error("a bad counter: no error")
	}
	// This process's own, on the machine: it read its test binary's pages at least.
	if io, err := Host.IO(os.Getpid()); err != nil || io.RChar == 0 {
		t.Errorf("this process: %+v, %v", io, err)
	}
}
