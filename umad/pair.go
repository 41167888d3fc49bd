package umad

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/rdmakit/rdmakit/device"
	"github.com/rdmakit/rdmakit/mad"
)

// OpenEndPort opens what an end port's MADs need, as infiniband-diags 56
// opens it (libibmad's mad_rpc_open_port2): the umad device that carries
// its GMPs (p.GSIPort) and, on a planarized HCA whose SMPs go through
// another device (p.SMIPort), that one too, as one mad.Transport that
// registers each agent on the device of its class, sends its MADs there and
// receives from both. LocalPort reads the GSI port, where the C tools
// resolve themselves. On an ordinary HCA, and where no device carries the
// port's SMPs, it is Open(p).
func OpenEndPort(p *device.Port) (mad.Transport, error) {
	if p == nil {
		return nil, errors.New("umad: no end port")
	}
	gsi := p.GSIPort
	if gsi == nil {
		gsi = p
	}
	if p.SMIPort == nil || p.SMIPort == gsi {
		return Open(gsi)
	}
	g, err := Open(gsi)
	if err != nil {
		return nil, fmt.Errorf("opening the GSI port %s of %s: %w", gsi, p, err)
	}
	s, err := Open(p.SMIPort)
	if err != nil {
		g.Close()
		return nil, fmt.Errorf("opening the SMI port %s of %s: %w", p.SMIPort, p, err)
	}
	return newPair(g, s), nil
}

// pair is the transport of a planarized end port: SMPs on smi, the rest on
// gsi. Agent numbers are its own, each standing for an agent of one side.
type pair struct {
	gsi, smi mad.Transport

	mu     sync.Mutex
	agents []pairAgent        // by the pair's agent number
	outer  [2]map[int]int     // per side: its agent number -> the pair's
	ch     chan pairRecv      // what the pumps received
	pumped bool               // the pumps run
	done   chan struct{}      // closed by Close
	stop   context.CancelFunc // ends the pumps' Recv
	ctx    context.Context    // the pumps'
	wg     sync.WaitGroup     // the pumps
	closed bool
}

type pairAgent struct {
	side int // 0 gsi, 1 smi
	id   int
}

type pairRecv struct {
	side int
	p    *mad.Packet
	err  error
}

func newPair(gsi, smi mad.Transport) *pair {
	ctx, stop := context.WithCancel(context.Background())
	return &pair{gsi: gsi, smi: smi, outer: [2]map[int]int{{}, {}}, ch: make(chan pairRecv),
		done: make(chan struct{}), ctx: ctx, stop: stop}
}

func (t *pair) side(s int) mad.Transport {
	if s == 1 {
		return t.smi
	}
	return t.gsi
}

// Register opens the agent on the SMI device for the subnet management
// classes and on the GSI device for the others.
func (t *pair) Register(spec mad.AgentSpec) (int, error) {
	s := 0
	if spec.Class == classSubnLID || spec.Class == classSubnDR {
		s = 1
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return 0, mad.ErrClosed
	}
	id, err := t.side(s).Register(spec)
	if err != nil {
		return 0, err
	}
	t.agents = append(t.agents, pairAgent{side: s, id: id})
	n := len(t.agents) - 1
	t.outer[s][id] = n
	if !t.pumped {
		t.pumped = true
		for s := range 2 {
			t.wg.Add(1)
			go t.pump(s)
		}
	}
	return n, nil
}

// pump hands what one side receives to Recv until Close.
func (t *pair) pump(s int) {
	defer t.wg.Done()
	for {
		p, err := t.side(s).Recv(t.ctx)
		if err != nil && (errors.Is(err, mad.ErrClosed) || t.ctx.Err() != nil) {
			return
		}
		select {
		case t.ch <- pairRecv{side: s, p: p, err: err}:
		case <-t.done:
			return
		}
		if err != nil {
			return // a read error: this side is of no more use
		}
	}
}

// Send sends through the side the agent was registered on.
func (t *pair) Send(ctx context.Context, p *mad.Packet) error {
	t.mu.Lock()
	closed := t.closed
	var a pairAgent
	known := p.Agent >= 0 && p.Agent < len(t.agents)
	if known {
		a = t.agents[p.Agent]
	}
	t.mu.Unlock()
	if closed {
		return mad.ErrClosed
	}
	if !known {
		return fmt.Errorf("sending: agent %d is not registered", p.Agent)
	}
	q := *p
	q.Agent = a.id
	return t.side(a.side).Send(ctx, &q)
}

// Recv returns the next MAD either side received, numbered by the pair's
// agents.
func (t *pair) Recv(ctx context.Context) (*mad.Packet, error) {
	select {
	case r := <-t.ch:
		if r.err != nil {
			return nil, r.err
		}
		t.mu.Lock()
		n, ok := t.outer[r.side][r.p.Agent]
		t.mu.Unlock()
		if !ok {
			n = -1
		}
		r.p.Agent = n
		return r.p, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.done:
		return nil, mad.ErrClosed
	}
}

// LocalPort reads the GSI port.
func (t *pair) LocalPort(ctx context.Context) (mad.LocalPort, error) { return t.gsi.LocalPort(ctx) }

// KernelRMPP is true: both sides are the kernel's.
func (t *pair) KernelRMPP() bool { return true }

// Close closes both sides and ends the pumps.
func (t *pair) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.mu.Unlock()
	close(t.done)
	t.stop()
	err := errors.Join(t.gsi.Close(), t.smi.Close())
	t.wg.Wait()
	return err
}
