// Package nldevtest records real RDMA netlink (NLDEV) exchanges with a
// kernel and replays them through github.com/mdlayher/netlink/nltest, so
// that the decoders of package nldev, and the programs built on it, are
// tested hermetically against what a real kernel sent.
//
// Recordings are made in the kernel VM (internal/vmtest) by tests built
// with the vmguest tag; the guest has no writable share, so they travel to
// the host as console lines (Emit, Collect) and are committed under the
// package's testdata. The file format (Marshal, Unmarshal) is text: one
// "request" line and its "reply" lines per exchange, each a whole netlink
// message in hex, as the socket carried it.
package nldevtest

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nltest"
	"golang.org/x/sys/unix"

	"github.com/rdmakit/rdmakit/nldev"
)

// Exchange is one request and every message the kernel answered with,
// including the NLMSG_DONE of a dump and the NLMSG_ERROR of an error or an
// acknowledgement.
type Exchange struct {
	Request netlink.Message
	Replies []netlink.Message
}

// Recorder forwards the requests of an nldev.Conn to the kernel over its
// own NETLINK_RDMA socket and keeps every exchange byte for byte.
type Recorder struct {
	fd int

	mu        sync.Mutex
	exchanges []Exchange
}

// recvTimeout bounds the wait for one reply datagram.
const recvTimeout = 10 * time.Second

// NewRecorder opens the socket, with extended acknowledgements on, as
// nldev.Dial does.
func NewRecorder() (*Recorder, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_RDMA)
	if err != nil {
		return nil, fmt.Errorf("opening a NETLINK_RDMA socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("binding the NETLINK_RDMA socket: %w", err)
	}
	_ = unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_EXT_ACK, 1)
	tv := unix.NsecToTimeval(recvTimeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("setting the receive timeout: %w", err)
	}
	return &Recorder{fd: fd}, nil
}

// Close closes the socket.
func (r *Recorder) Close() error { return unix.Close(r.fd) }

// Conn returns a connection whose requests go through the recorder.
func (r *Recorder) Conn() *nldev.Conn { return nldev.NewConn(nltest.Dial(r.forward)) }

// Take returns the exchanges recorded since the last call and forgets them.
func (r *Recorder) Take() []Exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	ex := r.exchanges
	r.exchanges = nil
	return ex
}

func (r *Recorder) forward(req []netlink.Message) ([]netlink.Message, error) {
	if len(req) != 1 {
		return nil, fmt.Errorf("nldevtest: %d messages in one request, want 1", len(req))
	}
	b, err := req[0].MarshalBinary()
	if err != nil {
		return nil, err
	}
	if err := unix.Sendto(r.fd, b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, fmt.Errorf("nldevtest: sending: %w", err)
	}
	var replies []netlink.Message
	buf := make([]byte, 1<<20)
	for done := false; !done; {
		n, _, err := unix.Recvfrom(r.fd, buf, 0)
		if err != nil {
			return nil, fmt.Errorf("nldevtest: receiving: %w", err)
		}
		// A copy: the next datagram reuses buf.
		msgs, err := Split(slices.Clone(buf[:n]))
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			if m.Header.Sequence != req[0].Header.Sequence {
				return nil, fmt.Errorf("nldevtest: a reply of type %#x with sequence %d to request %d (type %#x)",
					uint16(m.Header.Type), m.Header.Sequence, req[0].Header.Sequence, uint16(req[0].Header.Type))
			}
			replies = append(replies, m)
			// A dump ends with NLMSG_DONE or an error; a request for
			// an acknowledgement ends with it (after a data reply, for
			// some commands); anything else is one datagram.
			switch {
			case m.Header.Type == netlink.Error:
				done = true
			case req[0].Header.Flags&netlink.Acknowledge != 0:
			case m.Header.Flags&netlink.Multi == 0 || m.Header.Type == netlink.Done:
				done = true
			}
		}
	}
	r.mu.Lock()
	r.exchanges = append(r.exchanges, Exchange{Request: req[0], Replies: replies})
	r.mu.Unlock()
	return withIDs(replies, req[0].Header), nil
}

// withIDs copies msgs with the sequence number and port ID of the request
// they answer, which package netlink checks.
func withIDs(msgs []netlink.Message, h netlink.Header) []netlink.Message {
	out := make([]netlink.Message, len(msgs))
	for i, m := range msgs {
		m.Header.Sequence, m.Header.PID = h.Sequence, h.PID
		m.Data = slices.Clone(m.Data)
		out[i] = m
	}
	return out
}

// Split cuts a datagram into its netlink messages.
func Split(b []byte) ([]netlink.Message, error) {
	var out []netlink.Message
	for len(b) > 0 {
		if len(b) < 16 {
			return nil, fmt.Errorf("nldevtest: %d trailing bytes are shorter than a netlink header", len(b))
		}
		l := int(binary.NativeEndian.Uint32(b))
		if l < 16 || l > len(b) {
			return nil, fmt.Errorf("nldevtest: message length %d outside 16..%d", l, len(b))
		}
		var m netlink.Message
		if err := m.UnmarshalBinary(b[:l]); err != nil {
			return nil, fmt.Errorf("nldevtest: %w", err)
		}
		out = append(out, m)
		adv := (l + 3) &^ 3
		if adv > len(b) {
			adv = len(b)
		}
		b = b[adv:]
	}
	return out, nil
}

// Reporter is told of a request Replay has no recorded reply for;
// *testing.T is one.
type Reporter interface {
	Errorf(format string, args ...any)
}

// Replay returns a connection that answers each request with the replies
// recorded for the same request (message type, flags and attributes; not the
// sequence number), in recording order. A request that was not recorded is
// reported to t and gets EINVAL.
func Replay(t Reporter, ex []Exchange) *nldev.Conn {
	used := make([]bool, len(ex))
	var mu sync.Mutex
	return nldev.NewConn(nltest.Dial(func(req []netlink.Message) ([]netlink.Message, error) {
		mu.Lock()
		defer mu.Unlock()
		for i, e := range ex {
			if used[i] || !same(e.Request, req[0]) {
				continue
			}
			used[i] = true
			return withIDs(e.Replies, req[0].Header), nil
		}
		t.Errorf("nldevtest: no recorded reply for request type %#x flags %v attributes %x", uint16(req[0].Header.Type), req[0].Header.Flags, req[0].Data)
		return nltest.Error(int(unix.EINVAL), req)
	}))
}

func same(a, b netlink.Message) bool {
	return a.Header.Type == b.Header.Type && a.Header.Flags == b.Header.Flags && bytes.Equal(a.Data, b.Data)
}

// Marshal writes exchanges in the text format, after comment lines.
func Marshal(comment string, ex []Exchange) ([]byte, error) {
	var b bytes.Buffer
	for _, l := range strings.Split(strings.TrimRight(comment, "\n"), "\n") {
		fmt.Fprintf(&b, "# %s\n", l)
	}
	put := func(kind string, m netlink.Message) error {
		m.Header.Length = uint32(16 + len(m.Data)) // nlmsg_len, which MarshalBinary checks
		raw, err := m.MarshalBinary()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %s\n", kind, hex.EncodeToString(raw))
		return nil
	}
	for _, e := range ex {
		if err := put("request", e.Request); err != nil {
			return nil, err
		}
		for _, r := range e.Replies {
			if err := put("reply", r); err != nil {
				return nil, err
			}
		}
	}
	return b.Bytes(), nil
}

// Unmarshal reads the text format.
func Unmarshal(b []byte) ([]Exchange, error) {
	var ex []Exchange
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		kind, h, ok := strings.Cut(line, " ")
		raw, err := hex.DecodeString(h)
		if !ok || err != nil {
			return nil, fmt.Errorf("line %d: want \"request|reply HEX\"", n)
		}
		msgs, err := Split(raw)
		if err != nil || len(msgs) != 1 {
			return nil, fmt.Errorf("line %d: not one netlink message (%v)", n, err)
		}
		switch kind {
		case "request":
			ex = append(ex, Exchange{Request: msgs[0]})
		case "reply":
			if len(ex) == 0 {
				return nil, fmt.Errorf("line %d: a reply before any request", n)
			}
			ex[len(ex)-1].Replies = append(ex[len(ex)-1].Replies, msgs[0])
		default:
			return nil, fmt.Errorf("line %d: unknown record %q", n, kind)
		}
	}
	return ex, sc.Err()
}

// maxRecording bounds a recording file: a session of netlink messages in
// text, a few kilobytes to a few megabytes.
const maxRecording = 64 << 20

// ReadFile reads a recording, at most 64 MiB.
func ReadFile(path string) ([]Exchange, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxRecording+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > maxRecording {
		return nil, fmt.Errorf("%s: more than %d bytes: not a recording", path, maxRecording)
	}
	ex, err := Unmarshal(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ex, nil
}

// consolePrefix marks the console lines that carry a file from the guest.
const consolePrefix = "nldevtest-file "

// Emit writes one console line carrying a file named name (a slash path)
// for Collect on the host.
func Emit(name string, data []byte) {
	fmt.Printf("%s%s %s\n", consolePrefix, name, base64.StdEncoding.EncodeToString(data))
}

// Collect picks the files Emit wrote out of console lines (as the host's
// vmtest log shows them, with any prefix before the marker).
func Collect(lines []string) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, l := range lines {
		i := strings.Index(l, consolePrefix)
		if i < 0 {
			continue
		}
		name, enc, ok := strings.Cut(strings.TrimSpace(l[i+len(consolePrefix):]), " ")
		data, err := base64.StdEncoding.DecodeString(enc)
		if !ok || err != nil || name == "" || strings.Contains(name, "..") || strings.HasPrefix(name, "/") {
			return nil, fmt.Errorf("a garbled file line from the guest: %.80q", l)
		}
		files[name] = data
	}
	return files, nil
}

// Names returns the keys of files in order.
func Names(files map[string][]byte) []string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Console wraps a host test for vmtest.RunWith and keeps every line the
// guest's console printed, as well as logging it.
type Console struct {
	testing.TB
	mu    sync.Mutex
	Lines []string
}

// Log records and logs one console line.
func (c *Console) Log(args ...any) {
	c.TB.Helper()
	c.mu.Lock()
	c.Lines = append(c.Lines, fmt.Sprint(args...))
	c.mu.Unlock()
	if s := fmt.Sprint(args...); !strings.Contains(s, consolePrefix) {
		c.TB.Log(s)
	}
}

// Deadline passes on the test's deadline, which vmtest uses to size its
// timeout.
func (c *Console) Deadline() (time.Time, bool) {
	if d, ok := c.TB.(interface{ Deadline() (time.Time, bool) }); ok {
		return d.Deadline()
	}
	return time.Time{}, false
}
