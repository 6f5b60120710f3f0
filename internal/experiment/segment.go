package experiment

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/segment"
)

// CompletionIndexEnv is the variable in which a pod of a Kubernetes Indexed Job finds its
// completion index: with --segments N, the command layer takes the segment's number from it.
const CompletionIndexEnv = "JOB_COMPLETION_INDEX"

// DefaultSegmentTimeout is how long a segment waits at the barrier for the others: pods of
// a Job may wait for a node and pull an image before they start.
const DefaultSegmentTimeout = 5 * time.Minute

// SegmentFlags are the flags of a measuring kind that may run as one segment of several load
// generators (stress, scan, tpcc run): its share of the VUs, warehouses and rate, the run
// the segments share and how long a segment waits for the others at each step's start.
// drill, disk, seed and readahead take none: a drill's fault, a seeding's copy and a
// read-ahead's cold read are single events of one client, and a storage test measures the
// disk of the machine it runs on, which another machine's segment cannot share.
type SegmentFlags struct {
	Segment  string
	Segments int
	Run      string
	Timeout  time.Duration
}

// Register adds the flags to fs.
func (f *SegmentFlags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.Segment, "segment", "", "run as segment I of N load generators (I/N, 0-based): this one runs its share of the VUs, warehouses and rate; agbench merge makes one result of the N")
	fs.IntVar(&f.Segments, "segments", 0, "run as one of N segments, numbered by $"+CompletionIndexEnv+" (a Kubernetes Indexed Job's pod) unless --segment says")
	fs.StringVar(&f.Run, "segment-run", "", "name of the run the segments share (default: made from the command line, the same for every segment)")
	fs.DurationVar(&f.Timeout, "segment-timeout", DefaultSegmentTimeout, "how long a segment waits for the others at the start of each step before the run fails")
}

// Given reports whether the run was asked to be a segment.
func (f *SegmentFlags) Given() bool { return f.Segment != "" || f.Segments != 0 }

// Parse returns the segment the flags name (the whole run without them), every problem at once.
func (f *SegmentFlags) Parse() (segment.Segment, error) {
	var errs []error
	var seg segment.Segment
	switch {
	case f.Segment != "":
		s, err := segment.Parse(f.Segment)
		if err != nil {
			errs = append(errs, agerr.BadInputf("--segment %q: %v", f.Segment, err))
		}
		seg = s
		if err == nil && f.Segments != 0 && f.Segments != s.Of {
			errs = append(errs, agerr.BadInputf("--segment %s and --segments %d: not the same number of segments", f.Segment, f.Segments))
		}
	case f.Segments != 0:
		if _, err := segment.New(0, f.Segments); err != nil {
			errs = append(errs, agerr.BadInputf("--segments %d: %v", f.Segments, err))
		} else {
			errs = append(errs, agerr.BadInputf("--segments %d: which segment? give --segment I/%d or set $%s", f.Segments, f.Segments, CompletionIndexEnv))
		}
	}
	if f.Timeout <= 0 {
		errs = append(errs, agerr.BadInputf("--segment-timeout %v: must be positive", f.Timeout))
	}
	return seg, agerr.Join(errs...)
}

// checkShare refuses a split that leaves a segment without any of n things (VUs, threads,
// warehouses), naming the flag that gave them.
func checkShare(seg segment.Segment, flag string, n int) error {
	if seg.Whole() || n >= seg.Of {
		return nil
	}
	return agerr.BadInputf("%s %d with --segment %s: every segment needs at least one; give at least %d", flag, n, seg, seg.Of)
}

// SegmentRunName is the name the segments of a run share when --segment-run is not given:
// made from the command line less what differs between segments (segment.SettingArgs), so
// that every segment started with the same command finds the same.
func SegmentRunName(args []string) string {
	h := sha256.New()
	for _, a := range segment.SettingArgs(args) {
		h.Write([]byte(strconv.Quote(a)))
	}
	return "args-" + hex.EncodeToString(h.Sum(nil))[:16]
}
