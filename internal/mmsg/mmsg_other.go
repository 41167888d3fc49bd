//go:build !linux

package mmsg

import (
	"fmt"
	"net"
)

// Conn moves one datagram per system call where recvmmsg(2) and
// sendmmsg(2) do not exist.
type Conn struct{ c net.Conn }

// New wraps c; n is ignored.
func New(c net.Conn, n int) (*Conn, error) {
	if n < 1 {
		return nil, fmt.Errorf("batching datagrams: batch size %d", n)
	}
	return &Conn{c}, nil
}

// Read waits for one datagram; sizes[0] is its length.
func (c *Conn) Read(bufs [][]byte, sizes []int) (int, error) {
	if len(bufs) == 0 {
		return 0, nil
	}
	n, err := c.c.Read(bufs[0])
	if err != nil {
		return 0, err
	}
	sizes[0] = n
	return 1, nil
}

// Write sends every buffer as one datagram.
func (c *Conn) Write(bufs [][]byte) error {
	for _, buf := range bufs {
		if _, err := c.c.Write(buf); err != nil {
			return err
		}
	}
	return nil
}
