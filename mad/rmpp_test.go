package mad_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/mad/madtest"
)

// nodeRecords makes n distinct records.
func nodeRecords(n int) []iba.NodeRecord {
	recs := make([]iba.NodeRecord, n)
	for i := range recs {
		recs[i].LID = uint16(i + 1)
		recs[i].NodeInfo.NodeGUID = iba.GUID(0x0002c90300000000 + uint64(i))
		recs[i].NodeInfo.NodeType = iba.NodeTypeCA
		copy(recs[i].NodeDescription.NodeString[:], fmt.Sprintf("node %d", i))
	}
	return recs
}

const nodeRecordStride = 112 // 108 bytes rounded up to 8 (IBA 15.2.1.1)

// serveTable runs an SA on the server client that answers GetTable for
// NodeRecord with recs, and Get with the record whose LID matches.
func serveTable(t *testing.T, srv *mad.Client, recs []iba.NodeRecord) {
	t.Helper()
	table := make([]byte, len(recs)*nodeRecordStride)
	for i := range recs {
		_ = recs[i].MarshalTo(table[i*nodeRecordStride:])
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		err := srv.Serve(ctx, iba.ClassSubnAdm, 2, []iba.Method{iba.MethodGet, iba.MethodGetTable}, func(ctx context.Context, req *mad.ServerRequest) (*mad.ServerReply, error) {
			if req.AttrID != 0x11 {
				return nil, mad.ErrMethodAttrUnsupported
			}
			if req.Method == iba.MethodGetTable {
				return &mad.ServerReply{Data: table, AttrOffset: nodeRecordStride}, nil
			}
			var q iba.NodeRecord
			if err := q.Unmarshal(req.Data()); err != nil {
				return nil, err
			}
			if req.CompMask()&1 == 0 || q.LID == 0 || int(q.LID) > len(recs) {
				return nil, mad.ErrSANoRecords
			}
			return &mad.ServerReply{Data: table[int(q.LID-1)*nodeRecordStride:][:nodeRecordStride], AttrOffset: nodeRecordStride}, nil
		})
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	time.Sleep(10 * time.Millisecond) // let Serve register
}

func pipeClients(t *testing.T, aOpts, bOpts []madtest.Option, clientOpts ...mad.Option) (cli, srv *mad.Client, ta, tb *madtest.Transport) {
	t.Helper()
	aOpts = append([]madtest.Option{madtest.WithPort(mad.LocalPort{Name: "a/1", LID: 1, SMLID: 2})}, aOpts...)
	bOpts = append([]madtest.Option{madtest.WithPort(mad.LocalPort{Name: "b/1", LID: 2, SMLID: 2})}, bOpts...)
	ta, tb = madtest.Pipe(aOpts, bOpts)
	return newClient(t, ta, clientOpts...), newClient(t, tb, clientOpts...), ta, tb
}

func checkTable(t *testing.T, tb *mad.Table, recs []iba.NodeRecord) {
	t.Helper()
	if tb.Stride != nodeRecordStride || len(tb.Records) != len(recs) {
		t.Fatalf("stride %d, %d records; want %d, %d", tb.Stride, len(tb.Records), nodeRecordStride, len(recs))
	}
	for i := range recs {
		var r iba.NodeRecord
		if err := tb.Decode(i, &r); err != nil {
			t.Fatal(err)
		}
		if r != recs[i] {
			t.Fatalf("record %d: got LID %d GUID %v, want LID %d GUID %v", i, r.LID, r.NodeInfo.NodeGUID, recs[i].LID, recs[i].NodeInfo.NodeGUID)
		}
	}
}

func TestRMPPGetTable3000Records(t *testing.T) {
	var segments atomic.Int64
	count := func(p *mad.Packet) bool {
		if p.MAD[25] == mad.RMPPTypeData && p.MAD[26]&mad.RMPPFlagActive != 0 {
			segments.Add(1)
			if len(p.MAD) != mad.Size {
				t.Errorf("segment of %d bytes", len(p.MAD))
			}
		}
		return false
	}
	cli, srv, _, _ := pipeClients(t, nil, []madtest.Option{madtest.WithDrop(count)})
	recs := nodeRecords(3000)
	serveTable(t, srv, recs)
	tb, err := cli.SubnAdmGetTable(testCtx(t), lid(2), &iba.NodeRecord{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkTable(t, tb, recs)
	want := int64((3000*nodeRecordStride + 199) / 200)
	if segments.Load() != want {
		t.Errorf("server sent %d segments, want %d", segments.Load(), want)
	}
	// A single-record Get over the same server.
	r := iba.NodeRecord{LID: 77}
	if err := cli.SubnAdmGet(testCtx(t), lid(2), &r, 1); err != nil {
		t.Fatal(err)
	}
	if r != recs[76] {
		t.Errorf("SubnAdmGet: got %+v", r.NodeInfo)
	}
	if err := cli.SubnAdmGet(testCtx(t), lid(2), &iba.NodeRecord{LID: 9999}, 1); !errors.Is(err, mad.ErrSANoRecords) {
		t.Errorf("missing record: %v", err)
	}
}

func TestRMPPLostSegmentsAreResent(t *testing.T) {
	for _, tc := range []struct {
		loss float64
		n    int
	}{{0.02, 3000}, {0.1, 3000}, {0.3, 500}} {
		loss := tc.loss
		t.Run(fmt.Sprint(loss), func(t *testing.T) {
			var segLost, ackLost atomic.Int64
			dropSeg := lossy(7, loss)
			dropAck := lossy(8, loss)
			a := []madtest.Option{madtest.WithDrop(func(p *mad.Packet) bool {
				if p.MAD[25] == mad.RMPPTypeAck && dropAck(p) {
					ackLost.Add(1)
					return true
				}
				return false
			})}
			b := []madtest.Option{madtest.WithDrop(func(p *mad.Packet) bool {
				if p.MAD[25] == mad.RMPPTypeData && dropSeg(p) {
					segLost.Add(1)
					return true
				}
				return false
			})}
			// A try of 50 ms: the transfer is given up after 8 tries
			// without progress, 0.4 s, which a loaded CI machine (VM
			// boots in the packages beside) can reach with 20 ms ones.
			cli, srv, _, _ := pipeClients(t, a, b, mad.WithTimeout(50*time.Millisecond), mad.WithRetries(8))
			recs := nodeRecords(tc.n)
			serveTable(t, srv, recs)
			start := time.Now()
			tb, err := cli.SubnAdmGetTable(testCtx(t), lid(2), &iba.NodeRecord{}, 0)
			if err != nil {
				t.Fatal(err)
			}
			checkTable(t, tb, recs)
			t.Logf("loss %.0f%%: %d segments and %d ACKs lost, done in %v", loss*100, segLost.Load(), ackLost.Load(), time.Since(start))
			if segLost.Load() == 0 {
				t.Error("no segment was lost: the test tests nothing")
			}
		})
	}
}

func TestRMPPSenderGivesUp(t *testing.T) {
	// Every ACK is lost: the server's sender must stop after its tries and
	// the client must time out, not hang.
	a := []madtest.Option{madtest.WithDrop(func(p *mad.Packet) bool { return p.MAD[25] == mad.RMPPTypeAck })}
	cli, srv, _, _ := pipeClients(t, a, nil, mad.WithTimeout(10*time.Millisecond), mad.WithRetries(3))
	serveTable(t, srv, nodeRecords(500))
	start := time.Now()
	_, err := cli.SubnAdmGetTable(testCtx(t), lid(2), &iba.NodeRecord{}, 0)
	// Whichever side gives up first ends it: the sender's ABORT (too many
	// retries) or the receiver's timeout.
	var re *mad.RMPPError
	if !errors.Is(err, mad.ErrTimeout) && !(errors.As(err, &re) && re.Status == mad.RMPPStatusTooManyRetries) {
		t.Fatalf("got %v, want a timeout or the sender's ABORT", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("took %v to give up", time.Since(start))
	}
}

func TestRMPPAbortFromSender(t *testing.T) {
	tr := madtest.New(func(req *mad.Packet) []*mad.Packet {
		rep := madtest.Reply(req, 0, nil)
		rep.MAD[24], rep.MAD[25], rep.MAD[26], rep.MAD[27] = 1, mad.RMPPTypeAbort, mad.RMPPFlagActive, mad.RMPPStatusUnspecified
		return []*mad.Packet{rep}
	})
	c := newClient(t, tr)
	_, err := c.SubnAdmGetTable(testCtx(t), lid(2), &iba.NodeRecord{}, 0)
	var re *mad.RMPPError
	if !errors.As(err, &re) || re.Type != mad.RMPPTypeAbort || re.Status != mad.RMPPStatusUnspecified {
		t.Fatalf("got %v", err)
	}
}

func TestKernelRMPPPassThrough(t *testing.T) {
	recs := nodeRecords(40)
	table := make([]byte, len(recs)*nodeRecordStride)
	for i := range recs {
		_ = recs[i].MarshalTo(table[i*nodeRecordStride:])
	}
	tr := madtest.New(func(req *mad.Packet) []*mad.Packet {
		rep := madtest.Reply(req, 0, table)
		binary.BigEndian.PutUint16(rep.MAD[44:], nodeRecordStride/8)
		rep.MAD[26] |= mad.RMPPFlagActive
		return []*mad.Packet{rep}
	}, madtest.WithKernelRMPP())
	c := newClient(t, tr)
	tb, err := c.SubnAdmGetTable(testCtx(t), lid(2), &iba.NodeRecord{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkTable(t, tb, recs)
	if tr.Sent() != 1 {
		t.Errorf("sent %d MADs: with kernel RMPP the client sends no ACKs", tr.Sent())
	}
	if ag := tr.Agents(); len(ag) != 1 || ag[0].RMPPVersion != 1 || ag[0].Class != 0x03 {
		t.Errorf("agents %+v: want one SA agent with RMPP version 1", ag)
	}
}

func TestUnsegmentedTableThroughIBSim(t *testing.T) {
	// OpenSM behind ibsim: flags active, segment 0, one MAD, zero padding.
	recs := nodeRecords(1)
	tr := madtest.New(func(req *mad.Packet) []*mad.Packet {
		b := make([]byte, nodeRecordStride)
		_ = recs[0].MarshalTo(b)
		rep := madtest.Reply(req, 0, b)
		binary.BigEndian.PutUint16(rep.MAD[44:], nodeRecordStride/8)
		rep.MAD[24], rep.MAD[25], rep.MAD[26] = 1, mad.RMPPTypeData, mad.RMPPFlagActive
		return []*mad.Packet{rep}
	})
	c := newClient(t, tr)
	tb, err := c.SubnAdmGetTable(testCtx(t), lid(2), &iba.NodeRecord{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkTable(t, tb, recs)

	// The same table asked for by Do, from bytes, and split by SplitTable.
	d := (&iba.NodeRecord{}).Desc()
	rep, err := c.Do(testCtx(t), mad.Request{Target: lid(2), Class: iba.ClassSubnAdm, Method: iba.MethodGetTable, AttrID: d.AttrID, Data: make([]byte, d.Size)})
	if err != nil {
		t.Fatal(err)
	}
	if tb, err = c.SplitTable(rep, d); err != nil {
		t.Fatal(err)
	}
	checkTable(t, tb, recs)
}

// rawReceiver acknowledges every segment of an RMPP request and answers
// the last with a GetResp carrying the first bytes of what it received.
func rawReceiver(t *testing.T, tr *madtest.Transport, dropEvery int) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		var data []byte
		expected := uint32(1)
		n := 0
		for {
			p, err := tr.Recv(ctx)
			if err != nil {
				return
			}
			if p.MAD[25] != mad.RMPPTypeData {
				continue
			}
			n++
			if dropEvery > 0 && n%dropEvery == 0 {
				continue // lost on the way in
			}
			seg := binary.BigEndian.Uint32(p.MAD[28:])
			if seg == expected {
				data = append(data, p.MAD[56:]...)
				expected++
			}
			ack := make([]byte, mad.Size)
			copy(ack, p.MAD[:24])
			ack[3] ^= 0x80
			ack[24], ack[25], ack[26] = 1, mad.RMPPTypeAck, mad.RMPPFlagActive
			binary.BigEndian.PutUint32(ack[28:], expected-1)
			binary.BigEndian.PutUint32(ack[32:], expected+7)
			_ = tr.Send(ctx, &mad.Packet{Addr: p.Addr, MAD: ack})
			if p.MAD[26]&mad.RMPPFlagLast != 0 && seg == expected-1 {
				rep := make([]byte, mad.Size)
				copy(rep, p.MAD[:56])
				rep[3] = byte(iba.MethodGetResp)
				rep[24], rep[26] = 0, 0
				copy(rep[56:], data)
				_ = tr.Send(ctx, &mad.Packet{Addr: p.Addr, MAD: rep})
			}
		}
	}()
}

func TestRMPPSendSegmentsARequest(t *testing.T) {
	ta, tb := madtest.Pipe(
		[]madtest.Option{madtest.WithPort(mad.LocalPort{LID: 1})},
		[]madtest.Option{madtest.WithPort(mad.LocalPort{LID: 2})})
	c := newClient(t, ta, mad.WithTimeout(20*time.Millisecond), mad.WithRetries(5))
	rawReceiver(t, tb, 7)
	data := make([]byte, 2000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	rep, err := c.Do(testCtx(t), mad.Request{Target: lid(2), Class: iba.ClassSubnAdm, Method: iba.MethodSet, AttrID: 0x31, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rep.Data(), data[:200]) {
		t.Errorf("the receiver got other data")
	}
}

func TestServeErrorReplies(t *testing.T) {
	cli, srv, _, _ := pipeClients(t, nil, nil)
	serveTable(t, srv, nodeRecords(3))
	ctx := testCtx(t)
	_, err := cli.Do(ctx, mad.Request{Target: lid(2), Class: iba.ClassSubnAdm, Version: 1, Method: iba.MethodGet, AttrID: 0x11})
	if !errors.Is(err, mad.ErrBadVersion) {
		t.Errorf("bad version: %v", err)
	}
	_, err = cli.Do(ctx, mad.Request{Target: lid(2), Class: iba.ClassSubnAdm, Method: iba.MethodDelete, AttrID: 0x11, Unchecked: true})
	if !errors.Is(err, mad.ErrMethodUnsupported) {
		t.Errorf("unsupported method: %v", err)
	}
	_, err = cli.Do(ctx, mad.Request{Target: lid(2), Class: iba.ClassSubnAdm, Method: iba.MethodGet, AttrID: 0x12})
	if !errors.Is(err, mad.ErrMethodAttrUnsupported) {
		t.Errorf("unsupported attribute: %v", err)
	}
}
