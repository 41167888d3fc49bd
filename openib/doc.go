// Package openib speaks the OpenFabrics (OpenIB) vendor MAD classes that
// infiniband-diags' ibping and ibsysstat use: the ping class (0x32) and the
// sysstat class (0x33). Both sit in the vendor-specific range with OUI
// (classes 0x30 to 0x4F, IBA 13.4.4, MAD format IBA 16.5.1), qualified by
// the OpenIB OUI 0x001405 (iba.OUIOpenIB); a port answers them only when a
// program serves them there, which is what ibping -S and ibsysstat -S do.
//
// The package has both sides: Ping and SysStat ask a port, ServePing and
// ServeSysStat answer on the local port until their context ends. Serve is
// the server side of any vendor class with an OUI. HostName, LocalCPUs and
// ParseCPUInfo give what the infiniband-diags servers answer with.
//
// It sits on package mad (a *mad.Client on the local end port); package
// fabric opens one, with fabric.WithServe for a server. See ExamplePing.
package openib
