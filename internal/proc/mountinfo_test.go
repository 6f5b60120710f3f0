package proc

import (
	"errors"
	"os"
	"slices"
	"testing"
)

func TestMountinfo(t *testing.T) {
	ms, err := fixture.Mountinfo()
	if err != nil || len(ms) != 21 {
		t.Fatalf("fixture: %d mounts, %v; want 21", len(ms), err)
	}
	i := slices.IndexFunc(ms, func(m Mount) bool { return m.Point == "/sys/fs/cgroup/cpu" })
	if i < 0 || ms[i].FSType != "cgroup" || ms[i].Source != "cgroup" || !slices.Equal(ms[i].SuperOptions, []string{"rw", "cpu"}) {
		t.Errorf("cpu hierarchy: %+v", ms)
	}
	// Optional fields before the separator, and octal escapes in the point and the source.
	ms, err = ParseMountinfo([]byte(`36 35 98:0 /mnt1 /a\040b rw,noatime master:1 - ext3 /dev/my\040disk rw,errors=continue` + "\n"))
	if want := (Mount{Point: "/a b", FSType: "ext3", Source: "/dev/my disk", SuperOptions: []string{"rw", "errors=continue"}}); err != nil || len(ms) != 1 ||
		ms[0].Point != want.Point || ms[0].Source != want.Source || !slices.Equal(ms[0].SuperOptions, want.SuperOptions) {
		t.Errorf("%+v, %v; want %+v", ms, err, want)
	}
	for _, bad := range []string{"garbage\n", "1 2 3:4 / /x rw - ext4 /dev/x\n", "1 2 3:4 / - ext4 /dev/x rw\n"} {
		if ms, err := ParseMountinfo([]byte(bad)); err == nil {
			t.Errorf("ParseMountinfo(%q) = %+v, no error", bad, ms)
		}
	}
	if _, err := rootWith(t, "stat", "").Mountinfo(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no mountinfo: %v", err)
	}
}
