package ibsim

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// Defaults of ibsim's include/ibsim.h.
const (
	DefaultSockName = "sim"  // SIM_BASENAME
	DefaultPort     = "7070" // IBSIM_DEFAULT_SERVER_PORT
	// MaxClients is IBSIM_MAX_CLIENTS, the number of client slots.
	MaxClients = 10
)

// Config says which simulator to reach and where to attach. The zero
// value reaches the default simulator ("sim") and attaches to its default
// port, the first port of the first node in its topology file.
type Config struct {
	// SockName is the base of the simulator's abstract unix socket names
	// (IBSIM_SOCKNAME); DefaultSockName when empty.
	SockName string
	// Server, when set, selects inet mode (IBSIM_SERVER_NAME): the
	// simulator runs as `ibsim -r` on that host, reached over UDP.
	Server string
	// Port is the simulator's UDP control port in inet mode
	// (IBSIM_SERVER_PORT); DefaultPort when empty.
	Port string
	// Node names the node to attach to (SIM_HOST), by its id in the
	// topology file or its NodeDescription. The client sits on port 0 of a
	// switch and on port 1 of a CA; ibsim cannot attach to another port.
	Node string
	// ISSM attaches as the node's SM client (SIM_SET_ISSM): the simulator
	// then delivers unsolicited requests for that port to this client (SA
	// queries, traps, any GMP server's requests) and sets PortInfo's IsSM
	// capability bit. One SM client per node.
	ISSM bool
}

// ConfigFromEnv reads the variables that libumad2sim reads: IBSIM_SOCKNAME,
// IBSIM_SERVER_NAME, IBSIM_SERVER_PORT, SIM_HOST and SIM_SET_ISSM (any
// non-empty value).
func ConfigFromEnv() Config {
	return Config{
		SockName: os.Getenv("IBSIM_SOCKNAME"),
		Server:   os.Getenv("IBSIM_SERVER_NAME"),
		Port:     os.Getenv("IBSIM_SERVER_PORT"),
		Node:     os.Getenv("SIM_HOST"),
		ISSM:     os.Getenv("SIM_SET_ISSM") != "",
	}
}

// inet reports whether the configuration selects inet mode.
func (c Config) inet() bool { return c.Server != "" }

func (c Config) sockName() string {
	if c.SockName == "" {
		return DefaultSockName
	}
	return c.SockName
}

// port returns the control port; ibsim puts client slot i's data socket on
// port+1+i.
func (c Config) port() (int, error) {
	p := c.Port
	if p == "" {
		p = DefaultPort
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535-MaxClients {
		return 0, fmt.Errorf("ibsim port %q: want a number from 1 to %d", c.Port, 65535-MaxClients)
	}
	return n, nil
}

// String names the simulator for messages: "ibsim sim", "ibsim host:7070".
func (c Config) String() string {
	if c.inet() {
		p := c.Port
		if p == "" {
			p = DefaultPort
		}
		return "ibsim " + net.JoinHostPort(c.Server, p)
	}
	return "ibsim " + c.sockName()
}

func (c Config) validate() error {
	if len(c.Node) > maxNodeID || strings.IndexByte(c.Node, 0) >= 0 {
		return fmt.Errorf("%v: node name %q: at most %d bytes, no NUL", c, c.Node, maxNodeID)
	}
	if !c.inet() {
		// The socket names are "<base>:ctl<id>" within sun_path's 108 bytes.
		if len(c.sockName()) > 80 || strings.IndexByte(c.sockName(), 0) >= 0 {
			return fmt.Errorf("%v: socket name %q: at most 80 bytes, no NUL", c, c.sockName())
		}
		return nil
	}
	_, err := c.port()
	return err
}
