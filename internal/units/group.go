package units

import (
	"strconv"
	"strings"
)

// GroupDigits separates the thousands of the whole part of a decimal number with commas:
// "1234567" -> "1,234,567", "-1234.5" -> "-1,234.5". A sign and a fraction stay as they are.
func GroupDigits(s string) string {
	sign := ""
	if s != "" && (s[0] == '-' || s[0] == '+') {
		sign, s = s[:1], s[1:]
	}
	whole, frac, dot := strings.Cut(s, ".")
	var b strings.Builder
	b.WriteString(sign)
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if dot {
		b.WriteString("." + frac)
	}
	return b.String()
}

// GroupInt writes n with its thousands separated by commas: 1234567 -> "1,234,567".
func GroupInt(n int64) string { return GroupDigits(strconv.FormatInt(n, 10)) }
