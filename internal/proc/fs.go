package proc

import "path/filepath"

// FS reads the kernel's files under one root: "/" on the machine, a folder of copies of
// real files in tests (testdata/root). The zero FS is the machine's.
type FS struct{ root string }

// Host is the machine's own files.
var Host = FS{}

// At returns the FS of the kernel files under root ("" is the machine's, "/").
func At(root string) FS { return FS{root: root} }

// Root is the folder that stands for "/".
func (f FS) Root() string {
	if f.root == "" {
		return "/"
	}
	return f.root
}

// Proc is the path of a file under the root's /proc.
func (f FS) Proc(elem ...string) string {
	return filepath.Join(append([]string{f.Root(), "proc"}, elem...)...)
}

// Sys is the path of a file under the root's /sys.
func (f FS) Sys(elem ...string) string {
	return filepath.Join(append([]string{f.Root(), "sys"}, elem...)...)
}

// Path is where an absolute path of the machine (a control group's folder, as
// /proc/self/mountinfo names it) lies under the root.
func (f FS) Path(abs string) string { return filepath.Join(f.Root(), abs) }
