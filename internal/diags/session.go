package diags

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibaprint"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/namemap"
	"github.com/rdmakit/rdmakit/sa"
)

// session is a command's connection to the fabric the flags select: a
// fabric.Fabric (the MAD client with the flags' timeout, retries and
// tracing, the local port, the target resolver), with the short names the
// commands use.
type session struct {
	e *Env
	f *fabric.Fabric
	// mc, local and res are f.MAD, f.Local and f.Resolver.
	mc    *mad.Client
	local mad.LocalPort
	res   *ibpath.Resolver
	// names is the node name map targets are looked up in by name; nil
	// until a command sets it or a name is first looked up (the default
	// map then).
	names *namemap.Map
}

// SubnGet reads an SMP attribute as --sa says: from the SA's records for
// the attributes it keeps, else by SMP. SubnSet always goes out as an SMP
// on mc.
func (s *session) SubnGet(ctx context.Context, t mad.Target, attr iba.Attribute, mod uint32) error {
	return s.f.SubnGet(ctx, t, attr, mod)
}

var _ mad.SubnGetter = (*session)(nil)

// viaSA reports --sa mode.
func (s *session) viaSA() bool { return s.f.ViaSA() }

// open connects to the fabric. The caller closes the session.
func (e *Env) open() (*session, error) {
	opts, err := e.fabricOptions()
	if err != nil {
		return nil, err
	}
	f, err := fabric.Open(e.Ctx, e.fabricSpec(), opts...)
	if err != nil {
		return nil, fabricError(err)
	}
	return e.sessionOn(f), nil
}

// newSession puts a session with the flags' timeout, retries and tracing
// on an open transport, which the session then owns.
func (e *Env) newSession(t mad.Transport) (*session, error) {
	opts, err := e.fabricOptions()
	if err != nil {
		t.Close()
		return nil, err
	}
	f, err := fabric.New(e.Ctx, t, opts...)
	if err != nil {
		return nil, err
	}
	return e.sessionOn(f), nil
}

func (e *Env) sessionOn(f *fabric.Fabric) *session {
	if e.Debug > 0 {
		// python-rdma's first -d line.
		fmt.Fprintf(e.Stderr, "D: Using end port %s %v\n", f.Local.Name, iba.MakeGID(f.Local.GIDPrefix, f.Local.PortGUID))
	}
	return &session{e: e, f: f, mc: f.MAD, local: f.Local, res: f.Resolver}
}

func (s *session) Close() { s.f.Close() }

// tracer prints one line per MAD event with -d and the decoded packets with
// -dd, on stderr so that stdout stays the command's output. Events come
// from many goroutines at once, of every session a command opens; each is
// printed whole.
func (e *Env) tracer() func(mad.TraceEvent) {
	return func(ev mad.TraceEvent) {
		traceMu.Lock()
		defer traceMu.Unlock()
		fmt.Fprintf(e.Stderr, "D: %s\n", ev)
		if e.Debug > 1 && len(ev.MAD) > 0 {
			if err := ibaprint.DumpMAD(ibaprint.PrefixWriter(e.Stderr, "D:   "), ev.MAD); err != nil {
				fmt.Fprintf(e.Stderr, "D:   (%v)\n", err)
			}
		}
	}
}

var traceMu sync.Mutex

// errorTracer is -e/--errors: one line on stderr per MAD try that ends
// without a reply, per reply with an error status, and per MAD no request
// was waiting for (libibmad's madrpc_show_errors).
func (e *Env) errorTracer() func(mad.TraceEvent) {
	return func(ev mad.TraceEvent) {
		bad := ev.Kind == mad.TraceTimeout || ev.Kind == mad.TraceUnexpected
		if ev.Kind == mad.TraceReply && len(ev.MAD) >= 6 {
			// The Status field, without an SMP's direction bit.
			bad = binary.BigEndian.Uint16(ev.MAD[4:])&0x7fff != 0
		}
		if !bad {
			return
		}
		traceMu.Lock()
		defer traceMu.Unlock()
		s := ev.String()
		if ev.Kind == mad.TraceReply {
			s += fmt.Sprintf(": status 0x%04x", binary.BigEndian.Uint16(ev.MAD[4:])&0x7fff)
		}
		fmt.Fprintf(e.Stderr, "E: %s\n", s)
	}
}

// addrFlags are infiniband-diags' addressing flags: the destination
// argument is a DR path (-D), a LID (-L, the default meaning of a number) or
// a port GUID (-G).
type addrFlags struct {
	direct, lid, guid bool
}

func (a *addrFlags) mode() (ibpath.Mode, error) {
	n := 0
	m := ibpath.Any
	if a.direct {
		n++
		m = ibpath.DirectRoute
	}
	if a.lid {
		n++
		m = ibpath.LIDOnly
	}
	if a.guid {
		n++
		m = ibpath.PortGUID
	}
	if n > 1 {
		return 0, usagef("-D, -L and -G exclude each other")
	}
	return m, nil
}

// parseTarget reads a destination argument in the mode the flags select;
// with no flag, an argument that is no address (a LID, DR path, GID, GUID
// or path spec) is a node's name: the node name map's, else a
// NodeDescription the SA knows.
func (s *session) parseTarget(arg string, a *addrFlags) (ibpath.Path, error) {
	m, err := a.mode()
	if err != nil {
		return nil, err
	}
	p, err := ibpath.Parse(arg, ibpath.Options{Mode: m})
	if err == nil {
		return p, nil
	}
	if m != ibpath.Any || !maybeName(arg) {
		return nil, usagef("%v", err)
	}
	g, nerr := s.nodeNamed(arg)
	if nerr != nil {
		return nil, usagef("%v, nor a node's name: %v", err, nerr)
	}
	ip := &ibpath.IBPath{PKey: 0xffff, NodeGUID: g}
	ip.Mark("nodeGUID")
	return ip, nil
}

// maybeName says whether an argument that is no address can be a node's
// name: not empty, and no path spec.
func maybeName(arg string) bool {
	t := strings.TrimSpace(arg)
	return t != "" && !strings.Contains(t, "(")
}

// nodeNamed finds the one node a name names: in the node name map, else
// among the NodeDescriptions the SA knows.
func (s *session) nodeNamed(name string) (iba.GUID, error) {
	if s.names == nil {
		m, err := loadNames("")
		if err != nil {
			return 0, err
		}
		s.names = m
	}
	gs := s.names.GUIDs(name)
	from := "the node name map"
	if len(gs) == 0 {
		var err error
		if gs, err = s.res.NodesDescribed(s.e.Ctx, name); err != nil {
			return 0, err
		}
		from = "the SA's node descriptions"
	}
	switch len(gs) {
	case 0:
		return 0, fmt.Errorf("no node is named %q", name)
	case 1:
		return gs[0], nil
	}
	l := make([]string, len(gs))
	for i, g := range gs {
		l[i] = g.String()
	}
	return 0, fmt.Errorf("%d nodes are named %q in %s (%s); give one's GUID", len(gs), name, from, strings.Join(l, ", "))
}

// smpTarget resolves a destination for SMPs: DR paths and LIDs as given,
// GIDs and GUIDs to the LID the SA gives them.
func (s *session) smpTarget(arg string, a *addrFlags) (ibpath.Path, error) {
	p, err := s.parseTarget(arg, a)
	if err != nil {
		return nil, err
	}
	return s.res.SMP(s.e.Ctx, p)
}

// gmpTarget resolves a destination for GMPs. A plain LID gets its SL and
// P_Key from an SA PathRecord when the SA answers the first try, as
// python-rdma asks for every GMP, and goes as infiniband-diags sends it
// (SL 0, the default P_Key) when not, so that the commands work on a
// fabric without an SA as the C ones do; a GID, GUID, DR path or path spec
// is completed with a PathRecord as python-rdma does.
func (s *session) gmpTarget(arg string, a *addrFlags) (mad.Target, error) {
	p, err := s.parseTarget(arg, a)
	if err != nil {
		return nil, err
	}
	if ip, ok := p.(*ibpath.IBPath); ok && ip.Has("DLID") && !ip.Has("DGID") && onlyLID(arg) {
		if pr, err := s.quickPathResolver().GMP(s.e.Ctx, ip); err == nil {
			return pr, nil
		}
		r := ip.Route()
		r.Addr.QPN = mad.QP1
		r.Addr.QKey = mad.QP1QKey
		return r, nil
	}
	return s.res.GMP(s.e.Ctx, p)
}

// quickPathResolver is the session's resolver with one try per SA query:
// where the C tools ask no SA at all, a missing SA costs one timeout.
func (s *session) quickPathResolver() *ibpath.Resolver {
	c := s.f.SA()
	t, err := c.Target(s.e.Ctx)
	if err != nil {
		return s.res // no SM LID: the query fails at once
	}
	r := t.Route()
	r.Tries = 1
	return &ibpath.Resolver{MAD: s.mc, SA: s.f.SA(sa.WithTarget(r))}
}

func onlyLID(arg string) bool {
	return !strings.ContainsAny(arg, "(,:")
}
