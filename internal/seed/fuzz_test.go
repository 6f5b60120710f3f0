package seed

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzManifestBytes(f *testing.F) {
	f.Add([]byte(`{"PostgreSQL-Backup-Manifest-Version": 1, "Files": [{"Path": "a", "Size": 3}]}`))
	f.Add([]byte(`{"Files": null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, _, err := ManifestBytes(b)
		if err == nil && n < 0 {
			t.Fatalf("negative total %d", n)
		}
	})
}

func FuzzParseCompression(f *testing.F) {
	for _, s := range []string{"none", "zstd:3", "server-lz4:level=1", "gzip:0", "x:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCompression(s)
		if err != nil {
			return
		}
		again, err := ParseCompression(c.String())
		if err != nil || again != c {
			t.Fatalf("%q -> %v does not round-trip: %v, %v", s, c, again, err)
		}
	})
}

// FuzzExtractTar feeds arbitrary tar streams to the restore: it may fail, but it must never
// write outside its target folder.
func FuzzExtractTar(f *testing.F) {
	f.Add(makeTar(f, map[string]string{"a/": "", "a/b": "x"}, []string{"a/", "a/b"}))
	f.Add(makeTar(f, map[string]string{"../x": "y"}, []string{"../x"}))
	f.Add(linkTar("l", "/tmp", "l/evil"))
	f.Fuzz(func(t *testing.T, b []byte) {
		root := t.TempDir()
		dest := filepath.Join(root, "dest")
		os.Mkdir(dest, 0o700)
		extractTar(bytes.NewReader(b), dest, nil)
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			if e.Name() != "dest" {
				t.Fatalf("wrote %s outside the target", e.Name())
			}
		}
		filepath.WalkDir(dest, func(p string, d os.DirEntry, err error) error {
			if err == nil && !strings.HasPrefix(p, dest) {
				t.Fatalf("%s outside", p)
			}
			return nil
		})
	})
}

// linkTar makes a stream with a symbolic link and then a file under it.
func linkTar(link, target, through string) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	tw.WriteHeader(&tar.Header{Name: link, Typeflag: tar.TypeSymlink, Linkname: target, Mode: 0o777})
	tw.WriteHeader(&tar.Header{Name: through, Typeflag: tar.TypeReg, Mode: 0o600, Size: 1})
	tw.Write([]byte("x"))
	tw.Close()
	return b.Bytes()
}
