package ibaprint

import (
	"fmt"
	"io"
)

// The smpquery renderers of the attributes smpquery reaches with its
// portinfoextended and mlnxextportinfo ops (libibmad mad_dump_portinfo_ext
// and mad_dump_mlnx_ext_port_info, rdma-core 44).

// fixedHex16 reads the 16 bits at byte offset at, whatever component the
// row names: libibmad declares the HDR and NDR FEC fields of
// PortInfoExtended at bit offsets without its BITSOFFS conversion, so within
// each 32-bit word it reads the other half, and the last one reads a
// reserved word. smpquery prints those bytes under those labels; so do we.
func fixedHex16(at int) Formatter {
	return func(b []byte, _, _ int) string {
		if at+2 > len(b) {
			return "0x0000"
		}
		return fmt.Sprintf("0x%04x", uint16(b[at])<<8|uint16(b[at+1]))
	}
}

// smpPortInfoExt is mad_dump_portinfo_ext: IB_PORT_EXT_FIRST_F to
// IB_PORT_EXT_LAST_F, then the HDR and NDR pairs as libibmad reads them
// (bytes 12-13, 18-19, 16-17 and 22-23; see fixedHex16).
var smpPortInfoExt = libibmad("PortInfoExtended",
	Row{"CapMask", "capabilityMask", diagHex, 0},
	Row{"FECModeActive", "FECModeActive", diagUint, 0},
	Row{"FDRFECModeSupported", "FDRFECModeSupported", diagHex, 0},
	Row{"FDRFECModeEnabled", "FDRFECModeEnabled", diagHex, 0},
	Row{"EDRFECModeSupported", "EDRFECModeSupported", diagHex, 0},
	Row{"EDRFECModeEnabled", "EDRFECModeEnabled", diagHex, 0},
	Row{"HDRFECModeSupported", "EDRFECModeEnabled", fixedHex16(12), 0},
	Row{"HDRFECModeEnabled", "NDRFECModeSupported", fixedHex16(18), 0},
	Row{"NDRFECModeSupported", "HDRFECModeEnabled", fixedHex16(16), 0},
	Row{"NDRFECModeEnabled", "NDRFECModeEnabled", fixedHex16(22), 0},
)

// SMPPortInfoExtended prints PortInfoExtended (IBA 14.2.5.21) as `smpquery
// portinfoextended` does below its "# Port info Extended: ..." line.
func SMPPortInfoExtended(w io.Writer, b []byte) error { return smpPortInfoExt.Render(w, b) }

var smpMlnxExtPortInfo = libibmad("MlnxExtPortInfo",
	Row{"StateChangeEnable", "stateChangeEnable", diagHex, 0},
	Row{"LinkSpeedSupported", "linkSpeedSupported", diagHex, 0},
	Row{"LinkSpeedEnabled", "linkSpeedEnabled", diagHex, 0},
	Row{"LinkSpeedActive", "linkSpeedActive", diagHex, 0},
)

// SMPMlnxExtPortInfo prints Mellanox's MlnxExtPortInfo (vendor attribute
// 0xFF90) as `smpquery mlnxextportinfo` does below its "# MLNX ext Port
// info: ..." line.
func SMPMlnxExtPortInfo(w io.Writer, b []byte) error { return smpMlnxExtPortInfo.Render(w, b) }
