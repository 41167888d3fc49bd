package ibsimserver

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibsim"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sim"
	"github.com/rdmakit/rdmakit/sim/topo"
)

// benchFabric is a leaf/spine fabric of 24 switches and 320 HCAs, brought
// up by the built-in SM, served under a private socket name; lids are the
// LIDs of every node's end port (a switch's port 0).
func benchFabric(b *testing.B) (f *sim.Fabric, base string, hosts []string, lids []uint16) {
	b.Helper()
	top, err := topo.LeafSpine(topo.LeafSpineConfig{Leaves: 20, Spines: 4, HostsPerLeaf: 16, Uplinks: 4, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	f, err = sim.New(top)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	if _, err := f.RunSM(ctx, sim.SMConfig{}); err != nil {
		b.Fatal(err)
	}
	for _, n := range top.Nodes {
		port := 1
		if n.Type == iba.NodeTypeSwitch {
			port = 0
		} else {
			hosts = append(hosts, n.ID)
		}
		if _, _, lid, _, err := f.PortState(n.ID, port); err == nil && lid != 0 {
			lids = append(lids, lid)
		}
	}
	base = fmt.Sprintf("rkfsb%d-%d", os.Getpid(), seq.Add(1))
	s, err := Listen(f, Config{SockName: base})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	b.Cleanup(func() {
		s.Close()
		<-done
	})
	return f, base, hosts, lids
}

// benchClient is a raw protocol client as libumad2sim is one: a bound
// in<id> datagram socket connected to the server's out<slot>.
type benchClient struct {
	fd, ctl int
}

func dialBench(b *testing.B, base string, id int, node string) *benchClient {
	b.Helper()
	name := func(s string) string { return "@" + base + ":" + s + "\x00" }
	ctl, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { unix.Close(fd); unix.Close(ctl) })
	tv := unix.Timeval{Sec: 10}
	for _, s := range []int{fd, ctl} {
		if err := unix.SetsockoptTimeval(s, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
			b.Fatal(err)
		}
		// Room for a whole window in the socket buffers.
		unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_RCVBUF, 4<<20)
		unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_SNDBUF, 4<<20)
	}
	if err := unix.Bind(ctl, &unix.SockaddrUnix{Name: name(fmt.Sprintf("ctl%d", id))}); err != nil {
		b.Fatal(err)
	}
	if err := unix.Connect(ctl, &unix.SockaddrUnix{Name: name("ctl")}); err != nil {
		b.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: name(fmt.Sprintf("in%d", id))}); err != nil {
		b.Fatal(err)
	}
	var m ctlMsg
	m.typ, m.length = ctlConnect, 44
	binary.LittleEndian.PutUint32(m.data[0:], uint32(id))
	copy(m.data[infoNodeID:], node)
	var buf [ctlSize]byte
	if _, err := unix.Write(ctl, m.marshal(buf[:])); err != nil {
		b.Fatal(err)
	}
	n, err := unix.Read(ctl, buf[:])
	if err != nil {
		b.Fatal(err)
	}
	r, ok := parseCtl(buf[:n])
	if !ok || r.typ != ctlConnect {
		b.Fatalf("CONNECT %s: %x", node, buf[:n])
	}
	slot := binary.LittleEndian.Uint32(r.data[0:])
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: name(fmt.Sprintf("out%d", slot))}); err != nil {
		b.Fatal(err)
	}
	return &benchClient{fd: fd, ctl: ctl}
}

// pmaRequest is a PortCounters Get (IBA 16.1.3.5) of port 1 at dlid.
func pmaRequest(buf []byte, dlid uint16, tid uint32) {
	request{dlid: dlid, dqp: 1}.marshal(buf)
	m := buf[reqMAD:]
	clear(m)
	m[0], m[1], m[2], m[3] = 1, 0x04, 1, 1
	binary.BigEndian.PutUint32(m[12:], tid)
	binary.BigEndian.PutUint16(m[16:], 0x12)
	m[64+1] = 1
}

// run keeps window MADs in flight until n are answered.
func (c *benchClient) run(b *testing.B, n, window int, lids []uint16, seed int) error {
	tokens := make(chan struct{}, window)
	errc := make(chan error, 1)
	go func() {
		buf := make([]byte, reqSize)
		for got := 0; got < n; got++ {
			k, err := unix.Read(c.fd, buf)
			for err == unix.EINTR { // the profiler's signal
				k, err = unix.Read(c.fd, buf)
			}
			if err != nil || k != reqSize {
				errc <- fmt.Errorf("reply %d of %d: %d bytes, %v", got, n, k, err)
				return
			}
			if st := parseRequest(buf).status; st != 0 || buf[reqMAD+3] != 0x81 {
				errc <- fmt.Errorf("reply %d: status %d method %#x", got, st, buf[reqMAD+3])
				return
			}
			<-tokens
		}
		errc <- nil
	}()
	buf := make([]byte, reqSize)
	for i := 0; i < n; i++ {
		select {
		case tokens <- struct{}{}:
		case err := <-errc:
			return err
		}
		pmaRequest(buf, lids[(i*7+seed)%len(lids)], uint32(i))
		_, err := unix.Write(c.fd, buf)
		for err == unix.EINTR {
			_, err = unix.Write(c.fd, buf)
		}
		if err != nil {
			return err
		}
	}
	return <-errc
}

// runBatched is run with the client's side batched as the server's is
// (sendmmsg, recvmmsg), so that the client costs little beside the server.
func (c *benchClient) runBatched(n, window int, lids []uint16, seed int) error {
	var free atomic.Int64
	free.Store(int64(window))
	wake := make(chan struct{}, 1)
	errc := make(chan error, 1)
	go func() {
		bufs := make([][]byte, batchSize)
		for i := range bufs {
			bufs[i] = make([]byte, reqSize)
		}
		msgs, iov := make([]unix.Mmsghdr, batchSize), make([]unix.Iovec, batchSize)
		for got := 0; got < n; {
			setIOV(msgs, iov, bufs)
			r, _, e := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(c.fd), uintptr(unsafe.Pointer(&msgs[0])), batchSize, unix.MSG_WAITFORONE, 0, 0)
			if e == unix.EINTR {
				continue
			}
			if e != 0 {
				errc <- fmt.Errorf("reply %d of %d: %v", got, n, e)
				return
			}
			for i := 0; i < int(r); i++ {
				if st := parseRequest(bufs[i]).status; st != 0 || msgs[i].Len != reqSize {
					errc <- fmt.Errorf("reply %d: status %d, %d bytes", got, st, msgs[i].Len)
					return
				}
			}
			got += int(r)
			free.Add(int64(r))
			select {
			case wake <- struct{}{}:
			default:
			}
		}
		errc <- nil
	}()
	bufs := make([][]byte, window)
	for i := range bufs {
		bufs[i] = make([]byte, reqSize)
	}
	msgs, iov := make([]unix.Mmsghdr, window), make([]unix.Iovec, window)
	for sent := 0; sent < n; {
		k := int(min(free.Load(), int64(n-sent)))
		if k == 0 {
			select {
			case <-wake:
			case err := <-errc:
				return err
			}
			continue
		}
		free.Add(-int64(k))
		for i := 0; i < k; i++ {
			pmaRequest(bufs[i], lids[((sent+i)*7+seed)%len(lids)], uint32(sent+i))
		}
		setIOV(msgs, iov, bufs[:k])
		for done := 0; done < k; {
			r, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(c.fd), uintptr(unsafe.Pointer(&msgs[done])), uintptr(k-done), 0, 0, 0)
			if e == unix.EINTR {
				continue
			}
			if e != 0 {
				return e
			}
			done += int(r)
		}
		sent += k
	}
	return <-errc
}

// BenchmarkServer measures the server's MADs per second through the unix
// socket protocol: PMA Gets from several clients, each with a window of
// MADs in flight, with and without the latency model (1 µs per hop, 20 µs
// per agent, as scripts/bench.sh's latency rows).
func BenchmarkServer(b *testing.B) {
	for _, lat := range []bool{false, true} {
		for _, shape := range []struct {
			clients, window int
			batched         bool
		}{{1, 64, false}, {8, 2, false}, {8, 64, false}, {1, 64, true}, {8, 64, true}} {
			name := fmt.Sprintf("latency=%v/clients=%d/window=%d", lat, shape.clients, shape.window)
			if shape.batched {
				name += "/batched-client"
			}
			b.Run(name, func(b *testing.B) {
				f, base, hosts, lids := benchFabric(b)
				if lat {
					if err := f.SetLatency(sim.Latency{Hop: time.Microsecond, SMA: 20 * time.Microsecond, Agent: 20 * time.Microsecond}); err != nil {
						b.Fatal(err)
					}
				}
				var cs []*benchClient
				for i := 0; i < shape.clients; i++ {
					cs = append(cs, dialBench(b, base, 7000+i, hosts[i]))
				}
				per := max(b.N/shape.clients, 1)
				var failed atomic.Value
				b.ResetTimer()
				start := time.Now()
				var wg sync.WaitGroup
				for i, c := range cs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						run := func() error { return c.run(b, per, shape.window, lids, i*31) }
						if shape.batched {
							run = func() error { return c.runBatched(per, shape.window, lids, i*31) }
						}
						if err := run(); err != nil {
							failed.Store(err)
						}
					}()
				}
				wg.Wait()
				el := time.Since(start)
				b.StopTimer()
				if err, _ := failed.Load().(error); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(per*shape.clients)/el.Seconds(), "MADs/s")
			})
		}
	}
}

// BenchmarkServerGoClient is BenchmarkServer's one client with 64 MADs in
// flight as ibtool has them: package ibsim's transport under a mad.Client,
// PortCounters Gets from 64 goroutines.
func BenchmarkServerGoClient(b *testing.B) {
	for _, lat := range []bool{false, true} {
		b.Run(fmt.Sprintf("latency=%v", lat), func(b *testing.B) {
			f, base, hosts, lids := benchFabric(b)
			if lat {
				if err := f.SetLatency(sim.Latency{Hop: time.Microsecond, SMA: 20 * time.Microsecond, Agent: 20 * time.Microsecond}); err != nil {
					b.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			tr, err := ibsim.Dial(ctx, ibsim.Config{SockName: base, Node: hosts[0]})
			if err != nil {
				b.Fatal(err)
			}
			mc := mad.NewClient(tr)
			defer mc.Close()
			const workers = 64
			var next atomic.Int64
			var failed atomic.Value
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := next.Add(1) - 1
						if i >= int64(b.N) {
							return
						}
						pc := iba.PortCounters{PortSelect: 1}
						if err := mc.PerformanceGet(ctx, mad.Route{Addr: mad.Addr{LID: lids[int(i*7)%len(lids)]}}, &pc, 0); err != nil {
							failed.Store(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			el := time.Since(start)
			b.StopTimer()
			if err, _ := failed.Load().(error); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/el.Seconds(), "MADs/s")
		})
	}
}
