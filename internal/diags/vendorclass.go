package diags

import (
	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/iba"
)

// The command-line side of the OpenIB vendor classes (package openib) that
// ibping and ibsysstat share: the -o flag and the session a server needs.

// ouiArg is -o as strtoul reads it; the default is OpenIB's.
func ouiArg(s string) uint32 {
	if s == "" {
		return iba.OUIOpenIB
	}
	return uint32(cStrtoul(s)) & 0xffffff
}

// openVendor opens a session for the OpenIB vendor classes. A server
// (ibping -S, ibsysstat -S) on ibsim attaches as its node's SM client
// (SIM_SET_ISSM), the only client ibsim hands unsolicited requests to
// (find_client).
func (e *Env) openVendor(server bool) (*session, error) {
	var extra []fabric.Option
	if server {
		extra = append(extra, fabric.WithServe())
	}
	t, err := e.openTransport(extra...)
	if err != nil {
		return nil, err
	}
	return e.newSession(t)
}
