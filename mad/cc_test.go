package mad_test

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/mad/madtest"
)

// Congestion control MADs carry the CC_Key at byte 24 (IBA A10.4.1), and
// CongestionLog is decoded from the log area at byte 32, not the data area.
func TestCongestionKeyAndLogOffset(t *testing.T) {
	var gotKey uint64
	tr := madtest.New(func(req *mad.Packet) []*mad.Packet {
		gotKey = binary.BigEndian.Uint64(req.MAD[24:])
		rep := madtest.Reply(req, 0, nil)
		rep.MAD[32] = 1    // LogType: switch
		rep.MAD[33] = 0x5a // CongestionFlags
		return []*mad.Packet{rep}
	})
	c := mad.NewClient(tr)
	defer c.Close()
	rt := mad.Route{Addr: mad.Addr{LID: 3, QPN: 1, QKey: mad.QP1QKey}, CCKey: 0x1122334455667788}
	var log iba.CongestionLog
	if err := c.CongestionGet(context.Background(), rt, &log, 0); err != nil {
		t.Fatal(err)
	}
	if gotKey != rt.CCKey {
		t.Errorf("CC_Key sent %#x, want %#x", gotKey, rt.CCKey)
	}
	if log.LogType != 1 || log.CongestionFlags != 0x5a {
		t.Errorf("CongestionLog decoded from the wrong offset: %+v", log)
	}
}
