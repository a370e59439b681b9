package sweep

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"stormsim/internal/atomicfile"
)

// Merge joins the output directories of a sharded sweep into out, which
// then holds exactly the files an unsharded run writes: the common
// sweep.json, every point's line in grid order (copied byte for byte),
// sweep.csv and the charts. Shards must come from one sweep and together
// hold every point once; anything else is an *InputError.
func Merge(out string, dirs []string, charts bool) ([]string, error) {
	if len(dirs) == 0 {
		return nil, &InputError{"merge: name at least one shard directory"}
	}
	var manifest []byte
	var m Manifest
	var lines []*Line
	from := map[int]string{}
	for _, dir := range dirs {
		dm, raw, err := readManifest(dir)
		if err != nil {
			return nil, &InputError{fmt.Sprintf("merge: %v", err)}
		}
		if manifest == nil {
			manifest, m = raw, dm
			lines = make([]*Line, m.Points)
		} else if !bytes.Equal(raw, manifest) {
			return nil, &InputError{fmt.Sprintf("merge: %s is from another sweep than %s (%s, %s)", dir, dirs[0], short(dm.Sweep), short(m.Sweep))}
		}
		path := filepath.Join(dir, PointsFile)
		ls, _, err := readLines(path)
		if err != nil {
			return nil, &InputError{fmt.Sprintf("merge: %v", err)}
		}
		for k := range ls {
			l := &ls[k]
			switch {
			case l.Sweep != m.Sweep:
				return nil, &InputError{fmt.Sprintf("merge: %s:%d belongs to sweep %s, not %s", path, k+1, short(l.Sweep), short(m.Sweep))}
			case l.Index < 0 || l.Index >= m.Points:
				return nil, &InputError{fmt.Sprintf("merge: %s:%d: point %d is outside the grid of %d points", path, k+1, l.Index, m.Points)}
			case lines[l.Index] != nil:
				return nil, &InputError{fmt.Sprintf("merge: point %d is in both %s and %s", l.Index, from[l.Index], dir)}
			}
			lines[l.Index], from[l.Index] = l, dir
		}
	}
	var missing []int
	for i, l := range lines {
		if l == nil {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		return nil, &InputError{fmt.Sprintf("merge: %d of %d points are missing (first: point %d); is a shard unfinished (rerun it with --resume) or left out?", len(missing), m.Points, missing[0])}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, &InputError{fmt.Sprintf("merge: -o %s: %v", out, err)}
	}
	var all bytes.Buffer
	for _, l := range lines {
		all.Write(l.Raw)
	}
	if err := atomicfile.Write(filepath.Join(out, ManifestFile), manifest); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(filepath.Join(out, PointsFile), all.Bytes()); err != nil {
		return nil, err
	}
	return Finalize(out, charts)
}
