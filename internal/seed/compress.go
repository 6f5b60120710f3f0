package seed

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/agbench/agbench/internal/agerr"
)

// Compression methods (pg_basebackup's server-side compression, PostgreSQL 15+).
const (
	CompressNone = "none"
	CompressGzip = "gzip"
	CompressLZ4  = "lz4"
	CompressZstd = "zstd"
)

// levelRange is the level range of each method as PostgreSQL 15 accepts it.
var levelRange = map[string][2]int{CompressGzip: {1, 9}, CompressLZ4: {1, 12}, CompressZstd: {1, 22}}

// Compression is a server-side compression method and level (0: the method's default).
type Compression struct {
	Method string `json:"method"`
	Level  int    `json:"level,omitempty"`
}

// ParseCompression reads none, gzip, lz4 or zstd, optionally with a level (zstd:3) and
// with pg_basebackup's "server-" prefix (server-zstd:3).
func ParseCompression(s string) (Compression, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.TrimPrefix(t, "server-")
	if strings.HasPrefix(t, "client-") {
		return Compression{}, agerr.BadInputf("--compress %q: agbench compresses on the server only (PostgreSQL's server-side compression); drop client-", s)
	}
	m, lv, hasLevel := strings.Cut(t, ":")
	c := Compression{Method: m}
	if m == "" || m == CompressNone {
		if hasLevel {
			return Compression{}, agerr.BadInputf("--compress %q: none takes no level", s)
		}
		return Compression{Method: CompressNone}, nil
	}
	r, ok := levelRange[m]
	if !ok {
		return Compression{}, agerr.BadInputf("--compress %q: want none, gzip, lz4 or zstd, optionally :level", s)
	}
	if hasLevel {
		lv = strings.TrimPrefix(lv, "level=")
		n, err := strconv.Atoi(lv)
		if err != nil || n < r[0] || n > r[1] {
			return Compression{}, agerr.BadInputf("--compress %q: %s takes a level from %d to %d", s, m, r[0], r[1])
		}
		c.Level = n
	}
	return c, nil
}

// None reports whether nothing is compressed.
func (c Compression) None() bool { return c.Method == "" || c.Method == CompressNone }

// String is the form ParseCompression reads: none, lz4, zstd:3.
func (c Compression) String() string {
	if c.None() {
		return CompressNone
	}
	if c.Level > 0 {
		return fmt.Sprintf("%s:%d", c.Method, c.Level)
	}
	return c.Method
}

// arg is pg_basebackup's --compress value, or "" for none.
func (c Compression) arg() string {
	if c.None() {
		return ""
	}
	if c.Level > 0 {
		return fmt.Sprintf("server-%s:%d", c.Method, c.Level)
	}
	return "server-" + c.Method
}

// ServerCompression lists the server-side compression methods a PostgreSQL server supports.
// Server-side compression came in PostgreSQL 15. lz4 and zstd depend on the build; the
// server names those it was built with among wal_compression's values (also 15+). gzip
// needs zlib, which every build we know of has.
func ServerCompression(ctx context.Context, c *pgx.Conn) (map[string]bool, int, error) {
	var version int
	var vals []string
	err := c.QueryRow(ctx, `SELECT current_setting('server_version_num')::int,
		coalesce((SELECT enumvals FROM pg_settings WHERE name = 'wal_compression'), '{}')`).Scan(&version, &vals)
	if err != nil {
		return nil, 0, err
	}
	m := map[string]bool{CompressNone: true}
	if version < 150000 {
		return m, version, nil
	}
	m[CompressGzip] = true
	for _, v := range vals {
		if v == CompressLZ4 || v == CompressZstd {
			m[v] = true
		}
	}
	return m, version, nil
}

// checkSupported says, as bad input, when the server cannot compress with c.
func checkSupported(c Compression, supported map[string]bool, version int) error {
	if c.None() || supported[c.Method] {
		return nil
	}
	if version < 150000 {
		return agerr.BadInputf("--compress %s: the primary runs PostgreSQL %d.%d, which has no server-side compression (15 and later have it); use --compress none",
			c, version/10000, version%10000/100)
	}
	var have []string
	for _, m := range []string{CompressGzip, CompressLZ4, CompressZstd} {
		if supported[m] {
			have = append(have, m)
		}
	}
	return agerr.BadInputf("--compress %s: the primary's PostgreSQL was built without %s; it supports %s", c, c.Method, strings.Join(have, ", "))
}

// decompressor returns a reader of the uncompressed bytes of a backup file, chosen by its
// name's extension (.gz, .lz4, .zst; none for .tar), and a function that releases it.
func decompressor(name string, r io.Reader) (io.Reader, func(), error) {
	br := bufio.NewReaderSize(r, 1<<20)
	switch {
	case strings.HasSuffix(name, ".tar"):
		return br, func() {}, nil
	case strings.HasSuffix(name, ".gz"):
		z, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		return z, func() { z.Close() }, nil
	case strings.HasSuffix(name, ".lz4"):
		return lz4.NewReader(br), func() {}, nil
	case strings.HasSuffix(name, ".zst"):
		z, err := zstd.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		return z, z.Close, nil
	}
	return nil, nil, fmt.Errorf("%s: not a tar file agbench knows (.tar, .tar.gz, .tar.lz4, .tar.zst)", name)
}
