//go:build rdmakit_noverbs

package verbs

// load fails: the build tag rdmakit_noverbs leaves run-time loading out,
// for a program that must be linked statically (dlopen needs the C
// library, so a program that can load libibverbs is linked dynamically
// against it).
func load() (*symbols, error) {
	return nil, &LoadError{Library: libName,
		Reason: "this program was built with the tag rdmakit_noverbs, without run-time loading of " + libName + "; build it without the tag"}
}
