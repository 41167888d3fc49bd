// Package iba declares the InfiniBand Architecture management structures:
// MAD headers and formats of every management class, their attributes, SA
// records and the constants that go with them (IBA volume 1, chapters 12 to
// 16).
//
// Each structure is declared once, as a Go struct whose iba tags give each
// component's bit offset and width as the specification lists them. The
// generator in internal/cmd/ibagen derives from these declarations the
// zero-allocation MarshalTo/Unmarshal methods, a field table (names, offsets,
// widths, display hints, SA component mask bits) used by the printers and by
// field access by dotted name, and the class and attribute registries. The
// generated code is in the zz_generated_*.go files.
//
// The offsets were checked against the specification tables and against the
// BSD-licensed structure descriptions of python-rdma (Obsidian Research).
//
// Example_decodeMAD decodes a raw MAD through the registries.
package iba
