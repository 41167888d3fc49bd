package sa

import (
	"context"
	"fmt"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
)

// Client queries the subnet administrator through a mad.Client.
type Client struct {
	mc     *mad.Client
	target mad.Target
	smKey  uint64
}

// Option configures a Client.
type Option func(*Client)

// WithSMKey sets the SM_Key sent in every query (IBA 15.2.1.1; needed for
// some records and for Set/Delete).
func WithSMKey(k uint64) Option { return func(c *Client) { c.smKey = k } }

// WithTarget sends queries along t instead of to the SM LID and SL that the
// local port reports (python-rdma's --sa-path).
func WithTarget(t mad.Target) Option { return func(c *Client) { c.target = t } }

// New returns an SA client on mc.
func New(mc *mad.Client, opts ...Option) *Client {
	c := &Client{mc: mc}
	for _, o := range opts {
		o(c)
	}
	return c
}

// MAD returns the underlying mad.Client.
func (c *Client) MAD() *mad.Client { return c.mc }

// Target gives the path to the SA: WithTarget's, or the local port's SM
// LID and SM SL on QP1 (IBA 15.4.1: the SA is reached at QP1 of the SM's
// port).
func (c *Client) Target(ctx context.Context) (mad.Target, error) {
	var r mad.Route
	if c.target != nil {
		r = c.target.Route()
		if r.Name == "" {
			r.Name = c.target.String()
		}
	} else {
		lp, err := c.mc.LocalPort(ctx)
		if err != nil {
			return nil, fmt.Errorf("finding the SA: %w", err)
		}
		if lp.SMLID == 0 || lp.SMLID >= 0xc000 {
			return nil, fmt.Errorf("finding the SA: port %s has no SM LID (%d); is a subnet manager running?", lp.Name, lp.SMLID)
		}
		r = mad.Route{Addr: mad.Addr{LID: lp.SMLID, SL: lp.SMSL, QPN: mad.QP1, QKey: mad.QP1QKey}, Name: fmt.Sprintf("SA at LID %d", lp.SMLID)}
	}
	if r.SMKey == 0 {
		r.SMKey = c.smKey
	}
	return r, nil
}

// QueryOption changes the component mask of one query.
type QueryOption func(*query)

type query struct {
	components []string
	mask       *uint64
}

// Components adds the mask bits of the named components even when they
// are zero (see ComponentMask).
func Components(names ...string) QueryOption {
	return func(q *query) { q.components = append(q.components, names...) }
}

// Mask sets the component mask outright.
func Mask(m uint64) QueryOption { return func(q *query) { q.mask = &m } }

func (q *query) compute(rec iba.Attribute) (uint64, error) {
	if q.mask != nil {
		return *q.mask, nil
	}
	return ComponentMask(rec, q.components...)
}

func newQuery(opts []QueryOption) *query {
	q := &query{}
	for _, o := range opts {
		o(q)
	}
	return q
}

// Get asks for the one record matching rec (SubnAdmGet): the components
// that are set in rec, and those named by Components, select it. The
// record found replaces rec. No match is an error that matches
// mad.ErrSANoRecords; several, mad.ErrSATooManyRecords.
func (c *Client) Get(ctx context.Context, rec iba.Attribute, opts ...QueryOption) error {
	mask, err := newQuery(opts).compute(rec)
	if err != nil {
		return fmt.Errorf("SubnAdmGet %s: %w", rec.Desc().Name, err)
	}
	t, err := c.Target(ctx)
	if err != nil {
		return err
	}
	return c.mc.SubnAdmGet(ctx, t, rec, mask)
}

// Table asks for every record matching rec (SubnAdmGetTable) and returns
// them undecoded.
func (c *Client) Table(ctx context.Context, rec iba.Attribute, opts ...QueryOption) (*mad.Table, error) {
	mask, err := newQuery(opts).compute(rec)
	if err != nil {
		return nil, fmt.Errorf("SubnAdmGetTable %s: %w", rec.Desc().Name, err)
	}
	t, err := c.Target(ctx)
	if err != nil {
		return nil, err
	}
	return c.mc.SubnAdmGetTable(ctx, t, rec, mask)
}

// Record is the constraint of GetTable's type parameter: a pointer to an
// iba record type.
type Record[T any] interface {
	*T
	iba.Attribute
}

// GetTable asks for every record matching rec and decodes them. An SA
// answering ERR_NO_RECORDS to a table query gives no records and no error.
func GetTable[T any, P Record[T]](ctx context.Context, c *Client, rec P, opts ...QueryOption) ([]T, error) {
	tb, err := c.Table(ctx, rec, opts...)
	if mad.IsNoRecords(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]T, len(tb.Records))
	for i := range out {
		if err := P(&out[i]).Unmarshal(tb.Records[i]); err != nil {
			return nil, fmt.Errorf("SubnAdmGetTable %s: record %d: %w", rec.Desc().Name, i, err)
		}
	}
	return out, nil
}

// PathRecord asks for the path from sgid to the port named by dgid (or by
// dlid when dgid is zero), reversible as GMPs need (IBA 15.2.5.16; what
// python-rdma's resolve_path sends).
func (c *Client) PathRecord(ctx context.Context, sgid, dgid iba.GID, dlid uint16) (iba.PathRecord, error) {
	q := iba.PathRecord{SGID: sgid, DGID: dgid, Reversible: 1}
	if dgid == (iba.GID{}) {
		q.DLID = dlid
	}
	if err := c.Get(ctx, &q); err != nil {
		return iba.PathRecord{}, err
	}
	return q, nil
}
