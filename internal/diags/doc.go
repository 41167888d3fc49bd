// Package diags implements ibtool's commands: the infiniband-diags set and
// python-rdma's additions, one file per command. Each command computes a
// typed result and hands it to a renderer that prints either the text that
// infiniband-diags prints or, with --json, a versioned JSON document. This
// is the only layer besides cmd/ that writes to stdout and stderr.
package diags
