package diags

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibaprint"
)

// marshal encodes an attribute for the printers, which read the wire form.
func marshal(a iba.Attribute) ([]byte, error) {
	b := make([]byte, a.Desc().Size)
	if err := a.MarshalTo(b); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", a.Desc().Name, err)
	}
	return b, nil
}

// jsonOf is an attribute in the wire form as the JSON documents show it,
// by IBA field names.
func jsonOf(d *iba.Struct, b []byte) json.RawMessage {
	var j bytes.Buffer
	if err := ibaprint.JSON(&j, d, b); err != nil {
		// Records come from the SA's reply, sized by the structure: a
		// failure here is a bug, shown rather than hidden.
		m, _ := json.Marshal(map[string]string{"error": err.Error()})
		return m
	}
	return bytes.TrimSpace(j.Bytes())
}

// cString is the text of a NUL-terminated string field.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
