package sim

import (
	"encoding/binary"
	"slices"
	"testing"
)

// FuzzSortBucket: the wheel's radix sort orders a bucket's events as a
// stable sort by offset does (equal offsets keep their push order), for
// every event kind, any offset width and any split into chunks.
//
//	go test ./sim -run '^$' -fuzz FuzzSortBucket -fuzztime 30s
func FuzzSortBucket(f *testing.F) {
	f.Add(uint8(23), []byte{})
	f.Add(uint8(23), []byte{3, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0})
	f.Add(uint8(10), make([]byte, 4*300)) // all equal: order is push order
	f.Add(uint8(31), []byte("a bucket of a few offsets, some of them equal, in no particular order at all....."))
	f.Fuzz(func(t *testing.T, bits uint8, data []byte) {
		offBits := 1 + int(bits%31)
		var events []paidEvent
		for i := 0; i+4 <= len(data); i += 4 {
			off := binary.LittleEndian.Uint32(data[i:]) & (1<<offBits - 1)
			n := uint32(len(events))
			events = append(events, paidEvent{event: event{off: off, client: n, attempts: n ^ 0x5a5a}, pay: ^n})
		}
		want := slices.Clone(events)
		slices.SortStableFunc(want, func(a, b paidEvent) int { return int(a.off) - int(b.off) })
		gotPaid := sortChunked(events, offBits)
		if !slices.Equal(gotPaid, want) {
			t.Fatalf("paid events: got %v\nwant %v", gotPaid, want)
		}
		// As the lookahead does: the first events sorted on their own,
		// the later ones on theirs, then merged.
		if len(events) > 0 {
			k := int(bits) * len(events) / 255
			first := sortSlice(new(radix), slices.Clone(events[:k]), make([]paidEvent, k), offBits)
			later := sortSlice(new(radix), slices.Clone(events[k:]), make([]paidEvent, len(events)-k), offBits)
			if got := mergeSorted(make([]paidEvent, len(events)), first, later); !slices.Equal(got, want) {
				t.Fatalf("split at %d, sorted and merged: got %v\nwant %v", k, got, want)
			}
		}
		plain := make([]event, len(events))
		for i := range events {
			plain[i] = events[i].event
		}
		gotPlain := sortChunked(plain, offBits)
		for i := range want {
			if gotPlain[i] != want[i].event {
				t.Fatalf("plain event %d: got %v, want %v", i, gotPlain[i], want[i].event)
			}
		}
		// Packed events hold offsets of up to packedOffBits bits: the
		// same events with their offsets cut to that.
		packedBits := min(offBits, packedOffBits)
		packed := make([]packedEvent, len(events))
		for i, ev := range events {
			ev.off &= 1<<packedBits - 1
			packed[i] = makeEvent[packedEvent](ev.event, 0)
		}
		wantPacked := slices.Clone(packed)
		slices.SortStableFunc(wantPacked, func(a, b packedEvent) int { return int(offOf(&a)) - int(offOf(&b)) })
		if got := sortChunked(packed, packedBits); !slices.Equal(got, wantPacked) {
			t.Fatalf("packed events: got %v\nwant %v", got, wantPacked)
		}
	})
}

// sortChunked puts events into chunks as the wheel does (the last one
// partly filled) and sorts them with sortBucket.
func sortChunked[E wheelEvent](events []E, offBits int) []E {
	var chunks []*chunk[E]
	for i := 0; i < len(events); i += chunkLen {
		ch := new(chunk[E])
		copy(ch.events[:], events[i:min(len(events), i+chunkLen)])
		chunks = append(chunks, ch)
	}
	a, b := make([]E, len(events)), make([]E, len(events))
	return sortBucket(new(radix), chunks, len(events), a, b, offBits)
}
