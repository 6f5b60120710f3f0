//go:build !linux

package listener

import (
	"errors"
	"net"
	"sync/atomic"
	"time"
)

type kernelForwarder struct{}

func newKernelForwarder() (*kernelForwarder, error) {
	return nil, errors.New("kernel forwarding needs Linux")
}

func (k *kernelForwarder) close() {}

type kernelSession struct{}

func (k *kernelForwarder) start(client, backend net.Conn, up, down *atomic.Int64) (*kernelSession, error) {
	return nil, errors.New("kernel forwarding needs Linux")
}

func (s *kernelSession) mark()                             {}
func (s *kernelSession) drained(bool, bool, time.Duration) {}
func (s *kernelSession) bytes(bool) (int64, int64, bool)   { return 0, 0, false }
func (s *kernelSession) end()                              {}

func (s *kernelSession) detach() error               { return errors.New("kernel forwarding needs Linux") }
func (s *kernelSession) shutdown()                   {}
func (s *kernelSession) watch() (int64, int64, bool) { return 0, 0, false }
func (s *kernelSession) startupSent()                {}
