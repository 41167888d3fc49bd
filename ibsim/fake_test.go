package ibsim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"
)

// TestCancelledConnectReleasesSlot cuts Dial short while a fake simulator
// holds back its CONNECT reply: the slot it assigned must be disconnected.
func TestCancelledConnectReleasesSlot(t *testing.T) {
	base := fmt.Sprintf("fake%d", time.Now().UnixNano())
	srv, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: "@" + base + ":ctl\x00", Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	disconnected := make(chan uint32, 1)
	go func() {
		buf := make([]byte, 256)
		for {
			_ = srv.SetReadDeadline(time.Now().Add(5 * time.Second))
			n, from, err := srv.ReadFromUnix(buf)
			if err != nil {
				return
			}
			m, err := unmarshalCtl(buf[:n])
			if err != nil {
				continue
			}
			switch m.typ {
			case ctlConnect:
				cancel()
				time.Sleep(20 * time.Millisecond)
				info := getClientInfo(&m.data)
				info.id = 4
				info.put(&m.data)
			case ctlDisconnect:
				disconnected <- m.clientID
			}
			// Go drops the trailing NUL of the sender's abstract name; ibsim
			// replies to the raw address, with it.
			_, _ = srv.WriteToUnix(m.marshal(), &net.UnixAddr{Name: from.Name + "\x00", Net: "unixgram"})
		}
	}()
	_, err = Dial(ctx, Config{SockName: base})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Dial: %v, want context.Canceled", err)
	}
	select {
	case slot := <-disconnected:
		if slot != 4 {
			t.Errorf("disconnected slot %d, want 4", slot)
		}
	case <-time.After(3 * time.Second):
		t.Error("the slot assigned during a cancelled Dial was not disconnected")
	}
}
