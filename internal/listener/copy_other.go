//go:build !linux

package listener

import (
	"io"
	"net"
	"sync/atomic"
)

// copyConn copies src to dst until EOF (nil error) or an error.
func copyConn(dst, src net.Conn, moved *atomic.Int64) (int64, error) {
	return io.Copy(countingWriter{dst, moved}, src)
}
