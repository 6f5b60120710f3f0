package diskio

import "sync/atomic"

// ioReq is one IO to issue.
type ioReq struct {
	write bool
	size  int64
	off   int64 // absolute file offset
}

// layout is where IO may go: [start, start+span), span a multiple of align.
type layout struct {
	start, span, align int64
}

func newLayout(t *TestFile, w *Workload) layout {
	a := w.Alignment()
	start := alignedStart(t, a)
	return layout{start: start, span: max((t.Size-start)/a*a, 0), align: a}
}

// alignedStart is the first offset past the header that is a multiple of a: a 128K IO at
// 4K+n*128K would straddle two of the device's 128K units and be split in two.
func alignedStart(t *TestFile, a int64) int64 {
	return (t.DataStart + a - 1) / a * a
}

// seqStream is a sequential cursor, per thread or shared by all threads (DiskSpd -si);
// each thread's stream starts at its own share of the file so threads do not read the
// same blocks in lockstep.
type seqStream struct {
	pos  atomic.Int64
	base int64
}

// picker chooses each worker's next IO; it is not shared between goroutines, except for
// the sequential stream, which is atomic.
type picker struct {
	w     *Workload
	l     layout
	rng   rand
	seq   *seqStream
	sizes []int64
	// slots[i] is how many aligned positions a block of sizes[i] may start at.
	slots []uint64
}

func newPicker(w *Workload, l layout, seed uint64, seq *seqStream) *picker {
	p := &picker{w: w, l: l, rng: newRand(seed), seq: seq, sizes: w.BlockSizes}
	for _, b := range w.BlockSizes {
		n := (l.span-b)/l.align + 1
		p.slots = append(p.slots, uint64(max(n, 1)))
	}
	return p
}

func (p *picker) next() ioReq {
	i := 0
	if len(p.sizes) > 1 {
		i = int(p.rng.below(uint64(len(p.sizes))))
	}
	r := ioReq{size: p.sizes[i]}
	switch {
	case p.w.WritePct >= 100:
		r.write = true
	case p.w.WritePct > 0:
		r.write = p.rng.below(100) < uint64(p.w.WritePct)
	}
	if p.w.Random {
		r.off = p.l.start + int64(p.rng.below(p.slots[i]))*p.l.align
		return r
	}
	// Sequential: advance the stream by the block; wrap at the end of the region.
	end := p.seq.pos.Add(r.size)
	rel := (p.seq.base + end - r.size) % p.l.span
	rel -= rel % p.l.align
	if rel+r.size > p.l.span {
		rel = 0
	}
	r.off = p.l.start + rel
	return r
}

// threadBase is where thread i of n starts its own sequential stream.
func threadBase(l layout, i, n int) int64 {
	if n <= 1 {
		return 0
	}
	b := l.span / int64(n) * int64(i)
	return b - b%l.align
}
