package analyze

import (
	"fmt"
	"strconv"
	"strings"
)

// SLO is a latency objective such as p99<5ms: the named statistic of every step that
// counts must stay below (or at, with <=) the limit.
type SLO struct {
	Stat    string  `json:"stat"` // mean, p50, p95, p99 or p99.9
	LimitMs float64 `json:"limit_ms"`
	OrEqual bool    `json:"or_equal,omitempty"`
}

func (s SLO) String() string {
	op := "<"
	if s.OrEqual {
		op = "<="
	}
	return s.Stat + op + strconv.FormatFloat(s.LimitMs, 'f', -1, 64) + "ms"
}

// Met reports whether the step meets the objective.
func (s SLO) Met(st Step) bool {
	v := s.value(st)
	if s.OrEqual {
		return v <= s.LimitMs
	}
	return v < s.LimitMs
}

func (s SLO) value(st Step) float64 {
	switch s.Stat {
	case "mean":
		return st.MeanMs
	case "p50":
		return st.P50Ms
	case "p95":
		return st.P95Ms
	case "p99.9":
		return st.P999Ms
	default:
		return st.P99Ms
	}
}

var sloStats = []string{"p99.9", "mean", "p50", "p95", "p99"}

var sloUnits = map[string]float64{"us": 0.001, "µs": 0.001, "ms": 1, "s": 1000}

// ParseSLOs parses objectives such as "p99<5ms" or "p50<1ms,p99<=20ms". Errors give the
// 1-based position of the character at fault, counted in the whole text.
func ParseSLOs(text string) ([]SLO, error) {
	var out []SLO
	pos := 0
	for _, part := range strings.Split(text, ",") {
		s, err := parseSLO(part, pos)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
		pos += len(part) + 1
	}
	return out, nil
}

func parseSLO(text string, base int) (SLO, error) {
	at := func(i int, format string, a ...any) error {
		return fmt.Errorf("at %d: %s", base+i+1, fmt.Sprintf(format, a...))
	}
	i := 0
	for i < len(text) && text[i] == ' ' {
		i++
	}
	var s SLO
	for _, name := range sloStats {
		if strings.HasPrefix(text[i:], name) {
			s.Stat = name
			break
		}
	}
	if s.Stat == "" {
		return s, at(i, "want a statistic (mean, p50, p95, p99, p99.9), got %s", rest(text[i:]))
	}
	i += len(s.Stat)
	switch {
	case strings.HasPrefix(text[i:], "<="):
		s.OrEqual = true
		i += 2
	case strings.HasPrefix(text[i:], "<"):
		i++
	default:
		return s, at(i, "want < or <= after %s, got %s", s.Stat, rest(text[i:]))
	}
	j := i
	for j < len(text) && (text[j] >= '0' && text[j] <= '9' || text[j] == '.') {
		j++
	}
	v, err := strconv.ParseFloat(text[i:j], 64)
	if err != nil || v <= 0 {
		return s, at(i, "want a positive number, got %s", rest(text[i:]))
	}
	unit := strings.TrimRight(text[j:], " ")
	mult, ok := sloUnits[unit]
	if !ok {
		return s, at(j, "want a unit us, ms or s, got %s", rest(unit))
	}
	s.LimitMs = v * mult
	return s, nil
}

// rest quotes what follows, or says that nothing does.
func rest(s string) string {
	if s == "" {
		return "the end"
	}
	return strconv.Quote(s)
}
