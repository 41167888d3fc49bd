package nldevtest

import (
	"context"
	"testing"

	"github.com/mdlayher/netlink"

	"github.com/rdmakit/rdmakit/nldev"
)

func TestMarshalReplayCollect(t *testing.T) {
	dev, err := (&nldev.Device{Index: 3, Name: "rxe0"}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	req := netlink.Message{Header: netlink.Header{Type: netlink.HeaderType(nldev.CmdGet.MessageType()), Flags: netlink.Request | netlink.Dump}}
	ex := []Exchange{{Request: req, Replies: []netlink.Message{
		{Header: netlink.Header{Type: req.Header.Type, Flags: netlink.Multi, Sequence: 77}, Data: dev},
		{Header: netlink.Header{Type: netlink.Done, Flags: netlink.Multi, Sequence: 77}, Data: make([]byte, 4)},
	}}}
	b, err := Marshal("a test\nof two lines", ex)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Unmarshal(b)
	if err != nil || len(back) != 1 || len(back[0].Replies) != 2 {
		t.Fatalf("unmarshal: %v %+v", err, back)
	}
	devs, err := Replay(t, back).Dev.List(context.Background())
	if err != nil || len(devs) != 1 || devs[0].Name != "rxe0" || devs[0].Index != 3 {
		t.Fatalf("replayed: %v %+v", err, devs)
	}
	files, err := Collect([]string{"    guest: " + consolePrefix + "testdata/x.nl " + "aGVsbG8=", "noise"})
	if err != nil || string(files["testdata/x.nl"]) != "hello" {
		t.Fatalf("collect: %v %q", err, files)
	}
	for _, bad := range []string{consolePrefix + "../x aGVsbG8=", consolePrefix + "x !!!"} {
		if _, err := Collect([]string{bad}); err == nil {
			t.Errorf("Collect accepted %q", bad)
		}
	}
	for _, bad := range []string{"request zz", "reply 00", "bogus 1000000001140103dcba921e01000000"} {
		if _, err := Unmarshal([]byte(bad)); err == nil {
			t.Errorf("Unmarshal accepted %q", bad)
		}
	}
}
