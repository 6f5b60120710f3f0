//go:build !linux

package listener

import (
	"io"
	"net"
)

// copyConn copies src to dst until EOF (nil error) or an error.
func copyConn(dst, src net.Conn) (int64, error) { return io.Copy(dst, src) }
