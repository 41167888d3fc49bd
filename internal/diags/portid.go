package diags

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
)

// Destinations as infiniband-diags reads and names them: libibmad's
// resolve_portid_str and portid2str over ib_portid_t.

// portidString names a target as libibmad's portid2str: "Lid 4", "DR path
// slid 65535; dlid 65535; 0,1", or both for a combined route.
func portidString(p ibpath.Path) string {
	switch v := p.(type) {
	case *ibpath.DRPath:
		hops := make([]string, len(v.DrPath))
		for i, h := range v.DrPath {
			hops[i] = strconv.Itoa(int(h))
		}
		dr := fmt.Sprintf("DR path slid %d; dlid %d; %s", v.DrSLID, v.DrDLID, strings.Join(hops, ","))
		if v.DrSLID != mad.LIDPermissive && v.DLID != 0 && v.DLID != mad.LIDPermissive {
			return fmt.Sprintf("Lid %d %s", v.DLID, dr)
		}
		return dr
	case *ibpath.IBPath:
		return fmt.Sprintf("Lid %d", v.DLID)
	}
	return p.String()
}

// drList is a DR path as infiniband-diags takes it: port numbers and
// commas.
var drList = regexp.MustCompile(`^[0-9]+(,[0-9]+)*,?$`)

// parseDRList reads a DR path as libibmad's str2drpath does: port numbers
// and commas, each number cut to a byte; ok is false for anything else,
// which the caller then reads as a path of another kind. A route too long
// for an SMP fails when the SMP is built, as the op's failure.
func parseDRList(arg string) (hops []byte, ok bool) {
	if !drList.MatchString(arg) {
		return nil, false
	}
	for _, h := range strings.Split(strings.TrimSuffix(arg, ","), ",") {
		n, _ := strconv.ParseUint(h, 10, 64) // atoi, cast to uint8
		hops = append(hops, byte(n))
	}
	return hops, true
}

// resolveSMPDest reads a destination for SMPs as the C diags'
// resolve_portid_str does under the addressing flags; a failure is their
// "can't resolve destination port".
func resolveSMPDest(s *session, arg string, a *addrFlags) (ibpath.Path, error) {
	if _, err := a.mode(); err != nil {
		return nil, err
	}
	if a.direct {
		if hops, ok := parseDRList(arg); ok {
			return ibpath.NewDR(hops...), nil
		}
	}
	p, err := s.smpTarget(arg, a)
	if err != nil {
		return nil, iberror(unwrapUsage(err), "can't resolve destination port %s", arg)
	}
	return p, nil
}

// resolveGMPDest reads a destination for GMPs (session.gmpTarget) as the C
// diags' resolve_portid_str does; a failure is their "can't resolve
// destination port".
func resolveGMPDest(s *session, arg string, a *addrFlags) (mad.Target, error) {
	t, err := s.gmpTarget(arg, a)
	if err != nil {
		return nil, iberror(unwrapUsage(err), "can't resolve destination port %s", arg)
	}
	return t, nil
}
