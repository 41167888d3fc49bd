// Package floor decides what a test does when a test floor's peer (ibsim,
// OpenSM, the C diags, the kernel VM) is missing: locally it skips with a
// message naming the set-up command; in CI, where scripts/test-all.sh has
// installed every peer, a missing peer fails the test so that nothing is
// skipped silently. scripts/test-all.sh asks the same of every run.
package floor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// SetupHint names the command that installs every floor's peers.
const SetupHint = "run scripts/test-all.sh (or scripts/setup-floors.sh) to install it"

// RequireEnv names the variable scripts/test-all.sh sets: it has installed
// every peer, so a missing one is a failure there as in CI.
const RequireEnv = "RDMAKIT_REQUIRE_PEERS"

// InCI reports whether every peer must be present: under CI (CI=true) or
// under scripts/test-all.sh (RDMAKIT_REQUIRE_PEERS=1).
func InCI() bool { return os.Getenv("CI") == "true" || os.Getenv(RequireEnv) == "1" }

// Need skips (locally) or fails (in CI) the test when ok is false.
func Need(t testing.TB, ok bool, what string) {
	t.Helper()
	if ok {
		return
	}
	if InCI() {
		t.Fatalf("test floor peer missing in CI: %s; %s", what, SetupHint)
	}
	t.Skipf("test floor peer missing: %s; %s", what, SetupHint)
}

// ModuleRoot finds the directory holding go.mod, starting from the working
// directory, which `go test` sets to the package's directory: where the
// floors' scripts keep their cache (.cache/).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the module root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("finding the module root: no go.mod above the working directory")
		}
		dir = parent
	}
}
