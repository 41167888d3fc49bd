package diags

import "github.com/rdmakit/rdmakit/iba"

// marshal encodes an attribute for the printers, which read the wire form.
func marshal(a iba.Attribute) ([]byte, error) {
	b := make([]byte, a.Desc().Size)
	return b, a.MarshalTo(b)
}
