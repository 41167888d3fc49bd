package diags

import (
	"github.com/rdmakit/rdmakit/namemap"
	"github.com/rdmakit/rdmakit/subnet"
)

// loadNames reads --node-name-map (namemap.Load: the default map when it
// exists and none is named). Where the C tools warn about a map they cannot
// read and go on without names, this is an error: a name that silently
// falls back to a description misleads whoever reads the output.
func loadNames(path string) (*namemap.Map, error) {
	return namemap.Load(path)
}

// nodeName is remap_node_name for a node of the database.
func nodeName(m *namemap.Map, n *subnet.Node) string { return m.Name(n.GUID, n.Description()) }
