package mad

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/rdmakit/rdmakit/iba"
)

// The RPCs by their IBA names. Each takes a typed attribute: its contents
// are the request's data (zero it for a plain Get; PortCounters carries its
// PortSelect) and the reply's data is decoded back into it. An RPC that the
// attribute's metadata does not list is refused with an *IllegalRPCError
// before anything is sent.

// SubnGet reads an SMP attribute (IBA 14.2.1), LID routed or directed
// route as the target's route says.
func (c *Client) SubnGet(ctx context.Context, t Target, attr iba.Attribute, mod uint32) error {
	return c.attrRPC(ctx, t, iba.ClassSubnMgt, iba.MethodGet, "SubnGet", attr, mod, 0)
}

// SubnSet writes an SMP attribute and decodes the reply into attr.
func (c *Client) SubnSet(ctx context.Context, t Target, attr iba.Attribute, mod uint32) error {
	return c.attrRPC(ctx, t, iba.ClassSubnMgt, iba.MethodSet, "SubnSet", attr, mod, 0)
}

// PerformanceGet reads a PerfMgt attribute (IBA 16.1).
func (c *Client) PerformanceGet(ctx context.Context, t Target, attr iba.Attribute, mod uint32) error {
	return c.attrRPC(ctx, t, iba.ClassPerfMgt, iba.MethodGet, "PerformanceGet", attr, mod, 0)
}

// PerformanceSet writes a PerfMgt attribute (clearing counters, ...).
func (c *Client) PerformanceSet(ctx context.Context, t Target, attr iba.Attribute, mod uint32) error {
	return c.attrRPC(ctx, t, iba.ClassPerfMgt, iba.MethodSet, "PerformanceSet", attr, mod, 0)
}

// DevMgtGet reads a DevMgt attribute (IBA 16.3).
func (c *Client) DevMgtGet(ctx context.Context, t Target, attr iba.Attribute, mod uint32) error {
	return c.attrRPC(ctx, t, iba.ClassDevMgt, iba.MethodGet, "DevMgtGet", attr, mod, 0)
}

// DevMgtSet writes a DevMgt attribute.
func (c *Client) DevMgtSet(ctx context.Context, t Target, attr iba.Attribute, mod uint32) error {
	return c.attrRPC(ctx, t, iba.ClassDevMgt, iba.MethodSet, "DevMgtSet", attr, mod, 0)
}

// CongestionGet reads a CongestionCtl attribute (IBA annex A10).
func (c *Client) CongestionGet(ctx context.Context, t Target, attr iba.Attribute, mod uint32) error {
	return c.attrRPC(ctx, t, iba.ClassCongestionCtl, iba.MethodGet, "CongestionGet", attr, mod, 0)
}

// CongestionSet writes a CongestionCtl attribute.
func (c *Client) CongestionSet(ctx context.Context, t Target, attr iba.Attribute, mod uint32) error {
	return c.attrRPC(ctx, t, iba.ClassCongestionCtl, iba.MethodSet, "CongestionSet", attr, mod, 0)
}

// BMGet reads a baseboard management attribute (IBA 16.2).
func (c *Client) BMGet(ctx context.Context, t Target, attr iba.Attribute, mod uint32) error {
	return c.attrRPC(ctx, t, iba.ClassBM, iba.MethodGet, "BMGet", attr, mod, 0)
}

// BMSet writes a baseboard management attribute.
func (c *Client) BMSet(ctx context.Context, t Target, attr iba.Attribute, mod uint32) error {
	return c.attrRPC(ctx, t, iba.ClassBM, iba.MethodSet, "BMSet", attr, mod, 0)
}

// VendGet reads a vendor attribute (IBA 16.5). class 0 takes the class of
// the attribute's bound vendor format; oui is for classes 0x30-0x4f.
func (c *Client) VendGet(ctx context.Context, t Target, class iba.Class, oui uint32, attr iba.Attribute, mod uint32) error {
	class, err := vendorClass(class, attr)
	if err != nil {
		return err
	}
	return c.attrRPC(ctx, t, class, iba.MethodGet, "VendGet", attr, mod, oui)
}

// VendSet writes a vendor attribute.
func (c *Client) VendSet(ctx context.Context, t Target, class iba.Class, oui uint32, attr iba.Attribute, mod uint32) error {
	class, err := vendorClass(class, attr)
	if err != nil {
		return err
	}
	return c.attrRPC(ctx, t, class, iba.MethodSet, "VendSet", attr, mod, oui)
}

func vendorClass(class iba.Class, attr iba.Attribute) (iba.Class, error) {
	if class == 0 {
		if bf := attr.Desc().BoundFormat; bf != nil && bf.Format != nil {
			class = iba.Class(bf.Format.Class)
		}
	}
	if !class.IsVendor() {
		return 0, fmt.Errorf("vendor RPC for %s: class 0x%02x is not a vendor class", attr.Desc().Name, uint8(class))
	}
	return class, nil
}

// checkRPC refuses what the attribute's metadata does not allow.
func checkRPC(rpc string, d *iba.Struct) error {
	if !d.HasAttrID || !d.Allows(rpc) {
		return &IllegalRPCError{RPC: rpc, Attr: d.Name, Allowed: d.Methods}
	}
	return nil
}

// marshalAttr encodes an attribute into a buffer of its size.
func marshalAttr(attr iba.Attribute) ([]byte, error) {
	d := attr.Desc()
	b := make([]byte, d.Size)
	if err := attr.MarshalTo(b); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", d.Name, err)
	}
	return b, nil
}

// unmarshalAttr decodes reply data into attr; data shorter than the
// attribute (an SMP carries only 64 bytes of a Notice) is zero padded.
func unmarshalAttr(attr iba.Attribute, data []byte) error {
	d := attr.Desc()
	if len(data) < d.Size {
		b := make([]byte, d.Size)
		copy(b, data)
		data = b
	}
	return attr.Unmarshal(data)
}

func (c *Client) attrRPC(ctx context.Context, t Target, class iba.Class, m iba.Method, rpc string, attr iba.Attribute, mod, oui uint32) error {
	req, err := attrRequest(t, class, m, rpc, attr, mod, oui)
	if err != nil {
		return err
	}
	rep, err := c.Do(ctx, req)
	if err != nil {
		return err
	}
	return attrReply(t, rpc, attr, rep)
}

// StartPerformanceGet is PerformanceGet through Start: done is called with
// what PerformanceGet would return, attr decoded, on the goroutines Start
// says.
func (c *Client) StartPerformanceGet(ctx context.Context, t Target, attr iba.Attribute, mod uint32, done func(error)) {
	const rpc = "PerformanceGet"
	req, err := attrRequest(t, iba.ClassPerfMgt, iba.MethodGet, rpc, attr, mod, 0)
	if err != nil {
		done(err)
		return
	}
	c.Start(ctx, req, func(rep *Reply, err error) {
		if err == nil {
			err = attrReply(t, rpc, attr, rep)
		}
		done(err)
	})
}

// attrRequest is the request of an RPC on a typed attribute.
func attrRequest(t Target, class iba.Class, m iba.Method, rpc string, attr iba.Attribute, mod, oui uint32) (Request, error) {
	d := attr.Desc()
	if err := checkRPC(rpc, d); err != nil {
		return Request{}, err
	}
	data, err := marshalAttr(attr)
	if err != nil {
		return Request{}, err
	}
	return Request{Target: t, Class: class, Method: m, AttrID: d.AttrID, AttrMod: mod, Data: data, DataOff: d.DataOff / 8, OUI: oui, Unchecked: true}, nil
}

// attrReply decodes the reply of an RPC on a typed attribute into it.
func attrReply(t Target, rpc string, attr iba.Attribute, rep *Reply) error {
	d := attr.Desc()
	reply := rep.Data()
	if d.DataOff != 0 {
		// An attribute outside the data area (CongestionLog starts in the
		// congestion control log area, IBA A10.4.3.5).
		reply = nil
		if off := d.DataOff / 8; off <= len(rep.MAD) {
			reply = rep.MAD[off:]
		}
	}
	if err := unmarshalAttr(attr, reply); err != nil {
		// Through Start the MADs are the client's once done returns.
		return &ReplyError{RPC: rpc, Target: t.String(), Err: err, Request: bytes.Clone(rep.Request), Reply: bytes.Clone(rep.MAD)}
	}
	return nil
}

// SubnAdmGet asks the SA for the one record matching rec's components
// selected by mask (IBA 15.2.2: SubnAdmGet) and decodes it into rec.
func (c *Client) SubnAdmGet(ctx context.Context, t Target, rec iba.Attribute, mask uint64) error {
	return c.saRPC(ctx, t, iba.MethodGet, "SubnAdmGet", rec, mask)
}

// SubnAdmSet asks the SA to set a record (ServiceRecord, MCMemberRecord,
// ...) and decodes the one it answers.
func (c *Client) SubnAdmSet(ctx context.Context, t Target, rec iba.Attribute, mask uint64) error {
	return c.saRPC(ctx, t, iba.MethodSet, "SubnAdmSet", rec, mask)
}

// SubnAdmDelete asks the SA to delete a record and decodes the one it
// answers.
func (c *Client) SubnAdmDelete(ctx context.Context, t Target, rec iba.Attribute, mask uint64) error {
	return c.saRPC(ctx, t, iba.MethodDelete, "SubnAdmDelete", rec, mask)
}

func (c *Client) saRPC(ctx context.Context, t Target, m iba.Method, rpc string, rec iba.Attribute, mask uint64) error {
	d := rec.Desc()
	if err := checkRPC(rpc, d); err != nil {
		return err
	}
	data, err := marshalAttr(rec)
	if err != nil {
		return err
	}
	rep, err := c.Do(ctx, Request{Target: t, Class: iba.ClassSubnAdm, Method: m, AttrID: d.AttrID, Data: data, CompMask: mask, Unchecked: true})
	if err != nil {
		return err
	}
	if err := unmarshalAttr(rec, rep.Data()); err != nil {
		return &ReplyError{RPC: rpc, Target: t.String(), Err: err, Request: rep.Request, Reply: rep.MAD}
	}
	return nil
}

// Table is the answer to a SubnAdmGetTable: the records as bytes, each
// Stride long (the SA header's AttributeOffset).
type Table struct {
	Reply   *Reply
	Stride  int
	Records [][]byte
}

// SubnAdmGetTable asks the SA for every record matching rec's components
// selected by mask (IBA 15.2.2: SubnAdmGetTable); the answer comes as an
// RMPP transfer, reassembled here or by the kernel.
func (c *Client) SubnAdmGetTable(ctx context.Context, t Target, rec iba.Attribute, mask uint64) (*Table, error) {
	d := rec.Desc()
	if err := checkRPC("SubnAdmGetTable", d); err != nil {
		return nil, err
	}
	data, err := marshalAttr(rec)
	if err != nil {
		return nil, err
	}
	rep, err := c.Do(ctx, Request{Target: t, Class: iba.ClassSubnAdm, Method: iba.MethodGetTable, AttrID: d.AttrID, Data: data, CompMask: mask, Unchecked: true})
	if err != nil {
		return nil, err
	}
	tb, err := splitTable(rep, d, !c.t.KernelRMPP())
	if err != nil {
		var re *ReplyError
		if errors.As(err, &re) {
			re.Target = t.String()
		}
		return nil, err
	}
	return tb, nil
}

// SplitTable cuts the records out of the reply to a SubnAdmGetTable sent
// with Do, as SubnAdmGetTable does (IBA 15.2.5: records AttributeOffset
// apart), for a request Do built from bytes rather than from an attribute
// of the registry; d is the record's structure.
func (c *Client) SplitTable(rep *Reply, d *iba.Struct) (*Table, error) {
	return splitTable(rep, d, !c.t.KernelRMPP())
}

// splitTable cuts the records out of a GetTableResp.
func splitTable(rep *Reply, d *iba.Struct, userRMPP bool) (*Table, error) {
	tb := &Table{Reply: rep, Stride: rep.AttrOffset()}
	data := rep.Data()
	if tb.Stride == 0 {
		return tb, nil // no records: OpenSM sets no offset then
	}
	if tb.Stride < d.Size {
		return nil, &ReplyError{RPC: "SubnAdmGetTable", Err: fmt.Errorf("AttributeOffset %d bytes is shorter than %s (%d bytes)", tb.Stride, d.Name, d.Size), Request: rep.Request, Reply: rep.MAD}
	}
	for off := 0; off+d.Size <= len(data); off += tb.Stride {
		tb.Records = append(tb.Records, data[off:off+d.Size])
	}
	if userRMPP && rep.segments == 0 {
		// One MAD that was never segmented (a table through ibsim, which
		// has no RMPP): the record count is unknown, and what follows
		// the real records is zero padding.
		zero := make([]byte, d.Size)
		for len(tb.Records) > 0 && bytes.Equal(tb.Records[len(tb.Records)-1], zero) {
			tb.Records = tb.Records[:len(tb.Records)-1]
		}
	}
	return tb, nil
}

// Decode decodes record i into rec.
func (tb *Table) Decode(i int, rec iba.Attribute) error {
	if i < 0 || i >= len(tb.Records) {
		return fmt.Errorf("record %d of %d", i, len(tb.Records))
	}
	return rec.Unmarshal(tb.Records[i])
}

// IsNoRecords reports an SA ERR_NO_RECORDS status.
func IsNoRecords(err error) bool { return errors.Is(err, ErrSANoRecords) }

// SubnGetter is what a command needs to read SMP attributes: *Client sends
// SMPs, package sa's adapter answers from SA records (--sa mode).
type SubnGetter interface {
	SubnGet(ctx context.Context, t Target, attr iba.Attribute, mod uint32) error
}

var _ SubnGetter = (*Client)(nil)
