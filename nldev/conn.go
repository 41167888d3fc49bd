package nldev

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// DefaultTimeout bounds a request whose context has no deadline: the kernel
// answers NLDEV requests at once, so a silent socket means something is wrong.
const DefaultTimeout = 30 * time.Second

// Conn is a connection to the kernel's RDMA netlink family, with one service
// per NLDEV object. It is safe for concurrent use: requests are serialised.
type Conn struct {
	nl *netlink.Conn

	Dev     *DevService     // RDMA devices (rdma dev)
	Link    *LinkService    // ports and soft-RoCE/iWARP links (rdma link)
	Res     *ResService     // resources held by processes (rdma resource)
	Sys     *SysService     // system-wide settings (rdma system)
	Stat    *StatService    // counters (rdma statistic)
	Monitor *MonitorService // device events (rdma monitor)
}

// Dial opens a NETLINK_RDMA socket. On a kernel without RDMA netlink the
// error matches ErrNotSupported.
func Dial(cfg *netlink.Config) (*Conn, error) {
	nl, err := netlink.Dial(unix.NETLINK_RDMA, cfg)
	if err != nil {
		return nil, opError("dial NETLINK_RDMA", err)
	}
	// Extended acks carry the kernel's reason for a refusal. Kernels before
	// 4.12 lack the option; errors then still carry the errno.
	_ = nl.SetOption(netlink.ExtendedAcknowledge, true)
	return NewConn(nl), nil
}

// NewConn wraps an existing netlink connection, such as one from
// github.com/mdlayher/netlink/nltest in tests.
func NewConn(nl *netlink.Conn) *Conn {
	c := &Conn{nl: nl}
	c.Dev = &DevService{c: c}
	c.Link = &LinkService{c: c}
	c.Res = &ResService{c: c}
	c.Sys = &SysService{c: c}
	c.Stat = &StatService{c: c}
	c.Monitor = &MonitorService{c: c}
	return c
}

// Close closes the socket.
func (c *Conn) Close() error { return opError("close", c.nl.Close()) }

// request kinds.
const (
	doit = iota // one reply message
	dump        // a multipart reply
	ack         // a command whose only reply is the acknowledgement
)

// execute sends cmd with attrs and returns the decoded attributes of each
// reply message.
func (c *Conn) execute(ctx context.Context, cmd Command, kind int, attrs ...Attribute) ([][]Attribute, error) {
	payload, err := MarshalAttributes(attrs)
	if err != nil {
		return nil, &OpError{Op: cmd.String(), Err: err}
	}
	flags := netlink.Request
	switch kind {
	case dump:
		flags |= netlink.Dump
	case ack:
		// Only commands whose reply is the ack ask for one: an ack after a
		// data reply would arrive as a second datagram and be left queued.
		flags |= netlink.Acknowledge
	}
	msg := netlink.Message{
		Header: netlink.Header{Type: netlink.HeaderType(cmd.MessageType()), Flags: flags},
		Data:   payload,
	}

	if err := ctx.Err(); err != nil {
		return nil, &OpError{Op: cmd.String(), Err: err}
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(DefaultTimeout)
	}
	// Fake connections (nltest) do not support deadlines; a real socket does.
	_ = c.nl.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = c.nl.SetDeadline(time.Now()) })
	defer stop()

	replies, err := c.nl.Execute(msg)
	// Some commands answer with a data message and then, in a datagram of
	// its own, the acknowledgement that was asked for (STAT_SET in
	// nldev_stat_set_doit): read on until it arrives, or it would be taken
	// for the reply to the next request.
	for err == nil && kind == ack && !hasAck(replies) {
		var more []netlink.Message
		more, err = c.nl.Receive()
		for _, m := range more {
			if m.Header.Sequence != replies[0].Header.Sequence {
				return nil, &OpError{Op: cmd.String(), Err: fmt.Errorf("%w: a reply with sequence %d while waiting for the acknowledgement of %d", ErrMalformed, m.Header.Sequence, replies[0].Header.Sequence)}
			}
		}
		replies = append(replies, more...)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, &OpError{Op: cmd.String(), Err: ctx.Err()}
		}
		return nil, opError(cmd.String(), err)
	}
	out := make([][]Attribute, 0, len(replies))
	for _, r := range replies {
		if r.Header.Type == netlink.Error || r.Header.Type == netlink.Done {
			continue // the acknowledgement or the end of a dump
		}
		// Only the client is checked, not the command: the kernel answers
		// some requests with another command's type (a PORT_GET doit
		// replies as RDMA_NLDEV_CMD_GET in nldev_port_get_doit), and
		// rdma(8) ignores the type altogether.
		if typ := uint16(r.Header.Type); typ>>10 != ClientNLDEV {
			return nil, &OpError{Op: cmd.String(), Err: fmt.Errorf("%w: reply of type %#x (client %d) to a request of type %#x", ErrMalformed, typ, typ>>10, cmd.MessageType())}
		}
		a, err := UnmarshalAttributes(r.Data)
		if err != nil {
			return nil, &OpError{Op: cmd.String(), Err: err}
		}
		out = append(out, a)
	}
	return out, nil
}

// hasAck reports whether msgs hold the acknowledgement (an NLMSG_ERROR with
// errno 0; package netlink turns the others into errors).
func hasAck(msgs []netlink.Message) bool {
	for _, m := range msgs {
		if m.Header.Type == netlink.Error {
			return true
		}
	}
	return false
}

// one is execute for a doit that must answer with exactly one message.
func (c *Conn) one(ctx context.Context, cmd Command, attrs ...Attribute) ([]Attribute, error) {
	r, err := c.execute(ctx, cmd, doit, attrs...)
	if err != nil {
		return nil, err
	}
	if len(r) != 1 {
		return nil, &OpError{Op: cmd.String(), Err: fmt.Errorf("%w: %d replies, want 1", ErrMalformed, len(r))}
	}
	return r[0], nil
}

// errDecode wraps a decoding failure of a reply into an OpError.
func errDecode(cmd Command, err error) error {
	var oe *OpError
	if errors.As(err, &oe) {
		return err
	}
	return &OpError{Op: cmd.String(), Err: err}
}
