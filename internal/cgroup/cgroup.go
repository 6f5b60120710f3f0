// Package cgroup models separate hosts on one machine with the kernel's control groups: a
// group per node, made at each hierarchy's root, with a CPU quota (and a set of CPUs) and a
// memory limit that the page cache is charged to. It speaks cgroup v2 where v2 is mounted
// with the cpu, cpuset and memory controllers, and v1 (the cpu, cpuacct, cpuset and memory
// hierarchies) where that is what the machine has. Optional IO limits go on the block device
// that holds a node's data (v1's blkio throttle, v2's io.max; io.go). It reads a group's use
// (CPU time, throttled periods, memory and page cache, IO) for the samplers and `cluster
// status`.
// Everything here needs root; Detect says so in words a user can act on.
//
// The kernel's CPU list format is read and written by internal/result, once.
//
// A budget and a device are records of topologies and status, declared in internal/status.
//
// Imports from agbench: only internal/agerr, internal/proc, internal/result, internal/status, internal/units.
package cgroup

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/proc"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/status"
)

// Period is the CPU quota's period in microseconds.
const Period = 100000

// MinCPUs is the smallest CPU budget a group may get (1 ms per 100 ms period).
const MinCPUs = 0.01

// v1Controllers are the v1 hierarchies a modelled host needs.
var v1Controllers = []string{"cpu", "cpuacct", "cpuset", "memory"}

// v2Controllers are the v2 controllers a modelled host needs.
var v2Controllers = []string{"cpu", "cpuset", "memory"}

// System is the machine's control-group layout as agbench uses it.
type System struct {
	// Version is 1 or 2.
	Version int
	// Roots maps a controller to its hierarchy's mount point (v1); under v2 every
	// controller maps to the one cgroup2 mount.
	Roots map[string]string
	// CPUs are the CPUs the root group may use, in order.
	CPUs []int
	// Mems is the root group's memory nodes (cpuset.mems), for v1 groups.
	Mems string
	// MemTotal is the machine's memory in bytes (/proc/meminfo).
	MemTotal int64
	// IORoot is where IO limits are set: v1's blkio hierarchy, or the cgroup2 mount when it
	// offers the io controller; "" when the machine offers neither.
	IORoot string
}

// Mount is one line of /proc/self/mountinfo that matters here.
type Mount struct {
	Point   string
	FSType  string
	Options []string // super options: the v1 controllers of a cgroup mount
}

// ParseMountinfo reads /proc/self/mountinfo's format and returns its cgroup and cgroup2 mounts.
func ParseMountinfo(r io.Reader) ([]Mount, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	all, err := proc.ParseMountinfo(data)
	if err != nil {
		return nil, err
	}
	return cgroupMounts(all), nil
}

// cgroupMounts keeps the cgroup and cgroup2 mounts of a mount table.
func cgroupMounts(all []proc.Mount) []Mount {
	var out []Mount
	for _, m := range all {
		if m.FSType == "cgroup" || m.FSType == "cgroup2" {
			out = append(out, Mount{Point: m.Point, FSType: m.FSType, Options: m.SuperOptions})
		}
	}
	return out
}

// Detect finds the control-group layout that can model hosts: v2 when a cgroup2 mount offers
// cpu, cpuset and memory, else the v1 hierarchies. Not root, or a missing controller, is
// bad input naming what is missing and how to get it.
func Detect() (*System, error) {
	if err := RequireRoot(); err != nil {
		return nil, err
	}
	return Inspect()
}

// RequireRoot is nil when agbench runs as root, else bad input saying that modelled hosts
// need it.
func RequireRoot() error {
	if os.Geteuid() != 0 {
		return agerr.BadInputf("modelled hosts (--host-cpus, --host-memory, --host-read-bps and the other --host-* limits) need root: agbench makes a control group per node at each hierarchy's root; run agbench as root (sudo)")
	}
	return nil
}

// Inspect is Detect without asking for root: it only reads the layout and the root group's
// CPUs and memory, so that a budget can be checked (System.Check) before root is asked for.
// Making groups still needs root.
func Inspect() (*System, error) {
	all, err := proc.Host.Mountinfo()
	if err != nil {
		return nil, err
	}
	s, err := layout(cgroupMounts(all), readControllers)
	if err != nil {
		return nil, err
	}
	if err := s.readRoot(); err != nil {
		return nil, err
	}
	return s, nil
}

func readControllers(mount string) []string {
	c, _ := proc.Host.CgroupWords(mount, "cgroup.controllers")
	return c
}

// layout chooses v2 or v1 from the mounts; controllers reads a cgroup2 mount's controllers.
func layout(mounts []Mount, controllers func(string) []string) (*System, error) {
	var v2, v2IO string
	var v2Missing []string
	v1 := map[string]string{}
	for _, m := range mounts {
		switch m.FSType {
		case "cgroup2":
			have := controllers(m.Point)
			var missing []string
			for _, c := range v2Controllers {
				if !slices.Contains(have, c) {
					missing = append(missing, c)
				}
			}
			if len(missing) == 0 && v2 == "" {
				v2 = m.Point
				if slices.Contains(have, "io") {
					v2IO = m.Point
				}
			} else if v2 == "" {
				v2Missing = missing
			}
		case "cgroup":
			for _, o := range m.Options {
				if slices.Contains(v1Controllers, o) || o == "blkio" {
					if _, ok := v1[o]; !ok {
						v1[o] = m.Point
					}
				}
			}
		}
	}
	if v2 != "" {
		roots := map[string]string{}
		for _, c := range v2Controllers {
			roots[c] = v2
		}
		return &System{Version: 2, Roots: roots, IORoot: v2IO}, nil
	}
	var missing []string
	for _, c := range v1Controllers {
		if v1[c] == "" {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		io := v1["blkio"]
		delete(v1, "blkio")
		return &System{Version: 1, Roots: v1, IORoot: io}, nil
	}
	how := "mount them (for example: mkdir -p /sys/fs/cgroup/memory && mount -t cgroup -o memory cgroup /sys/fs/cgroup/memory) " +
		"or boot with cgroup v2 and enable them at its root (echo '+cpu +cpuset +memory' > /sys/fs/cgroup/cgroup.subtree_control)"
	if len(v1) == 0 && v2Missing != nil {
		return nil, agerr.BadInputf("modelled hosts need the kernel's %s control-group controller(s): the cgroup2 mount does not offer them and no v1 hierarchy has them; %s",
			strings.Join(v2Missing, ", "), how)
	}
	return nil, agerr.BadInputf("modelled hosts need the kernel's %s control-group controller(s), which no cgroup mount offers; %s",
		strings.Join(missing, ", "), how)
}

func (s *System) readRoot() error {
	root := s.Roots["cpuset"]
	name := "cpuset.cpus"
	if s.Version == 2 {
		name = "cpuset.cpus.effective"
	}
	list, err := proc.Host.CgroupText(root, name)
	if err != nil {
		return fmt.Errorf("read the root group's CPUs: %w", err)
	}
	cpus, err := result.ParseCPUList(list)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(root, name), err)
	}
	if len(cpus) == 0 {
		cpus = make([]int, runtime.NumCPU())
		for i := range cpus {
			cpus[i] = i
		}
	}
	s.CPUs = cpus
	if s.Version == 1 {
		if s.Mems, err = proc.Host.CgroupText(root, "cpuset.mems"); err != nil {
			return err
		}
	}
	if m, err := proc.Host.Meminfo(); err == nil {
		s.MemTotal = m.TotalBytes // unread, 0: no check against the machine's memory
	}
	return nil
}

// Budget is one modelled host's budget (status.Budget, as topologies and status record it).
type Budget = status.Budget

// Limits of cpu.shares (v1).
const (
	MinCPUShares = 2
	MaxCPUShares = 262144
)

// CPUWeight converts v1 cpu.shares to v2's cpu.weight (1-10000), as container runtimes do.
func CPUWeight(shares int) int {
	return 1 + (min(max(shares, MinCPUShares), MaxCPUShares)-2)*9999/262142
}

// Check says whether the machine can give n hosts this budget each: CPUs at most the root
// group's and, together, no more than it has (else the hosts would share CPUs); memory,
// together, below the machine's.
func (s *System) Check(b Budget, n int) error {
	var errs []error
	have := float64(len(s.CPUs))
	switch {
	case b.CPUs < 0 || math.IsNaN(b.CPUs) || math.IsInf(b.CPUs, 0):
		errs = append(errs, agerr.BadInputf("--host-cpus %g: want a number of cores above 0", b.CPUs))
	case b.CPUs > 0 && b.CPUs < MinCPUs:
		errs = append(errs, agerr.BadInputf("--host-cpus %g: the smallest budget is %g of a core", b.CPUs, MinCPUs))
	case b.CPUs > have:
		errs = append(errs, agerr.BadInputf("--host-cpus %g: this machine has %d CPU(s) (%s)", b.CPUs, len(s.CPUs), result.CPUList(s.CPUs)))
	case b.CPUs*float64(n) > have+1e-9:
		errs = append(errs, agerr.BadInputf("--host-cpus %g for %d nodes is %.3g cores, more than this machine's %d: the hosts would share CPUs; give each at most %.2f",
			b.CPUs, n, b.CPUs*float64(n), len(s.CPUs), have/float64(n)))
	}
	if b.Memory < 0 {
		errs = append(errs, agerr.BadInputf("--host-memory: want a size above 0"))
	} else if s.MemTotal > 0 && b.Memory*int64(n) > s.MemTotal {
		errs = append(errs, agerr.BadInputf("--host-memory %d bytes for %d nodes is more than this machine's %d bytes", b.Memory, n, s.MemTotal))
	}
	if b.CPUShares != 0 && (b.CPUShares < MinCPUShares || b.CPUShares > MaxCPUShares) {
		errs = append(errs, agerr.BadInputf("--host-cpu-shares %d: want %d to %d", b.CPUShares, MinCPUShares, MaxCPUShares))
	}
	errs = append(errs, s.checkIO(b)...)
	return agerr.Join(errs...)
}

// Neighbour is a control group of agbench's that already exists on this machine (another
// cluster's node, perhaps another user's): the CPUs it is pinned to and its CPU budget.
type Neighbour struct {
	Name string
	CPUs []int
	// Cores is its CPU quota in cores (0: none).
	Cores float64
}

// Node is the node name a group of agbench's is named after (its last "-" part).
func (n Neighbour) Node() string { return n.Name[strings.LastIndex(n.Name, "-")+1:] }

// GroupPrefix starts the name of every control group agbench makes.
const GroupPrefix = "agbench-"

// Neighbours lists agbench's control groups at the cpuset hierarchy's root, whoever made
// them, with their CPUs and quotas. Groups it cannot read are left out.
func (s *System) Neighbours() []Neighbour {
	root := s.Roots["cpuset"]
	entries, _ := os.ReadDir(root)
	var out []Neighbour
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), GroupPrefix) {
			continue
		}
		list, err := proc.Host.CgroupText(filepath.Join(root, e.Name()), "cpuset.cpus")
		if err != nil {
			continue
		}
		cpus, err := result.ParseCPUList(list)
		if err != nil || len(cpus) == 0 {
			continue
		}
		n := Neighbour{Name: e.Name(), CPUs: cpus}
		if s.Version == 1 {
			n.Cores, _ = proc.Host.CFSQuota(filepath.Join(s.Roots["cpu"], e.Name()))
		} else {
			n.Cores, _ = proc.Host.CPUMax(filepath.Join(root, e.Name()))
		}
		out = append(out, n)
	}
	return out
}

// Place chooses the CPUs of one host per name: ceil(budget) CPUs each, the least loaded
// first, counting the CPU budgets of the neighbours already pinned there (a group without a
// quota counts a whole core over its CPUs) and of the hosts placed before; between CPUs
// loaded alike, the one with fewer neighbours of the same node name (so that two clusters'
// primaries go to different CPUs), then the lowest. A host without a CPU budget gets every
// CPU.
func (s *System) Place(b Budget, names []string, neighbours []Neighbour) [][]int {
	load := map[int]float64{}
	same := map[string]map[int]int{}
	add := func(cpus []int, cores float64, node string) {
		if cores <= 0 {
			cores = 1
		}
		for _, c := range cpus {
			load[c] += cores / float64(len(cpus))
			if same[node] == nil {
				same[node] = map[int]int{}
			}
			same[node][c]++
		}
	}
	for _, n := range neighbours {
		add(n.CPUs, n.Cores, n.Node())
	}
	out := make([][]int, len(names))
	for i, name := range names {
		if b.CPUs <= 0 {
			out[i] = slices.Clone(s.CPUs)
			continue
		}
		k := min(int(math.Ceil(b.CPUs-1e-9)), len(s.CPUs))
		cands := slices.Clone(s.CPUs)
		slices.SortStableFunc(cands, func(x, y int) int {
			if d := load[x] - load[y]; math.Abs(d) > 1e-9 {
				if d < 0 {
					return -1
				}
				return 1
			}
			return same[name][x] - same[name][y]
		})
		pick := cands[:k]
		slices.Sort(pick)
		out[i] = pick
		add(pick, b.CPUs, name)
	}
	return out
}

// Group is one node's control group, as recorded in the cluster's topology.
type Group struct {
	Name    string   `json:"name"`
	Version int      `json:"version"`
	Dirs    []string `json:"dirs"` // one per hierarchy (v1) or the one group (v2)
	CPU     string   `json:"cpu_dir"`
	CPUAcct string   `json:"cpuacct_dir"`
	Memory  string   `json:"memory_dir"`
	Budget  Budget   `json:"budget"`
	CPUList string   `json:"cpuset"`
	// IO is the group's folder where its IO limits are set and its IO counted (v1: in the
	// blkio hierarchy), and IODevice the disk they are on, when the budget limits IO.
	IO       string  `json:"io_dir,omitempty"`
	IODevice *Device `json:"io_device,omitempty"`
	// Beside names the other groups of agbench on this machine that the choice of its CPUs
	// weighed (Place's neighbours), none when there were none: groups made or removed
	// meanwhile (a test of another package running at the same time) change where a group
	// goes, and this says what the choice saw.
	Beside []string `json:"beside,omitempty"`
}

// NeighbourNames are the names of neighbours, for Group.Beside.
func NeighbourNames(nb []Neighbour) []string {
	var out []string
	for _, n := range nb {
		out = append(out, n.Name)
	}
	return out
}

// CPUs are the CPUs the group is pinned to (none when its CPU list cannot be read).
func (g *Group) CPUs() []int {
	cpus, _ := result.ParseCPUList(g.CPUList)
	return cpus
}

// Create makes the group name at each hierarchy's root and sets its budget; dev is the disk
// that holds the node's data (DeviceOf), needed when the budget limits IO. A group left by
// an earlier crash under the same name is reused when it holds no process.
func (s *System) Create(name string, b Budget, cpus []int, dev *Device) (g *Group, err error) {
	if strings.ContainsAny(name, "/.") || name == "" {
		return nil, fmt.Errorf("control group name %q", name)
	}
	if b.HasIO() && (dev == nil || s.IORoot == "") {
		return nil, fmt.Errorf("control group %s: IO limits need a device and an IO controller", name)
	}
	g = &Group{Name: name, Version: s.Version, Budget: b, CPUList: result.CPUList(cpus)}
	var dirs []string
	if b.HasIO() {
		g.IO, g.IODevice = filepath.Join(s.IORoot, name), dev
		if s.Version == 1 {
			dirs = append(dirs, g.IO)
		}
	}
	for _, c := range v1Controllers {
		root := s.Roots[c]
		if c == "cpuacct" && s.Version == 2 {
			root = s.Roots["cpu"]
		}
		d := filepath.Join(root, name)
		switch c {
		case "cpu":
			g.CPU = d
		case "cpuacct":
			g.CPUAcct = d
		case "memory":
			g.Memory = d
		}
		if !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	g.Dirs = dirs
	defer func() {
		if err != nil {
			g.Remove()
			g = nil
		}
	}()
	if s.Version == 2 {
		on := "+cpu +cpuset +memory"
		if b.HasIO() {
			on += " +io"
		}
		if err := write(filepath.Join(s.Roots["cpu"], "cgroup.subtree_control"), on); err != nil {
			return g, err
		}
	}
	for _, d := range dirs {
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return g, fmt.Errorf("make control group %s: %w", d, err)
		}
	}
	if s.Version == 1 {
		if err := write(filepath.Join(s.Roots["cpuset"], name, "cpuset.mems"), s.Mems); err != nil {
			return g, err
		}
	}
	return g, g.set(s, b)
}

// Set gives an existing group another budget on other CPUs, while its processes run: what
// Create sets. Budget{} on every CPU of the machine (System.CPUs) lifts every limit, so that
// the group only counts what its processes use. IO limits need a group made with them
// (Create with a budget that limits IO).
func (g *Group) Set(s *System, b Budget, cpus []int) error {
	if b.HasIO() && g.IO == "" {
		return fmt.Errorf("control group %s was made without IO limits", g.Name)
	}
	g.Budget, g.CPUList = b, result.CPUList(cpus)
	return g.set(s, b)
}

// Default CPU weights of a group: v1's cpu.shares and v2's cpu.weight.
const (
	defaultCPUShares = 1024
	defaultCPUWeight = 100
)

// set writes budget b and the group's CPU list to its files.
func (g *Group) set(s *System, b Budget) error {
	if s.Version == 1 {
		if err := write(filepath.Join(s.Roots["cpuset"], g.Name, "cpuset.cpus"), g.CPUList); err != nil {
			return err
		}
		if err := g.SetCPUs(b.CPUs); err != nil {
			return err
		}
		shares := defaultCPUShares
		if b.CPUShares > 0 {
			shares = b.CPUShares
		}
		if err := write(filepath.Join(g.CPU, "cpu.shares"), strconv.Itoa(shares)); err != nil {
			return err
		}
		m := "-1"
		if b.Memory > 0 {
			m = strconv.FormatInt(b.Memory, 10)
		}
		if err := write(filepath.Join(g.Memory, "memory.limit_in_bytes"), m); err != nil {
			return err
		}
	} else {
		if err := write(filepath.Join(g.CPU, "cpuset.cpus"), g.CPUList); err != nil {
			return err
		}
		if err := g.SetCPUs(b.CPUs); err != nil {
			return err
		}
		weight := defaultCPUWeight
		if b.CPUShares > 0 {
			weight = CPUWeight(b.CPUShares)
		}
		if err := write(filepath.Join(g.CPU, "cpu.weight"), strconv.Itoa(weight)); err != nil {
			return err
		}
		m := "max"
		if b.Memory > 0 {
			m = strconv.FormatInt(b.Memory, 10)
		}
		if err := write(filepath.Join(g.Memory, "memory.max"), m); err != nil {
			return err
		}
	}
	if g.IO != "" {
		return g.setIO(b)
	}
	return nil
}

// SetCPUs sets the group's CPU quota to cpus cores per Period (0: no quota). It does not
// change Budget, the budget the group was made with.
func (g *Group) SetCPUs(cpus float64) error {
	quota := strconv.FormatInt(int64(math.Round(cpus*Period)), 10)
	if g.Version == 1 {
		if err := write(filepath.Join(g.CPU, "cpu.cfs_period_us"), strconv.Itoa(Period)); err != nil {
			return err
		}
		if cpus <= 0 {
			quota = "-1"
		}
		return write(filepath.Join(g.CPU, "cpu.cfs_quota_us"), quota)
	}
	if cpus <= 0 {
		quota = "max"
	}
	return write(filepath.Join(g.CPU, "cpu.max"), quota+" "+strconv.Itoa(Period))
}

func write(path, value string) error {
	if err := os.WriteFile(path, []byte(value), 0); err != nil {
		return fmt.Errorf("write %q to %s: %w", value, path, err)
	}
	return nil
}

// Enter moves a process into the group in every hierarchy; its children, forked after,
// are born there.
func (g *Group) Enter(pid int) error {
	for _, d := range g.Dirs {
		if err := write(filepath.Join(d, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
			return err
		}
	}
	return nil
}

// Start starts cmd inside the group: a shell that waits on its stdin until it has been moved
// into the group, then execs cmd's program, so that the program and everything it forks are
// born there. cmd's Stdin must be unset; the caller Waits as usual.
func (g *Group) Start(cmd *exec.Cmd) error {
	if cmd.Stdin != nil {
		return errors.New("cgroup: Start takes a command without stdin")
	}
	cmd.Args = append([]string{"/bin/sh", "-c", `read go || exit 1; exec "$0" "$@"`, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = "/bin/sh"
	gate, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	if err := g.Enter(cmd.Process.Pid); err != nil {
		gate.Close() // the shell exits without starting anything
		cmd.Wait()
		return err
	}
	_, err = gate.Write([]byte("go\n"))
	gate.Close()
	return err
}

// Procs lists the processes in the group (from its first hierarchy).
func (g *Group) Procs() ([]int, error) {
	return proc.Host.CgroupProcs(g.Dirs[0])
}

// RemoveNamed removes (as Group.Remove does) every group at any hierarchy's root whose name
// starts with prefix; prefix must name agbench's groups of one owner (GroupPrefix and more).
func (s *System) RemoveNamed(prefix string) error {
	if !strings.HasPrefix(prefix, GroupPrefix) || len(prefix) <= len(GroupPrefix) {
		return fmt.Errorf("refusing to remove control groups named %q*", prefix)
	}
	roots := []string{}
	for _, r := range s.Roots {
		roots = append(roots, r)
	}
	if s.IORoot != "" {
		roots = append(roots, s.IORoot)
	}
	slices.Sort(roots)
	roots = slices.Compact(roots)
	byName := map[string]*Group{}
	for _, r := range roots {
		entries, _ := os.ReadDir(r)
		for _, e := range entries {
			if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
				continue
			}
			g := byName[e.Name()]
			if g == nil {
				g = &Group{Name: e.Name(), Version: s.Version}
				byName[e.Name()] = g
			}
			g.Dirs = append(g.Dirs, filepath.Join(r, e.Name()))
		}
	}
	var errs []error
	for _, g := range byName {
		errs = append(errs, g.Remove())
	}
	return errors.Join(errs...)
}

// Exists reports whether any of the group's folders is still there.
func (g *Group) Exists() bool {
	for _, d := range g.Dirs {
		if _, err := os.Stat(d); err == nil {
			return true
		}
	}
	return false
}

// Remove kills what still runs in the group (a server left by a crash: the group is
// agbench's, so is everything in it) and removes the group from every hierarchy. A group
// that is already gone is not an error.
func (g *Group) Remove() error {
	var errs []error
	for _, d := range g.Dirs {
		if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) {
			continue
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			pids, _ := proc.Host.CgroupProcs(d)
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			err := syscall.Rmdir(d)
			if err == nil || errors.Is(err, syscall.ENOENT) {
				break
			}
			if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
				errs = append(errs, fmt.Errorf("remove control group %s: %w", d, err))
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return errors.Join(errs...)
}

// Usage is what a group has used: cumulative counters since it was made, and the memory it
// holds now.
type Usage struct {
	At time.Time
	// CPUSeconds is CPU time used by the group's processes.
	CPUSeconds float64
	// Periods and Throttled count quota periods and those the group was throttled in;
	// ThrottledSeconds is the time its runnable processes waited for quota.
	Periods          int64
	Throttled        int64
	ThrottledSeconds float64
	// Memory is the memory charged to the group now (page cache included); Cache is its
	// page cache (file pages).
	Memory int64
	Cache  int64
	// IO is the group's IO on its device (HasIO: the group limits IO and was read).
	IO    IOCounters
	HasIO bool
}

// Read reads the group's use.
func (g *Group) Read() (Usage, error) {
	u := Usage{At: time.Now()}
	if g.IODevice != nil {
		io, err := g.readIO()
		if err != nil {
			return u, err
		}
		u.IO, u.HasIO = io, true
	}
	if g.Version == 1 {
		ns, err := proc.Host.CgroupInt(g.CPUAcct, "cpuacct.usage")
		if err != nil {
			return u, err
		}
		u.CPUSeconds = float64(ns) / 1e9
		st, err := proc.Host.CgroupStat(g.CPU, "cpu.stat")
		if err != nil {
			return u, err
		}
		u.Periods, u.Throttled = st["nr_periods"], st["nr_throttled"]
		u.ThrottledSeconds = float64(st["throttled_time"]) / 1e9
		if u.Memory, err = proc.Host.CgroupInt(g.Memory, "memory.usage_in_bytes"); err != nil {
			return u, err
		}
		ms, err := proc.Host.CgroupStat(g.Memory, "memory.stat")
		if err != nil {
			return u, err
		}
		u.Cache = ms["cache"]
		return u, nil
	}
	st, err := proc.Host.CgroupStat(g.CPU, "cpu.stat")
	if err != nil {
		return u, err
	}
	u.CPUSeconds = float64(st["usage_usec"]) / 1e6
	u.Periods, u.Throttled = st["nr_periods"], st["nr_throttled"]
	u.ThrottledSeconds = float64(st["throttled_usec"]) / 1e6
	if u.Memory, err = proc.Host.CgroupInt(g.Memory, "memory.current"); err != nil {
		return u, err
	}
	ms, err := proc.Host.CgroupStat(g.Memory, "memory.stat")
	if err != nil {
		return u, err
	}
	u.Cache = ms["file"]
	return u, nil
}

// Between is the use over the interval from a to b: CPU in cores (CPU seconds per second),
// the share of quota periods throttled, the share of wall time throttled.
type Between struct {
	Seconds         float64
	Cores           float64
	ThrottledShare  float64 // of periods (absent when no period passed: HasThrottle false)
	ThrottledTime   float64 // seconds processes waited for quota
	HasThrottle     bool
	Memory, Cache   int64 // at b
	CPUSecondsTotal float64
	// IO per second over the interval: bytes and operations read and written (HasIO: both
	// readings had them).
	ReadBPS, WriteBPS, ReadIOPS, WriteIOPS float64
	HasIO                                  bool
}

// Diff computes the use between two readings of one group.
func Diff(a, b Usage) Between {
	d := Between{Seconds: b.At.Sub(a.At).Seconds(), Memory: b.Memory, Cache: b.Cache, CPUSecondsTotal: b.CPUSeconds}
	if d.Seconds > 0 {
		d.Cores = (b.CPUSeconds - a.CPUSeconds) / d.Seconds
	}
	if p := b.Periods - a.Periods; p > 0 {
		d.HasThrottle = true
		d.ThrottledShare = float64(b.Throttled-a.Throttled) / float64(p)
	}
	d.ThrottledTime = b.ThrottledSeconds - a.ThrottledSeconds
	if a.HasIO && b.HasIO && d.Seconds > 0 {
		d.HasIO = true
		d.ReadBPS = float64(b.IO.ReadBytes-a.IO.ReadBytes) / d.Seconds
		d.WriteBPS = float64(b.IO.WriteBytes-a.IO.WriteBytes) / d.Seconds
		d.ReadIOPS = float64(b.IO.ReadOps-a.IO.ReadOps) / d.Seconds
		d.WriteIOPS = float64(b.IO.WriteOps-a.IO.WriteOps) / d.Seconds
	}
	return d
}
