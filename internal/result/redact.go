package result

import "regexp"

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

// RedactArgs returns a copy of a command line with Redact applied to every argument.
func RedactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = Redact(a)
	}
	return out
}
