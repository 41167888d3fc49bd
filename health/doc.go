// Package health is rdmakit's fabric health check: the checks of
// ibutils' ibdiagnet and ibdiagpath (and the checks ibdiagnet 2 added
// that a standard fabric can show), each a named Check with a severity
// and a doc that cites the IBA section or the ibdiagnet behaviour it
// follows, returning typed Findings.
//
// Run collects what the checks it runs need — the discovery (package
// subnet), two samples of every port's counters an interval apart
// (package perf), SMInfo of every SM, P_Key tables, every switch's
// forwarding tables, SL-to-VL tables, multicast groups from the SA,
// repeated SMPs along every link — and runs the checks over it. Collect
// and (*Check).Run split the two, so a program can collect once and run
// any check, or run a check over data it collected itself (a Subnet loaded
// from a cache, say).
//
// The analyses of routing (every switch forwards every LID, every path
// ends at its destination without a loop, the hop-count histogram) and of
// credit loops (cycles in the channel dependency graph of the routes over
// SLs and VLs) work from the tables alone and are exported as Routing and
// CreditLoops.
//
// Path checks one route (ibdiagpath): every hop's ports, widths, speeds
// and counters.
//
// The report files of ibdiagnet — .lst, .fdbs, .mcfdbs, .sm, .pm, .pkey
// and the .db_csv sections — are written by the Write functions of
// files.go in ibdiagnet's formats; docs/ibdiagnet.md names every check,
// its severity, each file and where its format comes from.
//
// In docs/design.md's layers health sits above perf, subnet and sa, below
// the programs (ibtool ibdiagnet and ibdiagpath). See ExampleRun.
package health
