// Package ibaprint prints IBA management structures from their raw bytes,
// driven entirely by the field tables of package iba: the same description
// that gives the codecs gives every printer, so a new attribute prints the
// day it is declared. It sits beside iba at the bottom of docs/design.md's layers;
// internal/diags and the ibtool commands call it to render what they fetched.
// Nothing here talks to a fabric, and nothing prints unless given a writer.
//
// # Packet dump
//
// Dump and DumpMAD write python-rdma's packet dump (its struct_dump), the
// format of `ibtool decode_mad` and of the -dd traces:
//
//	SMPFormat GetResp(0x81) SubnMgt(1.1) NodeInfo(0x11)
//	  0 01010181 baseVersion=1,mgmtClass=1,classVersion=1,method=129
//	  ...
//	   + data NodeInfo
//	 64 01010224 baseVersion=1,classVersion=1,nodeType=2,numPorts=36
//	 68 0002C903 systemImageGUID=0002:c903:0000:1491
//	  ...
//	   - data
//
// The first line names the format, then the method, the class with its
// class version, and the attribute, each followed by its number in
// parentheses (hex for methods and attributes). A structure that is not a MAD
// format is introduced by its name alone. Then one line per 32-bit word: the
// byte offset (%3d), the word in hex, and name=value for every component
// that starts in that word, embedded headers flattened. A nested structure
// is bracketed by "   + name Type" and "   - name" lines; a format's data
// area is decoded the same way as the attribute its class and attribute ID
// name (iba.LookupAttr), and an SA GetTable/GetMulti reply's data area as
// one record after another, AttributeOffset apart, named data[0], data[1],
// and so on. An aligned array prints its elements beside the words they
// start in, "name=[0:v, 1:v" ... "31:v]"; an opaque blob prints
// "name=<N bytes>" and its words, leaving out all-zero words at its end.
//
// Values: integers in decimal; components hinted hex as 0x and the width's
// digits; enumerations as Name(value); GUIDs in python-rdma's spelling,
// 0002:c903:0000:1491; GIDs in IPv6 form; a GID prefix as fe80::/64; text
// quoted. Where python-rdma printed GUID('...') and trailing blanks, this
// prints the bare value and no trailing blank.
//
// An unknown class is dumped as its common MAD header and raw words, an
// unknown attribute as raw words, each with a line saying why. A buffer too
// short for its format, or too long for one that cannot grow, is an
// *iba.DecodeError naming the structure and the offset; nothing panics.
//
// # Dotted
//
// The infiniband-diags renderers (SMPNodeInfo, SMPPortInfo, SMPSwitchInfo,
// SMPNodeDesc, PKeys, GUIDInfo, SL2VL, VLArb; PortCounters,
// PortCountersExtended, PerfQuery; SANodeRecord, SAPathRecord,
// SAPortInfoRecord, SALinkRecord, SASMInfoRecord, SASwitchInfoRecord,
// SAGUIDInfoRecord) print exactly what smpquery, perfquery and saquery of
// rdma-core 56 (Debian trixie) print below their "# ..." header line,
// which names the target and is the caller's. Each is an ordered Table of
// (label, dotted path, formatter) rows over the iba metadata: a path that
// stops resolving is an error and fails the tests, it never drops a line.
// The formatters copy libibmad's mad_dump_* (link widths "4X", speeds
// "2.5 Gbps" and "14.0625 Gbps or 25.78125 Gbps", port states, MTUs, the
// capability mask bit lists) including their quirks: dump_linkspeed adds
// " (IBA extension)" after "undefined (0)", smpquery nodedesc pads the
// description rather than the label, and perfquery's QP1Dropped line shows
// VL15Dropped's bytes because libibmad declares that field at an
// unconverted bit offset. PortInfo ends with the three XDR lines
// (LinkSpeedExtActive2, LinkSpeedExtSupported2, LinkSpeedExtEnabled2) that
// rdma-core 47 added; rdma-core 44 (Debian bookworm) prints the rest the
// same.
//
// # JSON
//
// JSON writes one object per structure with the IBA names of iba.Field.Name
// as keys (camelCase, acronyms kept: "nodeGUID", "LID"), in declaration
// order:
//   - embedded headers (the MAD header in a format) are flattened into the
//     object; nested structures are nested objects;
//   - reserved components are left out;
//   - integers, 64-bit counters included, are JSON numbers, written exactly
//     (a reader that parses numbers as float64 loses precision above 2^53);
//   - enumerations are their numbers (the text is the dotted printers'
//     business, and a number is stable across releases);
//   - GUIDs are strings "0x0002c90300001491"; GIDs, and GID prefixes, are
//     IPv6 strings ("fe80::2:c903:0:1491", "fe80::");
//   - arrays are JSON arrays (of objects for arrays of structures);
//   - text is a string cut at the first NUL; opaque bytes are a hex string;
//   - a format's data area is the object of the attribute its header names,
//     an array of record objects for an SA table reply, or a hex string
//     when the attribute is unknown.
//
// # Value formats
//
// Rates, speeds and widths come from package iba (iba.Rate, iba.Speed,
// iba.LinkWidthLanes), which has every generation from SDR to XDR; GUIDs
// print as 0x-hex in the dotted and JSON forms and in python-rdma's
// 0002:c903:0000:1491 form in the dump.
package ibaprint
