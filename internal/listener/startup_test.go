package listener

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/agbench/agbench/internal/routing"
)

func encode(t testing.TB, m interface{ Encode([]byte) ([]byte, error) }) []byte {
	t.Helper()
	b, err := m.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func packet(n int32, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(n))
	return append(b, body...)
}

func TestReadStartupMessages(t *testing.T) {
	sm := &pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "u", "database": "d"}}
	cancel := &pgproto3.CancelRequest{ProcessID: 42, SecretKey: []byte{1, 2, 3, 4}}
	stream := append(append(append(encode(t, &pgproto3.SSLRequest{}), encode(t, &pgproto3.GSSEncRequest{})...), encode(t, cancel)...), encode(t, sm)...)
	stream = append(stream, "trailing bytes stay unread"...)
	r := bytes.NewReader(stream)
	for _, want := range []string{"*pgproto3.SSLRequest", "*pgproto3.GSSEncRequest", "*pgproto3.CancelRequest", "*pgproto3.StartupMessage"} {
		m, err := readStartup(r)
		if err != nil {
			t.Fatalf("want %s: %v", want, err)
		}
		if got := fmtType(m); got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
		switch m := m.(type) {
		case *pgproto3.CancelRequest:
			if m.ProcessID != 42 || !bytes.Equal(m.SecretKey, []byte{1, 2, 3, 4}) {
				t.Fatalf("cancel request %+v", m)
			}
		case *pgproto3.StartupMessage:
			if m.Parameters["user"] != "u" || m.Parameters["database"] != "d" {
				t.Fatalf("startup %+v", m)
			}
		}
	}
	rest, _ := io.ReadAll(r)
	if string(rest) != "trailing bytes stay unread" {
		t.Fatalf("readStartup read past the packet: left %q", rest)
	}
}

func fmtType(m any) string {
	switch m.(type) {
	case *pgproto3.SSLRequest:
		return "*pgproto3.SSLRequest"
	case *pgproto3.GSSEncRequest:
		return "*pgproto3.GSSEncRequest"
	case *pgproto3.CancelRequest:
		return "*pgproto3.CancelRequest"
	case *pgproto3.StartupMessage:
		return "*pgproto3.StartupMessage"
	}
	return "other"
}

func TestReadStartupRejects(t *testing.T) {
	cases := []struct {
		name     string
		in       []byte
		protocol bool // a ProtocolError (answered to the client); else an I/O error
	}{
		{"short length", packet(4, nil), true},
		{"negative length", packet(-1, nil), true},
		{"huge length", packet(1<<30, nil), true},
		{"just over the limit", packet(10001, nil), true},
		{"unknown code", packet(8, []byte{0, 0, 0, 7}), true},
		{"unknown protocol 2.0", packet(12, []byte{0, 2, 0, 0, 'u', 0, 0, 0}), true},
		{"unterminated parameters", packet(13, []byte{0, 3, 0, 0, 'u', 's', 'e', 'r', 0}), true},
		{"truncated body", packet(100, []byte{0, 3, 0, 0}), false},
		{"truncated header", []byte{0, 0}, false},
		{"empty", nil, false},
	}
	for _, c := range cases {
		_, err := readStartup(bytes.NewReader(c.in))
		var pe *ProtocolError
		if err == nil || errors.As(err, &pe) != c.protocol {
			t.Errorf("%s: err = %v, want protocol error %v", c.name, err, c.protocol)
		}
	}
}

func FuzzReadStartup(f *testing.F) {
	sm := &pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "u", "options": "-c agbench.intent=read-only"}}
	f.Add(encode(f, sm))
	f.Add(encode(f, &pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "u",
		"options": "-c agbench.intent=ro -c agbench.min_lsn=0/3000148", "agbench.consistency": "session"}}))
	f.Add(encode(f, &pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "u", "agbench.min_lsn": "0/zz"}}))
	f.Add(encode(f, &pgproto3.SSLRequest{}))
	f.Add(encode(f, &pgproto3.CancelRequest{ProcessID: 1, SecretKey: []byte{9, 9, 9, 9}}))
	f.Add(packet(8, []byte{0, 3, 0, 2}))
	f.Add(packet(9, []byte{0, 3, 0, 0, 0}))
	f.Add([]byte{0, 0, 0, 8, 4, 210, 22, 47})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		m, err := readStartup(r)
		if err != nil {
			return
		}
		used := len(in) - r.Len()
		if used < minStartupLen || used > maxStartupLen {
			t.Fatalf("accepted a %d-byte packet", used)
		}
		if sm, ok := m.(*pgproto3.StartupMessage); ok {
			// What the listener forwards must encode, and takeIntent must not fail on
			// anything but the intent value.
			if _, err := takeIntent(sm.Parameters, false); err != nil {
				var bi *BadIntentError
				if !errors.As(err, &bi) {
					t.Fatalf("takeIntent: %v", err)
				}
			}
			if _, ok := sm.Parameters[routing.IntentParam]; ok {
				t.Fatal("intent parameter left in the startup message")
			}
			// A malformed agbench.min_lsn or agbench.consistency is a BadParamError naming
			// the parameter with a SQLSTATE for the client, never a panic, and both are
			// removed before the startup message is forwarded.
			if _, err := takeCausal(sm.Parameters, Eventual, time.Time{}); err != nil {
				var bp *BadParamError
				if !errors.As(err, &bp) || bp.Code == "" || !strings.Contains(err.Error(), bp.Param) {
					t.Fatalf("takeCausal: %v", err)
				}
			} else {
				for _, p := range []string{routing.MinLSNParam, ConsistencyParam} {
					if _, ok := sm.Parameters[p]; ok {
						t.Fatalf("%s left in the startup message", p)
					}
				}
			}
			if _, err := sm.Encode(nil); err != nil {
				t.Fatalf("re-encode: %v", err)
			}
		}
	})
}

func TestTakeIntent(t *testing.T) {
	cases := []struct {
		params   map[string]string
		roPort   bool
		want     routing.Intent
		wantOpts string // "" means options removed
	}{
		{map[string]string{"user": "u"}, false, routing.ReadWrite, ""},
		{map[string]string{"user": "u"}, true, routing.ReadOnly, ""},
		{map[string]string{"agbench.intent": "read-only"}, false, routing.ReadOnly, ""},
		{map[string]string{"agbench.intent": "read-write"}, true, routing.ReadOnly, ""},
		{map[string]string{"options": "-c agbench.intent=read-only"}, false, routing.ReadOnly, ""},
		{map[string]string{"options": "-cagbench.intent=ReadOnly -c work_mem=64MB"}, false, routing.ReadOnly, "-c work_mem=64MB"},
		{map[string]string{"options": "--agbench.intent=read-only  -c search_path=a\\ b"}, false, routing.ReadOnly, "-c search_path=a\\ b"},
		{map[string]string{"options": "-c work_mem=1MB -c agbench.intent=read-only -c agbench.intent=read-write"}, false, routing.ReadWrite, "-c work_mem=1MB"},
		{map[string]string{"options": "-c application_name=agbench.intent=read-only"}, false, routing.ReadWrite, "-c application_name=agbench.intent=read-only"},
	}
	for i, c := range cases {
		got, err := takeIntent(c.params, c.roPort)
		if err != nil || got != c.want {
			t.Errorf("case %d: %v, %v; want %v", i, got, err, c.want)
		}
		if _, ok := c.params[routing.IntentParam]; ok {
			t.Errorf("case %d: intent parameter kept", i)
		}
		opts, ok := c.params["options"]
		if (c.wantOpts == "") == ok || opts != c.wantOpts {
			t.Errorf("case %d: options = %q (present %v), want %q", i, opts, ok, c.wantOpts)
		}
	}
	_, err := takeIntent(map[string]string{"options": "-c agbench.intent=maybe"}, false)
	var bi *BadIntentError
	if !errors.As(err, &bi) || !strings.Contains(err.Error(), `"maybe"`) {
		t.Fatalf("bad intent: %v", err)
	}
}
