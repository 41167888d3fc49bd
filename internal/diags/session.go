package diags

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibaprint"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
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

// parseTarget reads a destination argument in the mode the flags select.
func (s *session) parseTarget(arg string, a *addrFlags) (ibpath.Path, error) {
	m, err := a.mode()
	if err != nil {
		return nil, err
	}
	p, err := ibpath.Parse(arg, ibpath.Options{Mode: m})
	if err != nil {
		return nil, usagef("%v", err)
	}
	return p, nil
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

// gmpTarget resolves a destination for GMPs. A plain LID is used as
// infiniband-diags uses it (SL 0, the default P_Key, no SA query), so that
// the commands work on a fabric without an SA as the C ones do; a GID, GUID,
// DR path or path spec is completed with an SA PathRecord as python-rdma
// does.
func (s *session) gmpTarget(arg string, a *addrFlags) (mad.Target, error) {
	p, err := s.parseTarget(arg, a)
	if err != nil {
		return nil, err
	}
	if ip, ok := p.(*ibpath.IBPath); ok && ip.Has("DLID") && !ip.Has("DGID") && onlyLID(arg) {
		r := ip.Route()
		r.Addr.QPN = mad.QP1
		r.Addr.QKey = mad.QP1QKey
		return r, nil
	}
	return s.res.GMP(s.e.Ctx, p)
}

func onlyLID(arg string) bool {
	return !strings.ContainsAny(arg, "(,:")
}
