package classify

import "testing"

// Each program is registered by exactly one family: a second registration
// would be silently ignored, so the family that meant to teach it would not.
func TestRegistryHasNoDuplicates(t *testing.T) {
	t.Parallel()
	r := knownPrograms()
	if len(r.dups) > 0 {
		t.Errorf("programs registered twice (the first registration wins): %v", r.dups)
	}
	if len(r.byName) < 500 {
		t.Errorf("the registry holds %d programs; the families register more than 500", len(r.byName))
	}
}

// Every family registers programs of its own, and a name is found whichever
// way it was registered: by name, by prefix, or not at all.
func TestRegistryLookup(t *testing.T) {
	t.Parallel()
	for _, register := range families() {
		r := &registry{byName: map[string]handler{}}
		register(r)
		if len(r.byName) == 0 && len(r.prefixes) == 0 {
			t.Errorf("a family registers no program")
		}
	}
	r := knownPrograms()
	for _, name := range []string{"git", "python3.12", "mkfs.ext4", "perl5.36", "sh"} {
		if r.lookup(name) == nil {
			t.Errorf("lookup(%q) = nil, want a handler", name)
		}
	}
	for _, name := range []string{"no-such-program", "gitx", "py"} {
		if r.lookup(name) != nil {
			t.Errorf("lookup(%q) found a handler; it is not a known program", name)
		}
	}
}
