package subnet_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/subnet"
)

// Discover a subnet by directed-route SMPs and write its topology as
// infiniband-diags' ibnetdiscover prints it (here its first switch).
func ExampleDiscover() {
	ctx := context.Background()
	f, err := fabric.Open(ctx, "sim:fattree:k=4,n=2")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()

	s, rep, err := subnet.Discover(ctx, f.MAD, subnet.DiscoverOptions{LocalLID: f.Local.LID})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d switches, %d CAs, %d unreachable\n", len(s.NodesOfType(iba.NodeTypeSwitch)), len(s.NodesOfType(iba.NodeTypeCA)), len(rep.Unreachable()))
	var b bytes.Buffer
	if err := s.WriteTopology(&b, subnet.TopologyOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	// The first switch's block: from its "Switch" line to the blank line.
	sc := bufio.NewScanner(&b)
	in := false
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "Switch") {
			in = true
		}
		if in && l == "" {
			break
		}
		if in {
			fmt.Println(l)
		}
	}
	// Output:
	// 8 switches, 16 CAs, 0 unreachable
	// Switch	8 "S-0008f10500000003"		# "ft-l0-3" base port 0 lid 8 lmc 0
	// [1]	"H-0002c90300000018"[1](2c90300000019) 		# "hca13 HCA-1" lid 21 4xSDR
	// [2]	"H-0002c9030000001a"[1](2c9030000001b) 		# "hca14 HCA-1" lid 22 4xSDR
	// [3]	"H-0002c9030000001c"[1](2c9030000001d) 		# "hca15 HCA-1" lid 23 4xSDR
	// [4]	"H-0002c9030000001e"[1](2c9030000001f) 		# "hca16 HCA-1" lid 24 4xSDR
	// [5]	"S-0008f10500000004"[4]		# "ft-l1-0" lid 2 4xSDR
	// [6]	"S-0008f10500000005"[4]		# "ft-l1-1" lid 3 4xSDR
	// [7]	"S-0008f10500000006"[4]		# "ft-l1-2" lid 4 4xSDR
	// [8]	"S-0008f10500000007"[4]		# "ft-l1-3" lid 5 4xSDR
}
