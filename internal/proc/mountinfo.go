package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Mount is what agbench keeps of one line of /proc/self/mountinfo.
type Mount struct {
	Point  string // the mount point, unescaped
	FSType string
	Source string // the mounted device or name, unescaped
	// SuperOptions are the file system's own options (a v1 cgroup mount's controllers).
	SuperOptions []string
}

// Mountinfo reads this process's /proc/self/mountinfo.
//
// By hand: procfs's GetMounts (v0.8.0) keeps mountinfo's octal escapes (\040 for a space)
// in the mount point and source, which agbench compares with real paths.
func (f FS) Mountinfo() ([]Mount, error) {
	data, err := os.ReadFile(f.Proc("self", "mountinfo"))
	if err != nil {
		return nil, err
	}
	return ParseMountinfo(data)
}

// ParseMountinfo reads mountinfo's lines: "id parent maj:min root point options
// [optional fields] - fstype source superoptions" (proc(5)).
func ParseMountinfo(data []byte) ([]Mount, error) {
	var out []Mount
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" {
			continue
		}
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			return nil, fmt.Errorf("mountinfo: no separator in %q", line)
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 {
			return nil, fmt.Errorf("mountinfo: short line %q", line)
		}
		out = append(out, Mount{Point: unescapeMount(f[4]), FSType: g[0], Source: unescapeMount(g[1]),
			SuperOptions: strings.Split(g[2], ",")})
	}
	return out, nil
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, …).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b bytes.Buffer
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
