package diags

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
)

// readKeys turns -y/--m_key, --smkey and -Y/--pkey-idx into e.MKey,
// e.SMKey and e.PKeyIdx, asking
// for a key on stdin as the C tools ask on the terminal: -y when its value
// is not a number (libibmad's getpass("M_Key: ")), --smkey when it does
// not start with a hex digit (saquery's getpass("SM_Key: ")).
func (e *Env) readKeys(cmd *cobra.Command) error {
	if cmd.Flags().Changed("m_key") {
		k, err := strconv.ParseUint(e.mkeyArg, 0, 64)
		if err != nil {
			s, perr := e.prompt("M_Key: ")
			if perr != nil {
				return perr
			}
			if k, err = strconv.ParseUint(strings.TrimSpace(s), 0, 64); err != nil {
				return iberror(nil, "Bad M_Key")
			}
		}
		e.MKey = k
	}
	if cmd.Flags().Changed("pkey-idx") {
		i, ok := cStrtolExact(e.pkeyIdxArg)
		if !ok || i < 0 || i > math.MaxUint16 {
			return iberror(nil, "Invalid P_Key index \"%s\".  Requires an integer in the range [0, %d].", e.pkeyIdxArg, math.MaxUint16)
		}
		e.PKeyIdx = uint16(i)
	}
	if cmd.Flags().Changed("smkey") {
		s, err := e.promptIfNotHex(e.smkeyArg, "SM_Key: ")
		if err != nil {
			return err
		}
		e.SMKey = cStrtoul(s)
	}
	return nil
}

// promptIfNotHex is saquery's getpass: a key option whose value does not
// start with a hex digit asks for the value, here read as a line of stdin.
func (e *Env) promptIfNotHex(s, prompt string) (string, error) {
	if s != "" && strings.ContainsRune("0123456789abcdefABCDEF", rune(s[0])) {
		return s, nil
	}
	return e.prompt(prompt)
}

// maxPromptLine bounds the line a prompt reads: a key is 18 characters.
const maxPromptLine = 4096

// prompt asks for a value on stderr and reads one line of stdin, a byte
// at a time so that the next prompt finds the next line, of at most
// maxPromptLine bytes: an endless line is an error, not a buffer that
// grows.
func (e *Env) prompt(prompt string) (string, error) {
	what := strings.TrimSuffix(prompt, ": ")
	fmt.Fprint(e.Stderr, prompt)
	var line []byte
	b := make([]byte, 1)
	for {
		n, err := e.Stdin.Read(b)
		if n == 1 {
			if b[0] == '\n' {
				break
			}
			if len(line) == maxPromptLine {
				return "", fmt.Errorf("cannot get %s: a line longer than %d bytes", what, maxPromptLine)
			}
			line = append(line, b[0])
		}
		if err == io.EOF && len(line) > 0 {
			break
		}
		if err != nil {
			return "", fmt.Errorf("cannot get %s: %w", what, err)
		}
	}
	return strings.TrimRight(string(line), "\r"), nil
}

// mkeyHint explains an SMP that got no reply in the way an M_Key check
// discards one (IBA 14.2.4.1), or "" for other errors.
func mkeyHint(err error) string {
	suspect, set, key := mad.MKeySuspect(err)
	if !suspect {
		return ""
	}
	given := "it carried no M_Key"
	if key != 0 {
		given = fmt.Sprintf("it carried M_Key %#016x, which may be the wrong one", key)
	}
	if set {
		return "the SubnSet got no reply; the likely cause is the port's M_Key protection: an SMA discards a Set whose M_Key does not match (IBA 14.2.4.1), and " +
			given + "; give the key with -y/--m_key or m_key= in ibdiag.conf"
	}
	return "the SubnGet got no reply: the node is unreachable, or its port is M_Key protected at level 2 or 3, which discards Gets whose M_Key does not match (IBA 14.2.4.1), and " +
		given + "; give the key with -y/--m_key or m_key= in ibdiag.conf"
}

// pkeyHint explains a GMP that got no reply when -Y chose a P_Key index
// other than 0: a port whose P_Key table holds no matching P_Key drops the
// packet (IBA 10.9.3), as it does when the index holds no valid P_Key.
// "" for other errors.
func pkeyHint(err error, idx uint16) string {
	if idx == 0 {
		return ""
	}
	req := mad.Unanswered(err)
	if len(req) < 2 {
		return ""
	}
	if c := iba.Class(req[1]); c == iba.ClassSubnMgt || c == iba.ClassSubnMgtDirected {
		return ""
	}
	return fmt.Sprintf("the request went out with the P_Key at index %d of the local port's P_Key table (-Y/--pkey-idx); a port with no matching P_Key in its table drops it without a reply (IBA 10.9.3)", idx)
}
