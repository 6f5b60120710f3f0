package result

import (
	"regexp"
	"strings"
)

// Redacted replaces a removed credential.
const Redacted = "xxxxx"

var (
	// password=secret or password='sec ret' in a libpq keyword/value string, and the
	// password=secret parameter of a URL (a value stops at white space or '&').
	kvPassword = regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'?|[^\s'&]*)`)
	// postgres://user:secret@host or postgresql://...
	urlPassword = regexp.MustCompile(`(?i)(postgres(?:ql)?://[^:/@\s]*:)([^@\s]*)(@)`)
)

// Redact removes passwords from a connection string, URL or any argument holding one:
// password=... keywords, user:password@ in postgres:// URLs, and password= URL parameters.
func Redact(s string) string {
	s = kvPassword.ReplaceAllString(s, "${1}"+Redacted)
	s = urlPassword.ReplaceAllString(s, "${1}"+Redacted+"${3}")
	return s
}

var (
	// the :secret of postgres://user:secret@host
	urlUserPassword = regexp.MustCompile(`(?i)(postgres(?:ql)?://[^:/@\s]*):[^@\s]*@`)
	// a password= parameter of a URL's query, with the separator before it
	urlQueryPassword = regexp.MustCompile(`(?i)[?&]password=[^&\s]*`)
	// a password keyword of a keyword/value string, with the space before it
	kvPasswordWord = regexp.MustCompile(`(?i)\s*\bpassword\s*=\s*('(?:[^'\\]|\\.)*'?|[^\s']*)`)
)

// StripPassword removes passwords from a connection string, URL or any argument holding one,
// leaving the rest as it was, so that a recorded command line runs again when pasted and
// takes its password from PGPASSWORD or ~/.pgpass, as libpq does.
func StripPassword(s string) string {
	s = urlUserPassword.ReplaceAllString(s, "${1}@")
	s = urlQueryPassword.ReplaceAllStringFunc(s, func(m string) string {
		if m[0] == '?' {
			return "?"
		}
		return ""
	})
	s = strings.ReplaceAll(s, "?&", "?")
	s = kvPasswordWord.ReplaceAllString(s, "")
	return strings.TrimSuffix(s, "?")
}

// RedactArgs returns a copy of a command line with every password removed (StripPassword):
// what results, logs and reports record of a command.
func RedactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = StripPassword(a)
	}
	return out
}

// CommandLine is a recorded command line (Meta.Args) as a person pastes it: agbench, then
// each word, quoted for a POSIX shell where it must be.
func CommandLine(args []string) string {
	parts := []string{"agbench"}
	for _, a := range args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=,:@%+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
