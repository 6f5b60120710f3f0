package netns

import (
	"net/netip"
	"os/exec"
	"slices"
	"syscall"
	"testing"
)

func TestFirstFree(t *testing.T) {
	pool := netip.MustParsePrefix("10.213.0.0/16")
	p := func(s string) netip.Prefix { return netip.MustParsePrefix(s) }
	for _, c := range []struct {
		used []netip.Prefix
		want string
	}{
		{nil, "10.213.0.0/24"},
		{[]netip.Prefix{p("10.213.0.0/24"), p("192.0.2.0/24")}, "10.213.1.0/24"},
		{[]netip.Prefix{p("10.213.0.0/23")}, "10.213.2.0/24"},
		{[]netip.Prefix{p("10.0.0.0/8")}, ""},
		{[]netip.Prefix{p("10.213.0.7/32"), p("10.213.1.0/25")}, "10.213.2.0/24"},
	} {
		got, err := firstFree(pool, c.used)
		if c.want == "" {
			if err == nil {
				t.Errorf("used %v: got %v, want no subnet", c.used, got)
			}
			continue
		}
		if err != nil || got.String() != c.want {
			t.Errorf("used %v: got %v (%v), want %s", c.used, got, err, c.want)
		}
	}
}

func TestNames(t *testing.T) {
	br, v := Bridge("0123abcd"), Veth("0123abcd", 12)
	if len(br) > 15 || len(v) > 15 {
		t.Errorf("%s, %s: an interface name has at most 15 bytes", br, v)
	}
	if !isVeth(v, br) || isVeth(br, br) || isVeth(br+"v", br) || isVeth(br+"vx", br) || isVeth(Veth("0123abce", 1), br) {
		t.Errorf("isVeth tells veths wrong")
	}
}

func TestEnter(t *testing.T) {
	cmd := exec.Command("/bin/echo", "a", "b")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: &syscall.Credential{Uid: 105, Gid: 110}}
	Enter(cmd, "agbench-x-0123abcd-primary")
	want := []string{"nsenter", "--net=/run/netns/agbench-x-0123abcd-primary", "--setgid=110", "--setuid=105", "--", "/bin/echo", "a", "b"}
	if !slices.Equal(cmd.Args, want) || cmd.SysProcAttr.Credential != nil || !cmd.SysProcAttr.Setpgid {
		t.Errorf("args %q, credential %v; want %q and none", cmd.Args, cmd.SysProcAttr.Credential, want)
	}
}
