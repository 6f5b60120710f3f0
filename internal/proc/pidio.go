package proc

import "github.com/prometheus/procfs"

// IO is what /proc/<pid>/io counts: bytes through read and write calls (sockets and pipes
// included: rchar, wchar) and bytes that reached the block layer (read_bytes, write_bytes).
type IO struct {
	RChar, WChar, ReadBytes, WriteBytes uint64
}

// IO reads /proc/<pid>/io (readable by the process's owner, or with ptrace's permission).
//
// Through procfs's Proc.IO: it reads each counter as the kernel writes it, in bytes.
func (f FS) IO(pid int) (IO, error) {
	pfs, err := procfs.NewFS(f.Proc())
	if err != nil {
		return IO{}, err
	}
	p, err := pfs.Proc(pid)
	if err != nil {
		return IO{}, err
	}
	io, err := p.IO()
	if err != nil {
		return IO{}, err
	}
	return IO{RChar: io.RChar, WChar: io.WChar, ReadBytes: io.ReadBytes, WriteBytes: io.WriteBytes}, nil
}
