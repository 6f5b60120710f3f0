package listener

import (
	"fmt"
	"strings"
	"time"
)

// writable is what the listener knows of a node out of recovery when it settles which
// writable node is the primary.
type writable struct {
	name string
	// timeline is the node's current timeline; 0 when the probe could not read it.
	timeline uint32
	// promotedAt is when this listener saw the node leave recovery; zero when it never
	// did (the node was writable at its first probe, or came back writable from down).
	promotedAt time.Time
	// olderThan names the primary this node was found older than, until the node is
	// seen in recovery again; "" when it never was.
	olderThan string
}

// newestPrimary picks the primary among writable nodes: the one that is not a stale
// former primary. floor is the newest timeline a primary was seen on (0: none read),
// lastPrimary the node taken for the primary before. It returns the winner's index (-1
// when no node may be taken) and, when that was a choice, the rule that decided, in words.
//
// A node may not be the primary when its timeline is older than floor, nor, unless its
// timeline is newer than floor, when it was found older than a primary before and has
// not been seen in recovery since: a stale primary stays stale when the newest primary
// goes down. Among the rest, in order (see rank):
//  1. the node on the newest timeline, when every candidate's timeline was read: a
//     promotion always starts a new timeline, higher than any its node knew of, so the
//     old primary, restarted writable, is left on the older one;
//  2. the node this listener saw leave recovery most recently (timelines unreadable,
//     or equal as with two standbys promoted apart);
//  3. the node that was the primary before (this listener's last primary);
//  4. none: the listener cannot tell which is newest and sends writes to neither.
//
// The rule stated is the one that picks the winner among all the writable nodes when it
// does: a loser's exclusion, learnt from an earlier round (floor, olderThan), must not
// change the reason from one round to the next, nor with which node this listener
// happened to see first.
func newestPrimary(cands []writable, floor uint32, lastPrimary string) (winner int, rule string) {
	var pool []int
	var older []string
	for i, c := range cands {
		if why := tooOld(c, floor); why != "" {
			older = append(older, why)
			continue
		}
		pool = append(pool, i)
	}
	switch {
	case len(pool) == 0 && len(older) > 0:
		return -1, "older than the last primary: " + strings.Join(older, "; ")
	case len(pool) == 0:
		return -1, ""
	case len(cands) == 1:
		return pool[0], ""
	}
	all := make([]int, len(cands))
	for i := range cands {
		all[i] = i
	}
	if len(pool) == len(cands) {
		return rank(cands, all, lastPrimary)
	}
	winner, rule = pool[0], "the others are older than the last primary: "+strings.Join(older, "; ")
	if len(pool) > 1 {
		winner, rule = rank(cands, pool, lastPrimary)
	}
	if w, r := rank(cands, all, lastPrimary); winner >= 0 && w == winner {
		rule = r
	}
	return winner, rule
}

// rank picks the newest of the candidates pool names (two or more) by the rules
// newestPrimary lists, and says which rule decided.
func rank(cands []writable, pool []int, lastPrimary string) (winner int, rule string) {
	tl, allRead := timelines(cands, pool)
	if allRead {
		top := uint32(0)
		for _, i := range pool {
			top = max(top, cands[i].timeline)
		}
		var atTop []int
		for _, i := range pool {
			if cands[i].timeline == top {
				atTop = append(atTop, i)
			}
		}
		if len(atTop) == 1 {
			return atTop[0], "newest timeline (" + tl + ")"
		}
		pool = atTop
	}
	why := "timelines " + tl
	if !allRead {
		why = "timelines not all readable: " + tl
	}
	if i := latestPromoted(cands, pool); i >= 0 {
		return i, "left recovery most recently, as this listener saw (" + why + ")"
	}
	for _, i := range pool {
		if cands[i].name == lastPrimary {
			return i, "was the primary before (" + why + ")"
		}
	}
	return -1, "cannot tell which is newest (" + why + "); writes go to neither until one is stopped or demoted"
}

// tooOld says why a writable node may not be the primary (see newestPrimary), or "".
func tooOld(c writable, floor uint32) string {
	switch {
	case c.timeline != 0 && floor != 0 && c.timeline > floor:
		return ""
	case c.timeline != 0 && c.timeline < floor:
		return fmt.Sprintf("%s is on timeline %d, the last primary was on %d", c.name, c.timeline, floor)
	case c.olderThan != "":
		return c.name + " was found older than " + c.olderThan + " and has not been in recovery since"
	}
	return ""
}

// timelines describes the timelines of the pool's candidates ("primary 1, standby1 2")
// and says whether all were read.
func timelines(cands []writable, pool []int) (string, bool) {
	parts := make([]string, len(pool))
	all := true
	for j, i := range pool {
		c := cands[i]
		if c.timeline == 0 {
			parts[j] = c.name + " ?"
			all = false
			continue
		}
		parts[j] = fmt.Sprintf("%s %d", c.name, c.timeline)
	}
	return strings.Join(parts, ", "), all
}

// latestPromoted is the one candidate of pool seen leaving recovery last, or -1 when
// none was seen or two were seen at the same time.
func latestPromoted(cands []writable, pool []int) int {
	best, tie := -1, false
	for _, i := range pool {
		at := cands[i].promotedAt
		switch {
		case at.IsZero():
		case best < 0 || at.After(cands[best].promotedAt):
			best, tie = i, false
		case at.Equal(cands[best].promotedAt):
			tie = true
		}
	}
	if tie {
		return -1
	}
	return best
}
