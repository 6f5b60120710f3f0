package stress

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Params gives the parameters of one operation.
type Params interface {
	// Next draws the next operation's parameters. It may reuse buf, the slice it returned
	// the time before, whose contents the caller no longer needs (one fewer allocation
	// per operation).
	Next(rng *rand.Rand, buf [][]byte) [][]byte
	// Width is the number of parameters of every operation.
	Width() int
}

// FileParams are rows of parameters read from a CSV file, drawn at random per operation.
type FileParams struct{ Rows [][][]byte }

// Next draws a row.
func (p *FileParams) Next(rng *rand.Rand, _ [][]byte) [][]byte { return p.Rows[rng.IntN(len(p.Rows))] }

// Width is the number of fields of a row (all rows have as many).
func (p *FileParams) Width() int { return len(p.Rows[0]) }

// ParseParamFile reads a CSV file of parameters: one row per operation's parameters, every
// row with the same number of fields; an empty field is passed as an empty string. Lines
// starting with '#' are comments. Errors name the line.
func ParseParamFile(r io.Reader) (*FileParams, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = 0
	cr.ReuseRecord = false
	p := &FileParams{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		row := make([][]byte, len(rec))
		for i, f := range rec {
			row[i] = []byte(f)
		}
		p.Rows = append(p.Rows, row)
	}
	if len(p.Rows) == 0 {
		return nil, fmt.Errorf("no rows of parameters")
	}
	return p, nil
}

// RangeParams draws one integer parameter uniformly from [Lo, Hi].
type RangeParams struct{ Lo, Hi int64 }

// Next draws a value, written into buf's storage when it has one.
func (p RangeParams) Next(rng *rand.Rand, buf [][]byte) [][]byte {
	if len(buf) != 1 {
		buf = make([][]byte, 1)
	}
	buf[0] = strconv.AppendInt(buf[0][:0], p.Lo+rng.Int64N(p.Hi-p.Lo+1), 10)
	return buf
}

// Width is 1.
func (RangeParams) Width() int { return 1 }

// ParseRange parses "LO:HI" (LO <= HI).
func ParseRange(s string) (RangeParams, error) {
	a, b, ok := strings.Cut(s, ":")
	lo, err1 := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
	hi, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 64)
	if !ok || err1 != nil || err2 != nil || lo > hi || hi-lo < 0 || hi-lo == math.MaxInt64 {
		return RangeParams{}, fmt.Errorf("want LO:HI with whole numbers LO <= HI")
	}
	return RangeParams{Lo: lo, Hi: hi}, nil
}

// SplitQueries splits a query file into statements: a statement ends with a ';' at the end
// of a line; blank lines and lines starting with "--" between statements are skipped.
func SplitQueries(b []byte) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		q := strings.TrimSpace(cur.String())
		q = strings.TrimSpace(strings.TrimSuffix(q, ";"))
		if q != "" {
			out = append(out, q)
		}
		cur.Reset()
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		t := strings.TrimSpace(string(line))
		if cur.Len() == 0 && (t == "" || strings.HasPrefix(t, "--")) {
			continue
		}
		cur.WriteString(string(line))
		cur.WriteByte('\n')
		if strings.HasSuffix(t, ";") {
			flush()
		}
	}
	flush()
	return out
}
