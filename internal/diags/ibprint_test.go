package diags

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
)

// TestIBPrint shows stanzas and lists of each node type on the simulator,
// and the errors for a GUID that is not there or of another type.
func TestIBPrint(t *testing.T) {
	f := checkFabric(t, true)
	mk := func(name string, typ iba.NodeType) func(*Env, func() (*session, error)) *cobra.Command {
		return func(e *Env, open func() (*session, error)) *cobra.Command {
			return newIBPrintWith(e, name, "node", typ, open)
		}
	}
	for _, tc := range []struct {
		name string
		cmd  string
		typ  iba.NodeType
		args []string
		code int
	}{
		{"ca", "ibprintca", iba.NodeTypeCA, []string{"0x200"}, 0},
		{"ca-colon", "ibprintca", iba.NodeTypeCA, []string{"0:0:0:100"}, 0},
		{"switch", "ibprintswitch", iba.NodeTypeSwitch, []string{"0x10"}, 0},
		{"switch-json", "ibprintswitch", iba.NodeTypeSwitch, []string{"--json", "0x20"}, 0},
		{"list-switches", "ibprintswitch", iba.NodeTypeSwitch, []string{"-l"}, 0},
		{"list-cas-json", "ibprintca", iba.NodeTypeCA, []string{"--json", "-l"}, 0},
		{"wrong-type", "ibprintrt", iba.NodeTypeRouter, []string{"0x10"}, 1},
		{"missing", "ibprintca", iba.NodeTypeCA, []string{"0x999"}, 1},
		{"usage", "ibprintca", iba.NodeTypeCA, []string{}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runOnFabric(t, f, mk(tc.cmd, tc.typ), tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			golden(t, tc.name, out+errOut)
		})
	}
}
