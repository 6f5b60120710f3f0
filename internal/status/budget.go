package status

import "fmt"

// Budget is one modelled host: a CPU quota in cores (0: none), a memory limit in bytes
// (0: none), page cache included, and IO limits on the device that holds its data (0: none).
type Budget struct {
	CPUs   float64 `json:"cpus,omitempty"`
	Memory int64   `json:"memory_bytes,omitempty"`
	// CPUShares is the group's weight against everything else runnable on its CPUs, in v1's
	// cpu.shares units (1024 is a plain process's; v2's cpu.weight is derived from it); 0
	// leaves the kernel's default. A quota is only a maximum: the weight is what lets a
	// host get its budget on a busy machine.
	CPUShares int `json:"cpu_shares,omitempty"`
	// ReadBPS and WriteBPS are bytes per second; ReadIOPS and WriteIOPS operations per second.
	ReadBPS   int64 `json:"read_bps,omitempty"`
	WriteBPS  int64 `json:"write_bps,omitempty"`
	ReadIOPS  int64 `json:"read_iops,omitempty"`
	WriteIOPS int64 `json:"write_iops,omitempty"`
}

// Device is a block device by its numbers, as the kernel's IO controllers name it.
type Device struct {
	Major uint32 `json:"major"`
	Minor uint32 `json:"minor"`
	// Name is the kernel's name for it (vda, sda, dm-0, nvme0n1).
	Name string `json:"name"`
}

// String is the device as the controllers' files write it: "major:minor".
func (d *Device) String() string { return fmt.Sprintf("%d:%d", d.Major, d.Minor) }

// HasIO reports whether the budget limits IO.
func (b Budget) HasIO() bool {
	return b.ReadBPS > 0 || b.WriteBPS > 0 || b.ReadIOPS > 0 || b.WriteIOPS > 0
}

// V1WriteNote says what a v1 IO limit does not hold, for status and docs.
const V1WriteNote = "cgroup v1 does not throttle buffered writes (the kernel writes them back outside the group): write limits hold direct writes only"
