// Command vmhello is an extra binary for the vmtest floor's own test: the
// guest runs it from $PATH to show that Options.ExtraBinaries arrive.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Printf("vmhello %s\n", os.Getenv("VMTEST_PROBE"))
}
