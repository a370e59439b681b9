package config

import "gopkg.in/yaml.v3"

// Where locates the key at path (e.g. "checks[1]" or "policies[0].cap") as
// FILE:LINE, or as the --set override that set it, for errors found after
// decoding.
func (d *Document) Where(path string) string { return d.whereKey(path) }

// sets reports whether the document (with its overrides) holds the key at
// path itself, not only an enclosing key.
func (d *Document) sets(path string) bool {
	steps, err := parsePath(path)
	if err != nil {
		return false
	}
	cur := d.root
	for _, st := range steps {
		cur = deref(cur)
		if st.isIndex {
			if cur.Kind != yaml.SequenceNode || st.index >= len(cur.Content) {
				return false
			}
			cur = cur.Content[st.index]
			continue
		}
		k, v := lookup(cur, st.key)
		if k == nil {
			return false
		}
		cur = v
	}
	return !isNull(cur)
}

// HasKey reports whether the document's top-level mapping has key, which
// tells a sweep file (axes:) from a scenario.
func (d *Document) HasKey(key string) bool {
	k, _ := lookup(d.root, key)
	return k != nil
}
