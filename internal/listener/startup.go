package listener

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/agbench/agbench/internal/routing"
)

// Startup packet bounds, as the server's (MAX_STARTUP_PACKET_LENGTH in postmaster.c).
const (
	minStartupLen = 8
	maxStartupLen = 10000
)

// ProtocolError is a malformed startup packet.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return "protocol error: " + e.Msg }

// readStartup reads exactly one startup-phase packet (SSLRequest, GSSENCRequest,
// CancelRequest or StartupMessage) from r and decodes it with pgproto3. It reads no byte
// beyond the packet, so the connection can be handed on (to TLS, or forwarded) afterwards.
func readStartup(r io.Reader) (pgproto3.FrontendMessage, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := int64(int32(binary.BigEndian.Uint32(hdr[:])))
	if n < minStartupLen || n > maxStartupLen {
		return nil, &ProtocolError{fmt.Sprintf("invalid length of startup packet: %d (want %d..%d)", n, minStartupLen, maxStartupLen)}
	}
	pkt := make([]byte, n)
	copy(pkt, hdr[:])
	if _, err := io.ReadFull(r, pkt[4:]); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	msg, err := pgproto3.NewBackend(bytes.NewReader(pkt), io.Discard).ReceiveStartupMessage()
	if err != nil {
		return nil, &ProtocolError{err.Error()}
	}
	return msg, nil
}

// BadIntentError is an intent value the listener does not know.
type BadIntentError struct{ Value string }

func (e *BadIntentError) Error() string {
	return fmt.Sprintf("invalid value for parameter %q: %q (want read-only or read-write)", routing.IntentParam, e.Value)
}

// takeIntent finds the session's intent in its startup parameters (the agbench.intent
// parameter, or -c agbench.intent=... / --agbench.intent=... inside options), removes it
// from params, and returns it. readOnlyPort makes the intent read-only whatever was sent.
func takeIntent(params map[string]string, readOnlyPort bool) (routing.Intent, error) {
	values := takeParam(params, routing.IntentParam)
	intent := routing.ReadWrite
	for _, v := range values {
		i, err := routing.ParseIntent(v)
		if err != nil {
			return routing.ReadWrite, &BadIntentError{Value: v}
		}
		intent = i // the last one wins, as with repeated -c settings
	}
	if readOnlyPort {
		intent = routing.ReadOnly
	}
	return intent, nil
}

// takeParam removes a parameter of the listener's (given directly or inside options) and
// returns its values in the order a server would apply them.
func takeParam(params map[string]string, name string) []string {
	var values []string
	if v, ok := params[name]; ok {
		values = append(values, v)
		delete(params, name)
	}
	if opts, ok := params["options"]; ok {
		rest, vs := stripOption(opts, name)
		values = append(values, vs...)
		if strings.TrimSpace(rest) == "" {
			delete(params, "options")
		} else {
			params["options"] = rest
		}
	}
	return values
}

// stripOption removes every setting of name from a PostgreSQL options string (words
// separated by spaces, a backslash escaping the next character; a setting is
// "-c name=value", "-cname=value" or "--name=value") and returns what is left, with the
// other words untouched, and the values found.
func stripOption(opts, name string) (string, []string) {
	words := splitOptions(opts)
	var kept []string
	var values []string
	for i := 0; i < len(words); i++ {
		w := unescape(words[i])
		switch {
		case w == "-c" && i+1 < len(words):
			if v, ok := settingOf(unescape(words[i+1]), name); ok {
				values = append(values, v)
				i++
				continue
			}
		case strings.HasPrefix(w, "-c"):
			if v, ok := settingOf(w[2:], name); ok {
				values = append(values, v)
				continue
			}
		case strings.HasPrefix(w, "--"):
			if v, ok := settingOf(w[2:], name); ok {
				values = append(values, v)
				continue
			}
		}
		kept = append(kept, words[i])
	}
	return strings.Join(kept, " "), values
}

// settingOf returns value when kv is "name=value" (names compare case-insensitively, and
// '-' stands for '_' as in the server's --name=value).
func settingOf(kv, name string) (string, bool) {
	k, v, ok := strings.Cut(kv, "=")
	if !ok {
		return "", false
	}
	return v, strings.EqualFold(strings.ReplaceAll(k, "-", "_"), strings.ReplaceAll(name, "-", "_"))
}

// splitOptions splits options into raw words, keeping backslash escapes in them.
func splitOptions(s string) []string {
	var words []string
	var cur strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			cur.WriteByte(c)
			cur.WriteByte(s[i+1])
			i++
			in = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

func unescape(w string) string {
	if !strings.Contains(w, `\`) {
		return w
	}
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		if w[i] == '\\' && i+1 < len(w) {
			i++
		}
		b.WriteByte(w[i])
	}
	return b.String()
}
