// Package netns makes nodes hosts of their own on one machine, as far as the network goes:
// a network namespace per node (`ip netns`), joined to the root namespace by a veth pair
// whose root end is a port of one bridge per cluster, with an address of its own on a
// private /24 that nothing else on the machine uses. Traffic flows between the namespaces
// and the root namespace only: no NAT, no default route out. It runs programs inside a
// namespace (nsenter), lists the processes in one, and removes what it made by name.
//
// It owns no cluster: the cluster package names the namespaces and links and records them.
// Everything here but the names needs root; RequireRoot says so.
//
// Imports from agbench: only internal/agerr, internal/proc.
package netns

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/proc"
)

// Dir is where `ip netns` keeps the named namespaces.
const Dir = "/run/netns"

// Pool is the range the clusters' subnets are taken from, one /24 each.
var Pool = netip.MustParsePrefix("10.213.0.0/16")

// LinkPrefix starts the name of every interface this package makes (an interface name has
// at most 15 bytes, so the names are short: LinkPrefix, a cluster's 8 hex digits, and for a
// veth "v" and the node's number).
const LinkPrefix = "agb"

// lockFile serialises choosing a subnet and claiming it (its bridge's address), so that two
// clusters made at once never take the same one.
const lockFile = "/run/lock/agbench-netns.lock"

// RequireRoot fails with bad input naming why root is needed.
func RequireRoot() error {
	if os.Geteuid() != 0 {
		return agerr.BadInputf("--netns needs root: agbench makes a network namespace per node (ip netns), veth pairs and a bridge, and starts each node inside its namespace; run agbench as root (sudo)")
	}
	return nil
}

// Path is the file that pins namespace ns.
func Path(ns string) string { return filepath.Join(Dir, ns) }

// Bridge is the name of the bridge of the cluster whose id (8 hex digits) is given.
func Bridge(id string) string { return LinkPrefix + id }

// Veth is the name of the root end of node i's veth pair in the cluster id.
func Veth(id string, i int) string { return LinkPrefix + id + "v" + strconv.Itoa(i) }

// ip runs the ip command with args and returns its error with its words.
func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Lock takes the machine's lock for choosing and claiming a subnet; call unlock when the
// subnet's bridge has its address.
func Lock() (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(lockFile), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(lockFile, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", lockFile, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// FreeSubnet returns the first /24 of Pool that overlaps no address of the root namespace's
// interfaces and no route of its main table (the default route aside). The caller holds Lock
// until the subnet is claimed.
func FreeSubnet() (netip.Prefix, error) {
	used, err := usedPrefixes()
	if err != nil {
		return netip.Prefix{}, err
	}
	return firstFree(Pool, used)
}

// firstFree returns the first /24 of pool that overlaps none of used.
func firstFree(pool netip.Prefix, used []netip.Prefix) (netip.Prefix, error) {
	base := pool.Masked().Addr().As4()
	for n := 0; n < 1<<(24-pool.Bits()); n++ {
		a := base
		a[2] += byte(n)
		cand := netip.PrefixFrom(netip.AddrFrom4(a), 24)
		if !slices.ContainsFunc(used, cand.Overlaps) {
			return cand, nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("no free /24 left in %s: every one is in use by an address or a route of this machine", pool)
}

// usedPrefixes are the IPv4 networks of the root namespace's addresses and routes.
func usedPrefixes() ([]netip.Prefix, error) {
	var used []netip.Prefix
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("list this machine's addresses: %w", err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if p, err := netip.ParsePrefix(n.String()); err == nil && p.Addr().Is4() {
				used = append(used, p.Masked())
			}
		}
	}
	routes, err := proc.Host.IPv4Routes()
	if err != nil {
		return nil, fmt.Errorf("read this machine's routes: %w", err)
	}
	for _, r := range routes {
		if r.Dest.Bits() > 0 {
			used = append(used, r.Dest)
		}
	}
	return used, nil
}

// AddBridge makes bridge name with address gw (its prefix is the subnet) and brings it up.
// A bridge of that name that exists is given the address if it lacks it.
func AddBridge(name string, gw netip.Prefix) error {
	if !LinkExists(name) {
		if err := ip("link", "add", name, "type", "bridge"); err != nil {
			return err
		}
	}
	if !hasAddr(name, gw) {
		if err := ip("addr", "add", gw.String(), "dev", name); err != nil {
			return err
		}
	}
	return ip("link", "set", name, "up")
}

// hasAddr reports whether interface name has address a (with a's prefix length).
func hasAddr(name string, a netip.Prefix) bool {
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		return false
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		return false
	}
	for _, x := range addrs {
		if x.String() == a.String() {
			return true
		}
	}
	return false
}

// LinkExists reports whether the root namespace has an interface of that name.
func LinkExists(name string) bool {
	_, err := net.InterfaceByName(name)
	return err == nil
}

// Exists reports whether namespace ns is there.
func Exists(ns string) bool {
	_, err := os.Stat(Path(ns))
	return err == nil
}

// Add makes namespace ns, when it is not there, with its loopback up.
func Add(ns string) error {
	if !Exists(ns) {
		if err := ip("netns", "add", ns); err != nil {
			return err
		}
	}
	return ip("-n", ns, "link", "set", "lo", "up")
}

// AddVeth joins namespace ns to bridge by a veth pair: veth in the root namespace, a port of
// the bridge; eth0 in ns, with address addr. Each step is skipped when done already.
func AddVeth(ns, veth, bridge string, addr netip.Prefix) error {
	if !LinkExists(veth) {
		if err := ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns); err != nil {
			return err
		}
	}
	if err := ip("link", "set", veth, "master", bridge, "up"); err != nil {
		return err
	}
	out, err := exec.Command("ip", "-n", ns, "-o", "addr", "show", "dev", "eth0").CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip -n %s addr show dev eth0: %v: %s", ns, err, bytes.TrimSpace(out))
	}
	if !bytes.Contains(out, []byte(" "+addr.String()+" ")) {
		if err := ip("-n", ns, "addr", "add", addr.String(), "dev", "eth0"); err != nil {
			return err
		}
	}
	return ip("-n", ns, "link", "set", "eth0", "up")
}

// List returns the namespaces whose name starts with prefix, sorted.
func List(prefix string) ([]string, error) {
	entries, err := os.ReadDir(Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// Links returns the root namespace's interfaces of the cluster id: its bridge and its veths.
func Links(id string) ([]string, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	var out []string
	br := Bridge(id)
	for _, i := range ifs {
		if i.Name == br || isVeth(i.Name, br) {
			out = append(out, i.Name)
		}
	}
	return out, nil
}

// isVeth reports whether name is Veth(id, i) for some i, given Bridge(id).
func isVeth(name, bridge string) bool {
	rest, ok := strings.CutPrefix(name, bridge+"v")
	if !ok || rest == "" {
		return false
	}
	_, err := strconv.Atoi(rest)
	return err == nil
}

// PIDs lists the processes whose network namespace is ns.
func PIDs(ns string) ([]int, error) {
	want, err := os.Stat(Path(ns))
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.Stat(filepath.Join("/proc", e.Name(), "ns", "net"))
		if err == nil && os.SameFile(st, want) {
			out = append(out, pid)
		}
	}
	return out, nil
}

// Delete removes namespace ns (its eth0 goes with it once no process is left inside).
// A namespace that is gone is not an error.
func Delete(ns string) error {
	if !Exists(ns) {
		return nil
	}
	if err := ip("netns", "delete", ns); err != nil && Exists(ns) {
		return err
	}
	return nil
}

// DeleteLink removes interface name from the root namespace (a veth takes its peer along).
// One that is gone is not an error, also when it goes while this runs: the kernel removes
// a veth whose peer's namespace was deleted a moment later, in the background.
func DeleteLink(name string) error {
	if !LinkExists(name) {
		return nil
	}
	if err := ip("link", "delete", name); err != nil && LinkExists(name) {
		return err
	}
	return nil
}

// Enter makes cmd run inside namespace ns: cmd's program is run by nsenter, which enters
// the namespace as root and then takes the user and group that cmd's credential names (the
// credential itself is cleared: only root may enter a namespace). It must be called before
// cmd starts, and after anything else that rewrites cmd's program.
func Enter(cmd *exec.Cmd, ns string) {
	args := []string{"nsenter", "--net=" + Path(ns)}
	if sp := cmd.SysProcAttr; sp != nil && sp.Credential != nil {
		args = append(args, "--setgid="+strconv.Itoa(int(sp.Credential.Gid)), "--setuid="+strconv.Itoa(int(sp.Credential.Uid)))
		sp.Credential = nil
	}
	args = append(args, "--", cmd.Path)
	cmd.Args = append(args, cmd.Args[1:]...)
	cmd.Path = "/usr/bin/nsenter"
	if p, err := exec.LookPath("nsenter"); err == nil {
		cmd.Path = p
	}
}
