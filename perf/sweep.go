package perf

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sa"
	"github.com/rdmakit/rdmakit/sched"
	"github.com/rdmakit/rdmakit/subnet"
)

// SweepOptions say what Sweep reads, from which nodes, and how.
type SweepOptions struct {
	// Subnet, when set, is swept as it is (a loaded cache, an earlier
	// discovery); otherwise Sweep discovers the subnet first with
	// Discover.
	Subnet   *subnet.Subnet
	Discover subnet.DiscoverOptions

	// Want says whether a node's counters are read; nil reads every node.
	Want func(n *subnet.Node) bool
	// Select, when set, gives the nodes to read and their order once the
	// subnet is known (for one node of it, say); by default every node
	// Want accepts, in libibnetdisc's order (the reverse of discovery).
	Select func(s *subnet.Subnet) []*subnet.Node

	// AllPortsFirst reads a node whose PMA has AllPortSelect with
	// PortSelect 0xFF first, and its ports one by one only when Exceeds
	// finds an error there (ibqueryerrors); otherwise every port is read.
	AllPortsFirst bool
	// Exceeds says whether an error counter's value is an error (above
	// its threshold, not suppressed); nil: none is. It decides
	// AllPortsFirst's port reads and Details.
	Exceeds func(k Counter, v uint64) bool
	// Data reads PortCountersExtended wherever the PMA has it, for 64-bit
	// data counters; without it PortCountersExtended is read only where
	// its error counters are the 64-bit ones (AdditionalPortCountersExtended).
	Data bool
	// DataOnly reads the data counters only: PortCountersExtended where the
	// PMA has it, else PortCounters (ibqueryerrors --counters).
	DataOnly bool
	// Details reads PortRcvErrorDetails and PortXmitDiscardDetails of a
	// port whose PortRcvErrors or PortXmitDiscards Exceeds finds in error.
	Details bool
	// Clear clears counters after reading them: port by port, or with
	// PortSelect 0xFF after the node's reads where the PMA has
	// AllPortSelect and the node was read that way.
	Clear ClearSelect
	// PathSLs reads the SL of every destination from one SA PathRecord
	// table, as ibqueryerrors does, while the subnet is discovered; the
	// reads then go out on each destination's SL (SL 0 without an SA).
	// A scan from a directed route (Discover.From) asks for the path to
	// that node only; a scan from a LID (Discover.StartLID) asks nothing.
	PathSLs bool

	// Capabilities, when set, gives the PMA capabilities of a node where
	// they are known (NodeResult.Caps of an earlier sweep of the same
	// subnet): that node's ClassPortInfo is not read again, and its
	// counter reads start at once. A sweep that reads the same nodes over
	// and over (an exporter's scrapes) saves one MAD per node this way.
	Capabilities func(n *subnet.Node) (Capabilities, bool)
	// GiveUpSilent: once a read of a node has had no reply to any of its
	// tries (mad.ErrTimeout), that node's reads not yet sent fail at once
	// with ErrGaveUp instead of each waiting out its own tries, so that a
	// dead switch costs about one MAD timeout rather than one per port.
	GiveUpSilent bool

	// MaxInFlight bounds the reads outstanding at once (default 256), and
	// PerNode those to one node (default 4): a switch's management
	// processor is never flooded.
	MaxInFlight, PerNode int

	// OnNode, when set, is given each node's result as soon as its reads
	// are done (and the discovery is over: a node the discovery changes
	// after its reads began is read again). Calls are serialised; it must
	// not block for long.
	OnNode func(*NodeResult)
	// Progress, when set, is called about ten times a second with the
	// reads done and queued.
	Progress func(SweepProgress)
}

// SweepProgress is what SweepOptions.Progress is told.
type SweepProgress struct {
	Done, Queued, Nodes int
}

// SweepResult is what a Sweep found.
type SweepResult struct {
	// Subnet is the subnet swept, and Report how it was discovered (nil
	// when SweepOptions.Subnet was given). Report.Unreachable lists what
	// the discovery could not reach.
	Subnet *subnet.Subnet
	Report *subnet.DiscoverReport
	// Nodes are the nodes read, in the order Select gave them.
	Nodes []*NodeResult
	// SLError is why the SA's PathRecords could not be read (SL 0 was
	// used then), nil when they were or PathSLs was not asked for.
	SLError error
	// Failures counts the reads and resets that failed on all nodes.
	Failures int
	// Reads counts the counter and ClassPortInfo reads sent (each one
	// PerformanceGet RPC), Sent the MADs they took, retries included (as
	// the replies and timeouts tell them), and Timeouts the reads that had
	// no reply to any try. Reads given up (GiveUpSilent) are not sent and
	// counted in none of them, only in Failures.
	Reads, Sent, Timeouts int
}

// ErrGaveUp is the error of a read that was not sent because an earlier
// read of the same node had no reply (SweepOptions.GiveUpSilent).
var ErrGaveUp = errors.New("not read: the node did not answer an earlier read")

// NodeResult is what was read from one node's PMA.
type NodeResult struct {
	// Node is the node in the subnet database.
	Node *subnet.Node
	GUID iba.GUID
	Type iba.NodeType
	// LID is where the node's PMA was addressed: a switch's port 0 LID, a
	// CA's or router's first port's.
	LID uint16
	// Caps are the PMA's capabilities (zero when CapsErr is set).
	Caps Capabilities
	// All is the PortSelect 0xFF reading (AllPortsFirst), nil otherwise.
	All *PortResult
	// Ports are by port number, nil where the port was not read.
	Ports []*PortResult
	// PortsChecked counts the ports looked at: all of them when the
	// PortSelect 0xFF reading showed no error.
	PortsChecked int
	// Errors are the reads and resets that failed, in the order they did.
	Errors []*PortError
	// Resets are the PerformanceSets that cleared counters.
	Resets []Reset

	snap    snapshot
	target  mad.Target // the PMA at LID, made at launch for all its reads
	mu      sync.Mutex
	silent  atomic.Bool // a read had no reply (GiveUpSilent)
	pending atomic.Int32
	done    atomic.Bool // its reads (and clears) are over
	final   atomic.Bool // the sweep keeps it: the discovery is over
	emitted atomic.Bool
}

// PortGUID is the GUID of the port a reading of port belongs to: a
// switch's port 0 GUID (its ports have none of their own), a CA's port's.
func (n *NodeResult) PortGUID(port int) iba.GUID {
	if port == AllPorts || n.snap.typ == iba.NodeTypeSwitch {
		if n.snap.port(0) {
			return n.snap.ports[0].guid
		}
		return n.GUID
	}
	if n.snap.port(port) {
		return n.snap.ports[port].guid
	}
	return 0
}

// PortResult is what was read of one port (or of all, PortSelect 0xFF).
type PortResult struct {
	Port int
	// LID is where the port's PMA was addressed.
	LID uint16
	// OK: the reading is complete. A port whose PortCounters came but
	// whose PortCountersExtended did not is not OK.
	OK bool
	Reading
	// HasErrors: Exceeds found an error counter in error.
	HasErrors bool
	// The details, read with SweepOptions.Details where the counter they
	// detail is in error.
	RcvErrorDetails    *iba.PortRcvErrorDetails
	XmitDiscardDetails *iba.PortXmitDiscardDetails
}

// snapshot is what a node's reads need of it: its type, ports and LIDs as
// the discovery had them when the reads began. The reads may begin while
// the discovery still runs (and may still add a port to a CA), so they
// read this copy, never the node.
type snapshot struct {
	typ      iba.NodeType
	numPorts int
	smaLID   uint16
	enhSP0   bool
	ports    []snapPort // by port number; present false where the node has no port
}

type snapPort struct {
	present bool
	lid     uint16
	guid    iba.GUID
}

func snap(n *subnet.Node) snapshot {
	sn := snapshot{typ: n.Type, numPorts: n.NumPorts, smaLID: n.SMALID, enhSP0: n.EnhancedSP0, ports: make([]snapPort, n.NumPorts+1)}
	for p := range sn.ports {
		if pp := n.Port(p); pp != nil {
			sn.ports[p] = snapPort{true, pp.BaseLID, pp.GUID}
		}
	}
	return sn
}

func (a *snapshot) equal(b *snapshot) bool {
	if a.typ != b.typ || a.numPorts != b.numPorts || a.smaLID != b.smaLID || a.enhSP0 != b.enhSP0 || len(a.ports) != len(b.ports) {
		return false
	}
	for i := range a.ports {
		if a.ports[i] != b.ports[i] {
			return false
		}
	}
	return true
}

func (a *snapshot) port(p int) bool { return p >= 0 && p < len(a.ports) && a.ports[p].present }

// sweep is one Sweep run.
type sweep struct {
	o     *SweepOptions
	f     *fabric.Fabric
	mc    *mad.Client
	sl    map[uint16]uint8
	sched *sched.Scheduler
	// early holds the nodes whose reads began while the discovery ran.
	early   map[*subnet.Node]*NodeResult
	backlog []*NodeResult // settled before the SLs were in
	cancel  context.CancelFunc

	emitMu sync.Mutex
	done   atomic.Int64
	total  atomic.Int64

	reads, sent, timeouts atomic.Int64
}

// Sweep reads the counters of every port of the subnet (discovered, or
// the one given) through the scheduler: many nodes at once, a few reads
// per node, each node's reads starting as soon as the discovery is done
// with it. Nodes that do not answer are in their NodeResult's Errors, and
// the sweep goes on; cancel ctx (or give it a deadline) to bound the
// sweep: reads not done by then fail with the context's error. The error
// is the discovery's, when it failed as a whole.
func Sweep(ctx context.Context, f *fabric.Fabric, o SweepOptions) (*SweepResult, error) {
	if o.MaxInFlight < 0 || o.PerNode < 0 {
		return nil, errors.New("perf: MaxInFlight and PerNode must not be negative")
	}
	w := &sweep{o: &o, f: f, mc: f.MAD}
	defer w.stopSched()
	res := &SweepResult{Subnet: o.Subnet}
	partial := o.Discover.From != nil || o.Discover.StartLID != 0

	var slDone chan struct{}
	var slErr error
	if o.PathSLs && !partial {
		slDone = make(chan struct{})
		go func() {
			defer close(slDone)
			w.sl, slErr = w.pathSLs(ctx, 0)
		}()
	}
	if o.Subnet == nil {
		dopt := o.Discover
		// A whole-subnet sweep reads each node's counters as soon as the
		// discovery is done with the node, not after the whole walk: the
		// fabric answers both at once. Not when the sweep clears
		// counters: a node the discovery changes afterwards is read
		// again, and must read the same counters.
		if !partial && !o.Clear.Any() {
			w.startSched(ctx)
			w.early = map[*subnet.Node]*NodeResult{}
			user := dopt.Settled
			dopt.Settled = func(n *subnet.Node) {
				if user != nil {
					user(n)
				}
				w.settled(n, slDone)
			}
		}
		var err error
		if dopt.Method == subnet.BySA {
			if dopt.LocalLID == 0 {
				dopt.LocalLID = f.Local.LID
			}
			res.Subnet, res.Report, err = subnet.DiscoverSA(ctx, f.SA(), f.Local, dopt)
		} else {
			if dopt.LocalLID == 0 {
				dopt.LocalLID = f.Local.LID
			}
			res.Subnet, res.Report, err = subnet.Discover(ctx, f.MAD, dopt)
		}
		if slDone != nil {
			<-slDone
		}
		w.launchBacklog()
		if err != nil {
			return res, err
		}
	} else if slDone != nil {
		<-slDone
	}
	res.SLError = slErr

	var nodes []*subnet.Node
	if o.Select != nil {
		nodes = o.Select(res.Subnet)
	} else {
		nodes = res.Subnet.IBNDOrder(o.Want)
	}
	if o.PathSLs && o.Discover.From != nil && o.Subnet == nil {
		if n, _ := res.Subnet.From(); n != nil {
			w.sl, res.SLError = w.pathSLs(ctx, n.NodeInfo().PortGUID)
		}
	}
	res.Nodes = w.sweep(ctx, nodes)
	for _, n := range res.Nodes {
		res.Failures += len(n.Errors)
	}
	res.Reads, res.Sent, res.Timeouts = int(w.reads.Load()), int(w.sent.Load()), int(w.timeouts.Load())
	return res, nil
}

// pathSLs is ibqueryerrors' path_record_query: the SL of the path to every
// destination LID (or to dguid only), from one SA PathRecord table.
func (w *sweep) pathSLs(ctx context.Context, dguid iba.GUID) (map[uint16]uint8, error) {
	lp := w.f.Local
	pr := &iba.PathRecord{SGID: iba.MakeGID(lp.GIDPrefix, lp.PortGUID), NumbPath: 1, Reversible: 1}
	comps := []string{"SGID", "NumbPath", "Reversible"}
	if dguid != 0 {
		pr.DGID = iba.MakeGID(lp.GIDPrefix, dguid)
		comps = append(comps, "DGID")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// One try: the SLs only refine the reads, and an SA that cannot send
	// the table (ibsim carries no RMPP) must not cost the retries.
	t, err := w.f.SA().Target(ctx)
	if err != nil {
		return nil, err
	}
	r := t.Route()
	r.Tries = 1
	recs, err := sa.GetTable(ctx, w.f.SA(sa.WithTarget(r)), pr, sa.Components(comps...))
	if err != nil {
		return nil, err
	}
	m := make(map[uint16]uint8, len(recs))
	for _, r := range recs {
		m[r.DLID] = r.SL
	}
	return m, nil
}

// target is the PMA of a LID, on the SL the path records give.
func (w *sweep) target(lid uint16) mad.Target {
	return mad.Route{Addr: mad.Addr{LID: lid, SL: w.sl[lid], QPN: mad.QP1, QKey: mad.QP1QKey}, Name: "Lid " + strconv.Itoa(int(lid))}
}

// submit queues a job of n that runs on a goroutine of its own.
func (w *sweep) submit(n *NodeResult, name string, fn func(ctx context.Context)) {
	w.total.Add(1)
	n.pending.Add(1)
	w.sched.Submit(n.GUID.String(), name, func(ctx context.Context) error {
		fn(ctx)
		w.jobDone(n)
		return nil
	})
}

// submitAsync queues a job of n that holds no goroutine while its MAD is
// out (sched.SubmitAsync): fn calls finish once, when it is over. fn's
// continuations run on the MAD client's reader, so they may submit but
// must not wait for another MAD.
func (w *sweep) submitAsync(n *NodeResult, name string, fn func(ctx context.Context, finish func())) {
	w.total.Add(1)
	n.pending.Add(1)
	w.sched.SubmitAsync(n.GUID.String(), name, func(ctx context.Context, done func(error)) {
		fn(ctx, func() {
			w.jobDone(n)
			done(nil)
		})
	})
}

func (w *sweep) jobDone(n *NodeResult) {
	w.done.Add(1)
	if n.pending.Add(-1) == 0 {
		w.nodeDone(n)
	}
}

// nodeDone runs once a node's reads are all in: the PortSelect 0xFF clear
// comes after them, as in ibqueryerrors.
func (w *sweep) nodeDone(n *NodeResult) {
	if n.Caps.AllPortSelect() && w.o.Clear.Any() && n.All != nil {
		w.sched.Submit(n.GUID.String(), "clear", func(ctx context.Context) error {
			w.clearPort(ctx, n, n.LID, AllPorts)
			w.finished(n)
			return nil
		})
		return
	}
	w.finished(n)
}

// finished marks n's reads over and hands it to OnNode once the sweep
// keeps it.
func (w *sweep) finished(n *NodeResult) {
	n.done.Store(true)
	w.emit(n)
}

func (w *sweep) emit(n *NodeResult) {
	if w.o.OnNode == nil || !n.done.Load() || !n.final.Load() || !n.emitted.CompareAndSwap(false, true) {
		return
	}
	w.emitMu.Lock()
	defer w.emitMu.Unlock()
	w.o.OnNode(n)
}

// sweep reads every node's counters through the scheduler.
func (w *sweep) sweep(ctx context.Context, nodes []*subnet.Node) []*NodeResult {
	w.startSched(ctx)
	stop := make(chan struct{})
	if w.o.Progress != nil {
		go func() {
			t := time.NewTicker(100 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					w.o.Progress(SweepProgress{Done: int(w.done.Load()), Queued: int(w.total.Load()), Nodes: len(nodes)})
				}
			}
		}()
	}
	res := make([]*NodeResult, len(nodes))
	var fresh []*NodeResult
	for i, n := range nodes {
		if qn := w.early[n]; qn != nil {
			if sn := snap(n); qn.snap.equal(&sn) {
				res[i] = qn
				qn.final.Store(true)
				w.emit(qn)
				continue
			}
			// The discovery changed the node after its reads began: read
			// it again, as it is now.
		}
		res[i] = w.newNode(n)
		res[i].final.Store(true)
		fresh = append(fresh, res[i])
	}
	for _, n := range fresh {
		w.launch(n)
	}
	_, _ = w.sched.Wait()
	close(stop)
	if w.o.Progress != nil {
		w.o.Progress(SweepProgress{Done: int(w.done.Load()), Queued: int(w.total.Load()), Nodes: len(nodes)})
	}
	return res
}

// settled runs on the discovery's walk each time it has processed every
// query about node n: the node's reads can begin (once the SLs are in,
// which the reads use). A node changed later is read again by sweep.
func (w *sweep) settled(n *subnet.Node, slDone chan struct{}) {
	if w.early[n] != nil || (w.o.Want != nil && !w.o.Want(n)) {
		return
	}
	if n.Type != iba.NodeTypeSwitch {
		// A CA with a port not found yet may be reached by it later in
		// the walk (rails): read it when the walk is over, not twice.
		for p := 1; p <= n.NumPorts; p++ {
			if n.Port(p) == nil {
				return
			}
		}
	}
	qn := w.newNode(n)
	w.early[n] = qn
	w.backlog = append(w.backlog, qn)
	if slDone != nil {
		select {
		case <-slDone:
		default:
			return
		}
	}
	w.launchBacklog()
}

func (w *sweep) launchBacklog() {
	for _, qn := range w.backlog {
		w.launch(qn)
	}
	w.backlog = nil
}

// startSched makes the scheduler of the reads.
func (w *sweep) startSched(ctx context.Context) {
	if w.sched != nil {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	w.cancel = cancel
	w.sched = sched.New(ctx, sched.Options{MaxInFlight: w.o.MaxInFlight, PerTarget: w.o.PerNode,
		Busy: func(err error) bool { return errors.Is(err, mad.ErrBusy) }})
}

// stopSched drops the reads still queued and waits for those running.
func (w *sweep) stopSched() {
	if w.sched != nil && w.cancel != nil {
		w.cancel()
		_, _ = w.sched.Wait()
	}
}

// newNode prepares the reading of one node as the discovery has it now.
func (w *sweep) newNode(n *subnet.Node) *NodeResult {
	qn := &NodeResult{Node: n, GUID: n.GUID, Type: n.Type, snap: snap(n), Ports: make([]*PortResult, n.NumPorts+1)}
	if n.Type == iba.NodeTypeSwitch {
		qn.LID = qn.snap.smaLID
	} else {
		for p := 1; p <= qn.snap.numPorts; p++ {
			if qn.snap.port(p) {
				qn.LID = qn.snap.ports[p].lid
				break
			}
		}
	}
	return qn
}

func (n *NodeResult) fail(e *PortError) {
	e.Node = n.GUID
	n.mu.Lock()
	n.Errors = append(n.Errors, e)
	n.mu.Unlock()
}

// launch queues a node's first read; the rest follow from its answers.
// With its capabilities known, the first reads are its counters.
func (w *sweep) launch(n *NodeResult) {
	// Launched once the SLs are in (PathSLs), which the target carries.
	n.target = w.target(n.LID)
	if w.o.Capabilities != nil {
		if caps, ok := w.o.Capabilities(n.Node); ok {
			n.Caps = caps
			// The node's pending count holds it open until every read
			// queued here is: a placeholder job does that.
			n.pending.Add(1)
			w.total.Add(1)
			w.readPorts(n)
			w.jobDone(n)
			return
		}
	}
	w.submitAsync(n, "ClassPortInfo", func(ctx context.Context, finish func()) {
		cpi := &iba.ClassPortInfo{}
		w.startGet(ctx, n, n.LID, 0, cpi, func(err error) {
			w.capabilities(n, cpi, err)
			finish()
		})
	})
}

// capabilities takes in the PMA's ClassPortInfo (or the failure to read
// it) and queues the node's counter reads.
func (w *sweep) capabilities(n *NodeResult, cpi *iba.ClassPortInfo, err error) {
	if err != nil {
		cpiPort := 0
		if n.snap.typ != iba.NodeTypeSwitch {
			for p := 1; p <= n.snap.numPorts; p++ {
				if n.snap.port(p) {
					cpiPort = p
					break
				}
			}
		}
		n.fail(&PortError{LID: n.LID, Port: cpiPort, Attribute: "ClassPortInfo", Op: OpRead, Err: err})
	} else {
		n.Caps = Capabilities{CapMask: cpi.CapabilityMask, CapMask2: cpi.CapabilityMask2}
	}
	w.readPorts(n)
}

// readPorts queues the counter reads of a node whose capabilities are in.
func (w *sweep) readPorts(n *NodeResult) {
	if w.o.AllPortsFirst && n.Caps.AllPortSelect() && !w.o.DataOnly {
		w.readErrorsJob(n, "PortCounters ALL", AllPorts, n.LID, func(pr *PortResult) {
			n.All = pr
			if pr.OK && pr.HasErrors {
				w.portLoop(n)
				return
			}
			n.PortsChecked += n.snap.numPorts
		})
		return
	}
	w.portLoop(n)
}

// readErrorsJob queues the reading of one port (or AllPorts) and then
// then(its result). Unless the reading clears counters or reads details,
// the job holds no goroutine while its MADs are out: PortCounters, and
// PortCountersExtended after it where wanted, are started one after the
// other from the MAD client's reader. Otherwise it runs on a goroutine of
// its own.
func (w *sweep) readErrorsJob(n *NodeResult, name string, port int, lid uint16, then func(*PortResult)) {
	if w.o.Details || w.o.Clear.Any() {
		w.submit(n, name, func(ctx context.Context) {
			pr := &PortResult{Port: port, LID: lid}
			pc := &iba.PortCounters{}
			err := w.get(ctx, n, lid, port, pc)
			w.errorsRead(ctx, n, pr, pc, err)
			then(pr)
			if !n.Caps.AllPortSelect() && port != AllPorts {
				w.clearPort(ctx, n, lid, port)
			}
		})
		return
	}
	w.submitAsync(n, name, func(ctx context.Context, finish func()) {
		pr := &PortResult{Port: port, LID: lid}
		pc := &iba.PortCounters{}
		w.startGet(ctx, n, lid, port, pc, func(err error) {
			if !w.countersIn(n, pr, pc, err) || !w.wantExt(n) {
				w.judge(pr)
				then(pr)
				finish()
				return
			}
			pce := &iba.PortCountersExtended{}
			w.startGet(ctx, n, lid, port, pce, func(err error) {
				w.extendedIn(n, pr, pce, err)
				w.judge(pr)
				then(pr)
				finish()
			})
		})
	})
}

// startGet starts the read of attr of one port (ClassPortInfo: port 0,
// which it ignores) at lid; done gets the outcome on the MAD client's
// reader. The read is counted, or given up at once when the node has
// been silent (GiveUpSilent).
func (w *sweep) startGet(ctx context.Context, n *NodeResult, lid uint16, port int, attr iba.Attribute, done func(error)) {
	req, err := w.request(n, lid, port, attr)
	if err != nil {
		done(err)
		return
	}
	w.mc.Start(ctx, req, func(rep *mad.Reply, err error) {
		done(w.replied(n, attr, rep, err))
	})
}

// get is startGet waiting for the outcome.
func (w *sweep) get(ctx context.Context, n *NodeResult, lid uint16, port int, attr iba.Attribute) error {
	req, err := w.request(n, lid, port, attr)
	if err != nil {
		return err
	}
	rep, err := w.mc.Do(ctx, req)
	return w.replied(n, attr, rep, err)
}

// request is the PerformanceGet of attr for one port.
func (w *sweep) request(n *NodeResult, lid uint16, port int, attr iba.Attribute) (mad.Request, error) {
	if w.o.GiveUpSilent && n.silent.Load() {
		return mad.Request{}, ErrGaveUp
	}
	d := attr.Desc()
	sel := 0
	if _, cpi := attr.(*iba.ClassPortInfo); !cpi {
		if port < 0 || port > AllPorts {
			return mad.Request{}, fmt.Errorf("port %d: PortSelect is 0 to 255", port)
		}
		sel = port
	}
	if d.Size > len(getData[sel]) {
		return mad.Request{}, fmt.Errorf("%s: %d bytes, more than a PerfMgt MAD's data", d.Name, d.Size)
	}
	t := n.target
	if lid != n.LID || t == nil {
		t = w.target(lid)
	}
	w.reads.Add(1)
	return mad.Request{Target: t, Class: iba.ClassPerfMgt, Method: iba.MethodGet, AttrID: d.AttrID,
		Data: getData[sel][:d.Size], Unchecked: true}, nil
}

// getData holds the data of every PerformanceGet a sweep sends, by
// PortSelect: zero but for the PortSelect byte (the client copies it into
// the MAD, so one table serves every request).
var getData = func() (t [AllPorts + 1][]byte) {
	for p := range t {
		t[p] = make([]byte, mad.Size-perfDataOff)
		t[p][1] = byte(p)
	}
	return t
}()

// perfDataOff is where a PerfMgt MAD's data begins (IBA 16.1.1: after the
// common header and 40 reserved bytes).
const perfDataOff = 64

// replied decodes a read's reply into attr and counts its MADs: the
// reply's tries, or the timeout's.
func (w *sweep) replied(n *NodeResult, attr iba.Attribute, rep *mad.Reply, err error) error {
	if err == nil {
		w.sent.Add(int64(rep.Tries))
		data := rep.Data()
		if len(data) < attr.Desc().Size {
			return fmt.Errorf("%s reply: %d bytes of data, want %d", attr.Desc().Name, len(data), attr.Desc().Size)
		}
		return attr.Unmarshal(data)
	}
	var te *mad.TimeoutError
	switch {
	case errors.As(err, &te):
		w.sent.Add(int64(te.Tries))
		w.timeouts.Add(1)
		n.silent.Store(true)
	case errors.Is(err, mad.ErrTimeout):
		w.timeouts.Add(1)
		n.silent.Store(true)
	case rep != nil:
		w.sent.Add(int64(rep.Tries))
	default:
		var se *mad.StatusError
		if errors.As(err, &se) {
			w.sent.Add(1) // a reply came, with an error status
		}
	}
	return err
}
func (w *sweep) firstPort(n *NodeResult) int {
	if n.snap.typ == iba.NodeTypeSwitch && n.snap.enhSP0 {
		return 0
	}
	return 1
}

func (w *sweep) portLoop(n *NodeResult) {
	for p := w.firstPort(n); p <= n.snap.numPorts; p++ {
		if !n.snap.port(p) {
			continue
		}
		lid := n.snap.smaLID
		if n.snap.typ != iba.NodeTypeSwitch {
			lid = n.snap.ports[p].lid
		}
		n.PortsChecked++
		if !w.o.DataOnly {
			w.readErrorsJob(n, "PortCounters", p, lid, func(pr *PortResult) { n.Ports[p] = pr })
			continue
		}
		w.submit(n, "PortCounters", func(ctx context.Context) {
			n.Ports[p] = w.readData(ctx, n, p, lid)
			if !n.Caps.AllPortSelect() {
				w.clearPort(ctx, n, lid, p)
			}
		})
	}
}

// wantExt says whether a port's PortCounters is followed by its
// PortCountersExtended.
func (w *sweep) wantExt(n *NodeResult) bool {
	return n.Caps.Extended() && (n.Caps.CapMask2&iba.PMCap2AdditionalPortCountersExtended != 0 || w.o.Data)
}

// countersIn takes in a port's PortCounters (or the failure to read it);
// false when it failed.
func (w *sweep) countersIn(n *NodeResult, pr *PortResult, pc *iba.PortCounters, err error) bool {
	if err != nil {
		n.fail(&PortError{LID: pr.LID, Port: pr.Port, Attribute: "PortCounters", Op: OpRead, Err: err})
		return false
	}
	pr.PortCounters = pc
	pr.OK = true
	port := pr.Port
	pr.Counters = FromPortCounters(pc, n.Caps)
	pr.Port = port
	pr.Time = time.Now()
	return true
}

// extendedIn takes in a port's PortCountersExtended, read after its
// PortCounters: a port whose PortCountersExtended failed is not OK.
func (w *sweep) extendedIn(n *NodeResult, pr *PortResult, pce *iba.PortCountersExtended, err error) bool {
	if err != nil {
		n.fail(&PortError{LID: pr.LID, Port: pr.Port, Attribute: "PortCountersExtended", Op: OpRead, Err: err})
		pr.OK = false
		return false
	}
	pr.PortCountersExtended = pce
	port := pr.Port
	pr.AddExtended(pce, n.Caps)
	pr.Port = port
	pr.Time = time.Now()
	return true
}

// judge marks a port whose reading Exceeds finds an error counter in
// error.
func (w *sweep) judge(pr *PortResult) {
	if !pr.OK || w.o.Exceeds == nil {
		return
	}
	for _, k := range ErrorCounters {
		if v, _ := pr.Get(k); w.o.Exceeds(k, v) {
			pr.HasErrors = true
			return
		}
	}
}

// errorsRead is a port's reading once PortCounters is in (or failed with
// err), on a goroutine of its own: it reads what else the port needs
// (PortCountersExtended, the details) and judges it.
func (w *sweep) errorsRead(ctx context.Context, n *NodeResult, pr *PortResult, pc *iba.PortCounters, err error) {
	if !w.countersIn(n, pr, pc, err) {
		return
	}
	port, lid := pr.Port, pr.LID
	if w.wantExt(n) {
		pce := &iba.PortCountersExtended{}
		if !w.extendedIn(n, pr, pce, w.get(ctx, n, lid, port, pce)) {
			return
		}
	}
	w.judge(pr)
	if !pr.HasErrors || !w.o.Details {
		return
	}
	for _, k := range ErrorCounters {
		if v, _ := pr.Get(k); !w.o.Exceeds(k, v) {
			continue
		}
		switch k {
		case PortXmitDiscards:
			d := &iba.PortXmitDiscardDetails{}
			if err := w.get(ctx, n, lid, port, d); err != nil {
				n.fail(&PortError{LID: lid, Port: port, Attribute: "PortXmitDiscardDetails", Op: OpRead, Err: err})
			} else {
				pr.XmitDiscardDetails = d
			}
		case PortRcvErrors:
			d := &iba.PortRcvErrorDetails{}
			if err := w.get(ctx, n, lid, port, d); err != nil {
				n.fail(&PortError{LID: lid, Port: port, Attribute: "PortRcvErrorDetails", Op: OpRead, Err: err})
			} else {
				pr.RcvErrorDetails = d
			}
		}
	}
}

// readData reads a port's data counters only (DataOnly).
func (w *sweep) readData(ctx context.Context, n *NodeResult, port int, lid uint16) *PortResult {
	pr := &PortResult{Port: port, LID: lid}
	if n.Caps.Extended() {
		pce := &iba.PortCountersExtended{}
		if err := w.get(ctx, n, lid, port, pce); err != nil {
			n.fail(&PortError{LID: lid, Port: port, Attribute: "PortCountersExtended", Op: OpRead, Err: err})
			return pr
		}
		pr.PortCountersExtended = pce
		pr.AddExtended(pce, n.Caps)
	} else {
		pc := &iba.PortCounters{}
		if err := w.get(ctx, n, lid, port, pc); err != nil {
			n.fail(&PortError{LID: lid, Port: port, Attribute: "PortCounters", Op: OpRead, Err: err})
			return pr
		}
		pr.PortCounters = pc
		pr.Counters = FromPortCounters(pc, n.Caps)
	}
	pr.Port = port
	pr.Time = time.Now()
	pr.OK = true
	return pr
}

// clearPort clears what SweepOptions.Clear selects on one port.
func (w *sweep) clearPort(ctx context.Context, n *NodeResult, lid uint16, port int) {
	if !w.o.Clear.Any() {
		return
	}
	done, errs := Clear(ctx, w.mc, w.target(lid), port, n.Caps, w.o.Clear)
	for _, e := range errs {
		e.LID = lid
		n.fail(e)
	}
	n.mu.Lock()
	n.Resets = append(n.Resets, done...)
	n.mu.Unlock()
}
