package config

// Where locates the key at path (e.g. "checks[1]" or "policies[0].cap") as
// FILE:LINE, or as the --set override that set it, for errors found after
// decoding.
func (d *Document) Where(path string) string { return d.whereKey(path) }

// HasKey reports whether the document's top-level mapping has key, which
// tells a sweep file (axes:) from a scenario.
func (d *Document) HasKey(key string) bool {
	k, _ := lookup(d.root, key)
	return k != nil
}
