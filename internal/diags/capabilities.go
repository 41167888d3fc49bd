package diags

import (
	"fmt"
	"io"

	"github.com/rdmakit/rdmakit/iba"
)

// Port capabilities that commands check before they ask for an attribute,
// as infiniband-diags' ibdiag_common.c checks them.

// portInfoExtendedSupported is is_port_info_extended_supported of
// infiniband-diags: PortInfo (of port 0 on a switch) must have
// IsCapabilityMask2Supported and CapabilityMask2 IsPortInfoExtendedSupported.
// Like the C function it warns on stderr when not; failures to read are its
// IBEXIT errors. get reads an attribute of the target.
func portInfoExtendedSupported(stderr io.Writer, tool string, port int, get func(iba.Attribute, uint32) error) (bool, error) {
	var ni iba.NodeInfo
	if err := get(&ni, 0); err != nil {
		return false, iberror(err, "node info query failed")
	}
	if ni.NodeType == iba.NodeTypeSwitch {
		port = 0
	}
	var pi iba.PortInfo
	if err := get(&pi, uint32(port)); err != nil {
		return false, iberror(err, "port info query failed")
	}
	if pi.CapabilityMask&iba.PortCapIsCapabilityMask2Supported == 0 {
		fmt.Fprintf(stderr, "%s: port info capability mask2 not supported\n", tool)
		return false, nil
	}
	if pi.CapabilityMask2&iba.PortCap2IsPortInfoExtendedSupported == 0 {
		fmt.Fprintf(stderr, "%s: port info capability mask2 = 0x%x doesn't indicate PortInfoExtended support\n", tool, pi.CapabilityMask2)
		return false, nil
	}
	return true, nil
}
