// Package sa queries the subnet administrator (IBA 15): Get and GetTable of
// any SA record with the component mask computed from the fields that are
// set, the SM_Key, and RMPP through package mad's client. It sits above mad
// in docs/design.md's layers, beside subnet and perf.
//
// SMP is python-rdma's SATransactor: it answers SubnGet of the SMP
// attributes the SA keeps records of (NodeInfo, PortInfo, SwitchInfo, ...)
// from those records, so a command written once against mad.SubnGetter runs
// in --sa mode unchanged.
//
// ExampleGetTable reads records with a component mask; ExampleNewSMP
// answers SubnGet from the SA.
package sa
