package sweep

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"stormsim/internal/atomicfile"
)

// Merge joins the output directories of a sharded sweep into out, which
// then holds exactly the files an unsharded run writes: the common
// sweep.json, every point's line in grid order (copied byte for byte),
// sweep.csv and the charts. Shards must come from one sweep and together
// hold every point once; anything else is an *InputError. The shards'
// lines are merged as streams, a line of each at a time. derived are as
// Options.Derived: removed from out first.
func Merge(out string, dirs []string, charts bool, derived ...string) ([]string, error) {
	if len(dirs) == 0 {
		return nil, &InputError{"merge: name at least one shard directory"}
	}
	var manifest []byte
	var m Manifest
	for _, dir := range dirs {
		dm, raw, err := readManifest(dir)
		if err != nil {
			return nil, &InputError{fmt.Sprintf("merge: %v", err)}
		}
		if manifest == nil {
			manifest, m = raw, dm
		} else if !bytes.Equal(raw, manifest) {
			a, b := distinct(dm.Sweep, m.Sweep)
			return nil, &InputError{fmt.Sprintf("merge: %s is from another sweep than %s (%s, %s)", dir, dirs[0], a, b)}
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, &InputError{fmt.Sprintf("merge: -o %s: %v", out, err)}
	}
	if err := removeOutputs(out, derived); err != nil {
		return nil, err
	}
	mg := &merger{m: m, dirs: dirs}
	if err := atomicfile.WriteFrom(filepath.Join(out, PointsFile), mg); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(filepath.Join(out, ManifestFile), manifest); err != nil {
		return nil, err
	}
	return Finalize(out, charts)
}

// merger writes the shards' lines in grid order.
type merger struct {
	m    Manifest
	dirs []string
}

// shardStream is one shard's sweep.ndjson, a line ahead.
type shardStream struct {
	dir, path string
	lr        *lineReader
	head      *Line
	k         int // the head's line number
}

func (s *shardStream) advance() error {
	l, err := s.lr.next()
	if err == io.EOF {
		s.head = nil
		return nil
	}
	if err != nil {
		return err
	}
	s.head, s.k = &l, s.lr.n
	return nil
}

// WriteTo writes every point's line, taking each time the shard line with
// the lowest index; it fails on a line of another sweep, outside the grid,
// in two shards, or missing.
func (mg *merger) WriteTo(w io.Writer) (int64, error) {
	streams, err := mg.open()
	defer closeStreams(streams)
	if err != nil {
		return 0, err
	}
	var n int64
	var gaps missingPoints
	next, lastFrom := 0, ""
	for low := lowest(streams); low != nil; low = lowest(streams) {
		l := low.head
		if err := mg.check(low, next, lastFrom); err != nil {
			return n, err
		}
		gaps.skip(next, l.Index)
		if gaps.count == 0 {
			k, err := w.Write(l.Raw)
			n += int64(k)
			if err != nil {
				return n, err
			}
		}
		next, lastFrom = l.Index+1, low.dir
		if err := low.advance(); err != nil {
			return n, &InputError{fmt.Sprintf("merge: %v", err)}
		}
	}
	gaps.skip(next, mg.m.Points)
	if gaps.count > 0 {
		return n, &InputError{fmt.Sprintf("merge: %d of %d points are missing (first: point %d); is a shard unfinished (rerun it with --resume) or left out?", gaps.count, mg.m.Points, gaps.first)}
	}
	return n, nil
}

// open opens every shard's sweep.ndjson, a line ahead; the streams it
// returns are to be closed even with an error.
func (mg *merger) open() ([]*shardStream, error) {
	var streams []*shardStream
	for _, dir := range mg.dirs {
		path := filepath.Join(dir, PointsFile)
		f, err := os.Open(path)
		if err != nil {
			return streams, &InputError{fmt.Sprintf("merge: %v", err)}
		}
		s := &shardStream{dir: dir, path: path, lr: newLineReader(path, f)}
		streams = append(streams, s)
		if err := s.advance(); err != nil {
			return streams, &InputError{fmt.Sprintf("merge: %v", err)}
		}
	}
	return streams, nil
}

func closeStreams(streams []*shardStream) {
	for _, s := range streams {
		if c, ok := s.lr.source.(io.Closer); ok {
			c.Close()
		}
	}
}

// lowest is the stream whose next line has the lowest index; nil when
// every stream has ended.
func lowest(streams []*shardStream) *shardStream {
	var low *shardStream
	for _, s := range streams {
		if s.head != nil && (low == nil || s.head.Index < low.head.Index) {
			low = s
		}
	}
	return low
}

// check refuses the line at the head of s where the merge expects point
// next (the last one written came from lastFrom): a line of another
// sweep, outside the grid, or of a point already written.
func (mg *merger) check(s *shardStream, next int, lastFrom string) error {
	l := s.head
	switch {
	case l.Sweep != LineID(mg.m.Sweep):
		return &InputError{fmt.Sprintf("merge: %s:%d belongs to sweep %s, not %s", s.path, s.k, l.Sweep, LineID(mg.m.Sweep))}
	case l.Index < 0 || l.Index >= mg.m.Points:
		return &InputError{fmt.Sprintf("merge: %s:%d: point %d is outside the grid of %d points", s.path, s.k, l.Index, mg.m.Points)}
	case l.Index < next:
		return &InputError{fmt.Sprintf("merge: point %d is in both %s and %s", l.Index, lastFrom, s.dir)}
	}
	return nil
}

// missingPoints counts the points no shard has.
type missingPoints struct {
	count, first int // first is meaningful once count > 0
}

// skip records the points from next up to (not including) at as missing.
func (m *missingPoints) skip(next, at int) {
	if at <= next {
		return
	}
	if m.count == 0 {
		m.first = next
	}
	m.count += at - next
}
