package diags

import (
	"fmt"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/perf"
)

// ibdatacounts and ibdatacounters: python-rdma's data counter display, one
// port or every port of the fabric, on the ibcheck engine (ibcheck.go).
// PortXmitData and PortRcvData count 4-octet words (IBA 16.1.3.5); the
// values are printed as the PMA reports them, as perfquery prints them.

func init() {
	registerCheck(checkSpec{name: "ibdatacounts", short: "show a port's data counters", usage: "TARGET [PORT]", single: true, checks: []check{checkShowData}})
	registerCheck(checkSpec{name: "ibdatacounters", short: "show the data counters of every port", checks: []check{checkShowData}})
}

var checkShowData = check{kindPerf, (*checkCtx).showCounts}

// showCounts is do_show_counts: the four data counters, named as perfquery
// names them. PortXmitData and PortRcvData are in 4-octet words.
func (c *checkCtx) showCounts() error {
	b, err := c.getPerf()
	if err != nil {
		return err
	}
	c.recordCounters(b)
	var pc iba.PortCounters
	if err := pc.Unmarshal(b); err != nil {
		return err
	}
	if c.portIdx == perf.AllPorts {
		c.run.pre = append(c.run.pre, fmt.Sprintf("# Port counters: Lid %d all ports", c.epLID))
	} else {
		c.run.pre = append(c.run.pre, fmt.Sprintf("# Port counters: Lid %d port %d", c.epLID, c.portIdx))
	}
	for _, x := range []struct {
		n string
		v uint32
	}{{"XmtData", pc.PortXmitData}, {"RcvData", pc.PortRcvData}, {"XmtPkts", pc.PortXmitPkts}, {"RcvPkts", pc.PortRcvPkts}} {
		c.run.pre = append(c.run.pre, fmt.Sprintf("%s:%s%d", x.n, strings.Repeat(".", 33-len(x.n)), x.v))
	}
	return nil
}
