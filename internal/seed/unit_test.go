package seed

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/proc"
)

func TestParseCompression(t *testing.T) {
	good := map[string]string{"none": "none", "": "none", "gzip": "gzip", "server-lz4": "lz4", "zstd:3": "zstd:3",
		"server-zstd:level=19": "zstd:19", "GZIP:9": "gzip:9", "lz4:12": "lz4:12"}
	for in, want := range good {
		c, err := ParseCompression(in)
		if err != nil || c.String() != want {
			t.Errorf("ParseCompression(%q) = %v, %v; want %s", in, c, err, want)
		}
	}
	for _, in := range []string{"brotli", "zstd:0", "zstd:23", "gzip:10", "lz4:x", "none:1", "client-gzip"} {
		if _, err := ParseCompression(in); !agerr.IsBadInput(err) {
			t.Errorf("ParseCompression(%q) = %v, want bad input", in, err)
		}
	}
	if c, _ := ParseCompression("zstd:3"); c.arg() != "server-zstd:3" {
		t.Errorf("arg %q", c.arg())
	}
	if c, _ := ParseCompression("none"); c.arg() != "" {
		t.Errorf("none's arg %q", c.arg())
	}
}

func TestCheckSupported(t *testing.T) {
	lz4Only := map[string]bool{CompressNone: true, CompressGzip: true, CompressLZ4: true}
	zstd3, _ := ParseCompression("zstd:3")
	err := checkSupported(zstd3, lz4Only, 150004)
	if !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "built without zstd") || !strings.Contains(err.Error(), "gzip, lz4") {
		t.Errorf("missing zstd: %v", err)
	}
	if err := checkSupported(Compression{Method: CompressGzip}, map[string]bool{CompressNone: true}, 140010); !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "14.0") {
		t.Errorf("old server: %v", err)
	}
	if err := checkSupported(Compression{Method: CompressNone}, map[string]bool{CompressNone: true}, 130000); err != nil {
		t.Errorf("none on an old server: %v", err)
	}
}

func TestProcCPU(t *testing.T) {
	if c := cpuOf(proc.Stat{UTime: 250, STime: 75, CUTime: 10, CSTime: 5}); c.UserSeconds != 2.6 || c.SystemSeconds != 0.8 || math.Abs(c.Seconds()-3.4) > 1e-9 {
		t.Fatalf("cpuOf = %+v", c)
	}
}

func TestManifestBytes(t *testing.T) {
	m := `{ "PostgreSQL-Backup-Manifest-Version": 1,
"Files": [
{ "Path": "backup_label", "Size": 225, "Last-Modified": "2026-11-22 00:00:00 GMT", "Checksum-Algorithm": "CRC32C", "Checksum": "aa" },
{ "Path": "base/1/1259", "Size": 8192, "Last-Modified": "2026-11-22 00:00:00 GMT", "Checksum-Algorithm": "CRC32C", "Checksum": "bb" }
],
"WAL-Ranges": [ { "Timeline": 1, "Start-LSN": "0/2000028", "End-LSN": "0/2000100" } ],
"Manifest-Checksum": "cc"}`
	n, files, err := ManifestBytes([]byte(m))
	if err != nil || n != 8417 || files != 2 {
		t.Fatalf("ManifestBytes = %d, %d, %v", n, files, err)
	}
	for _, bad := range []string{"", "{}", `{"PostgreSQL-Backup-Manifest-Version": 1, "Files": [{"Path": "x", "Size": -1}]}`} {
		if _, _, err := ManifestBytes([]byte(bad)); err == nil {
			t.Errorf("ManifestBytes(%q) accepted", bad)
		}
	}
}

// makeTar builds a tar stream with the given entries (name -> content; a trailing / is a folder).
func makeTar(t testing.TB, entries map[string]string, order []string) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, name := range order {
		content := entries[name]
		h := &tar.Header{Name: name, Mode: 0o600, Size: int64(len(content)), Typeflag: tar.TypeReg}
		if strings.HasSuffix(name, "/") {
			h.Typeflag, h.Mode, h.Size = tar.TypeDir, 0o700, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(content))
	}
	tw.Close()
	return b.Bytes()
}

func compressWith(t *testing.T, ext string, data []byte) []byte {
	var b bytes.Buffer
	var w io.WriteCloser
	switch ext {
	case ".tar":
		return data
	case ".tar.gz":
		w = gzip.NewWriter(&b)
	case ".tar.lz4":
		w = lz4.NewWriter(&b)
	case ".tar.zst":
		z, err := zstd.NewWriter(&b)
		if err != nil {
			t.Fatal(err)
		}
		w = z
	}
	w.Write(data)
	w.Close()
	return b.Bytes()
}

func TestRestoreBackupEveryCompression(t *testing.T) {
	base := map[string]string{"PG_VERSION": "15\n", "base/": "", "base/1/": "", "base/1/1259": strings.Repeat("page", 4096), "backup_label": "START WAL LOCATION"}
	wal := map[string]string{"000000010000000000000002": strings.Repeat("w", 1000), "archive_status/": ""}
	for _, ext := range []string{".tar", ".tar.gz", ".tar.lz4", ".tar.zst"} {
		dir := t.TempDir()
		bdir := filepath.Join(dir, "backup")
		os.Mkdir(bdir, 0o700)
		os.WriteFile(filepath.Join(bdir, "base"+ext), compressWith(t, ext, makeTar(t, base, []string{"PG_VERSION", "base/", "base/1/", "base/1/1259", "backup_label"})), 0o600)
		os.WriteFile(filepath.Join(bdir, "pg_wal"+ext), compressWith(t, ext, makeTar(t, wal, []string{"000000010000000000000002", "archive_status/"})), 0o600)
		os.WriteFile(filepath.Join(bdir, "backup_manifest"), []byte("{}"), 0o600)
		files, err := backupFiles(bdir)
		if err != nil || len(files) != 2 || files[0].Under != "" || files[1].Under != "pg_wal" {
			t.Fatalf("%s: backupFiles = %+v, %v", ext, files, err)
		}
		data := filepath.Join(dir, "data")
		var read, written atomic.Int64
		n, err := restoreBackup(context.Background(), files, data, &read, &written)
		if err != nil {
			t.Fatalf("%s: %v", ext, err)
		}
		if n != 4*4096+3+18+1000 || written.Load() != n || read.Load() != files[0].Size+files[1].Size {
			t.Errorf("%s: extracted %d, written %d, read %d", ext, n, written.Load(), read.Load())
		}
		got, _ := os.ReadFile(filepath.Join(data, "base", "1", "1259"))
		w, _ := os.ReadFile(filepath.Join(data, "pg_wal", "000000010000000000000002"))
		if string(got) != base["base/1/1259"] || len(w) != 1000 {
			t.Errorf("%s: restored contents differ", ext)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := restoreBackup(ctx, files, filepath.Join(dir, "again"), &read, &written); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: restore after cancel = %v", ext, err)
		}
	}
}

func TestExtractTarRefusesEscapes(t *testing.T) {
	for _, name := range []string{"../evil", "/etc/evil", "a/../../evil"} {
		dest := filepath.Join(t.TempDir(), "d")
		os.Mkdir(dest, 0o700)
		_, err := extractTar(bytes.NewReader(makeTar(t, map[string]string{name: "x"}, []string{name})), dest, nil)
		if err == nil {
			t.Errorf("%q extracted", name)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(dest), "evil")); err == nil {
			t.Errorf("%q escaped", name)
		}
	}
	outside := t.TempDir()
	dest := filepath.Join(t.TempDir(), "d")
	os.Mkdir(dest, 0o700)
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	tw.WriteHeader(&tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: outside, Mode: 0o777})
	tw.WriteHeader(&tar.Header{Name: "l/evil", Typeflag: tar.TypeReg, Mode: 0o600, Size: 1})
	tw.Write([]byte("x"))
	tw.Close()
	if _, err := extractTar(&b, dest, nil); err == nil {
		t.Error("a file under a symbolic link was extracted")
	}
	if _, err := os.Stat(filepath.Join(outside, "evil")); err == nil {
		t.Error("wrote through a symbolic link")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "17000.tar"), nil, 0o600)
	if _, err := backupFiles(dir); err == nil {
		t.Error("a tablespace tar was accepted")
	}
}

func TestParseCompareAndPlan(t *testing.T) {
	base := Variant{Method: MethodDirect, Compress: Compression{Method: CompressNone}}
	vs, err := ParseCompare([]string{"method=direct,backup-restore", "compress=none,lz4,zstd:3"}, base)
	if err != nil || len(vs) != 6 || vs[0].Label() != "direct/none" || vs[5].Label() != "backup-restore/zstd:3" {
		t.Fatalf("ParseCompare = %v, %v", vs, err)
	}
	vs, err = ParseCompare([]string{"compress=none,gzip"}, base)
	if err != nil || len(vs) != 2 || vs[1].Label() != "direct/gzip" {
		t.Fatalf("compress only: %v, %v", vs, err)
	}
	for _, bad := range [][]string{{"speed=1"}, {"method="}, {"method=copy"}, {"compress=rar"}, {"method=direct", "method=direct"}, {"compress=lz4,lz4"}} {
		if _, err := ParseCompare(bad, base); !agerr.IsBadInput(err) {
			t.Errorf("ParseCompare(%v) = %v, want bad input", bad, err)
		}
	}
	runs := Plan([]Variant{{Method: "a"}, {Method: "b"}}, 2)
	var order []string
	for _, r := range runs {
		order = append(order, r.Variant.Method+string(rune('0'+r.Repeat)))
	}
	if strings.Join(order, ",") != "a0,b0,a1,b1" {
		t.Errorf("plan order %v", order)
	}
}

func TestHistoryPutAndReplace(t *testing.T) {
	dir := t.TempDir()
	a := Record{Standby: "s1", State: StateSeeding}
	if err := putRecord(dir, &a); err != nil || a.ID != 1 {
		t.Fatalf("put: %v, id %d", err, a.ID)
	}
	b := Record{Standby: "s2", State: StateSeeding}
	putRecord(dir, &b)
	a.State, a.Reason = StateFailed, "boom"
	if err := putRecord(dir, &a); err != nil {
		t.Fatal(err)
	}
	recs, err := History(dir)
	if err != nil || len(recs) != 2 || recs[0].State != StateFailed || recs[0].Reason != "boom" || recs[1].ID != 2 {
		t.Fatalf("history %+v, %v", recs, err)
	}
	if recs, err := History(t.TempDir()); err != nil || recs != nil {
		t.Fatalf("empty history: %v, %v", recs, err)
	}
}

func TestWaitCategory(t *testing.T) {
	cases := map[[2]string]string{
		{"IO", "BaseBackupRead"}:          "disk read (primary)",
		{"Client", "ClientWrite"}:         "network/receiver",
		{"Timeout", "BaseBackupThrottle"}: "max-rate throttle",
		{"", ""}:                          "CPU (sender)",
		{"IO", "DataFileRead"}:            "disk (DataFileRead)",
		{"LWLock", "WALWrite"}:            "LWLock:WALWrite",
	}
	for in, want := range cases {
		if got := waitCategory(in[0], in[1]); got != want {
			t.Errorf("waitCategory(%v) = %q, want %q", in, got, want)
		}
	}
}
