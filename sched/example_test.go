package sched_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/sched"
)

// python-rdma's parallel directed-route discovery written with the
// scheduler: each job reads a node's NodeInfo over a directed route and,
// for a switch, submits the next hop out of every port; many run at once,
// at most 4 per node. (Package subnet's Discover is the complete version:
// PortInfo, links, LIDs, partial results.)
func ExampleScheduler() {
	ctx := context.Background()
	// A port with no cable drops the SMP: do not wait long for it.
	f, err := fabric.Open(ctx, "sim:fattree:k=4,n=2", fabric.WithTimeout(50*time.Millisecond), fabric.WithRetries(0))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()

	s := sched.New(ctx, sched.Options{MaxInFlight: 16, PerTarget: 4})
	var mu sync.Mutex
	seen := map[iba.GUID]iba.NodeType{}
	var visit func(path []byte)
	visit = func(path []byte) {
		s.Submit(fmt.Sprint(path[:len(path)-1]), "NodeInfo", func(ctx context.Context) error {
			var ni iba.NodeInfo
			if err := f.MAD.SubnGet(ctx, ibpath.NewDR(path...).Route(), &ni, 0); err != nil {
				return nil // no node there: a port with no cable
			}
			mu.Lock()
			_, old := seen[ni.NodeGUID]
			seen[ni.NodeGUID] = ni.NodeType
			mu.Unlock()
			if old {
				return nil
			}
			if ni.NodeType != iba.NodeTypeSwitch {
				if len(path) == 1 { // the local CA: out of its own port
					visit([]byte{0, ni.LocalPortNum})
				}
				return nil
			}
			for port := 1; port <= int(ni.NumPorts); port++ {
				if len(path) > 1 && port == int(ni.LocalPortNum) {
					continue // the way back
				}
				visit(append(append([]byte(nil), path...), byte(port)))
			}
			return nil
		})
	}
	visit([]byte{0})
	if _, err := s.Wait(); err != nil {
		fmt.Println(err)
		return
	}
	count := map[string]int{}
	for _, t := range seen {
		count[t.String()]++
	}
	var kinds []string
	for k := range count {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Println(k, count[k])
	}
	// Output:
	// Channel Adapter 16
	// Switch 8
}
