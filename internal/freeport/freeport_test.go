package freeport

import "testing"

// A port Consecutive handed out stays reserved for this process: another Consecutive (here, or in
// another test process, which takes the same lock) cannot have it, so no two tests running at
// once start servers on one port.
func TestConsecutiveReserves(t *testing.T) {
	base, err := Consecutive(3)
	if err != nil {
		t.Fatal(err)
	}
	for p := base; p < base+3; p++ {
		if f, ok := reserve(p); ok {
			if f != nil {
				f.Close()
			}
			t.Fatalf("port %d was handed out and could be reserved again", p)
		}
	}
	for i := 0; i < 50; i++ {
		b, err := Consecutive(3)
		if err != nil {
			t.Fatal(err)
		}
		if b+3 > base && b < base+3 {
			t.Fatalf("ranges %d+3 and %d+3 overlap", base, b)
		}
	}
}

// Runs side by side with TMPDIRs of their own (each clean-clone test run has one) share the
// reservations: a port reserved under one TMPDIR cannot be reserved under another.
func TestReservationsIgnoreTMPDIR(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	base, err := Consecutive(1)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", t.TempDir())
	if f, ok := reserve(base); ok {
		if f != nil {
			f.Close()
		}
		t.Fatalf("port %d, reserved under one TMPDIR, was reserved again under another", base)
	}
}
