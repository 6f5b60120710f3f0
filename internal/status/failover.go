package status

import "time"

// FailoverReport says what a failover did and how long it took, as `cluster failover` prints it.
type FailoverReport struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Planned bool   `json:"planned"` // the old primary was up and was shut down cleanly first
	// WriteOutage is from the start until the new primary accepts writes.
	WriteOutage time.Duration `json:"write_outage"`
	// Total includes re-pointing the other standbys and bringing the old primary back.
	Total      time.Duration `json:"total"`
	Repointed  []string      `json:"repointed"`
	Rewound    []string      `json:"rewound,omitempty"`
	OldPrimary string        `json:"old_primary_state"`
	// Silent is true when the old primary ran but did not answer within the probe's
	// timeout; Detected is when the probe gave up.
	Silent   bool      `json:"silent,omitempty"`
	Detected time.Time `json:"detected,omitzero"`
	// FencedAt is when the old primary's processes were killed, before the promotion
	// (zero when they were not).
	FencedAt time.Time `json:"fenced_at,omitzero"`
	// PromotedAt is when the new primary accepted writes.
	PromotedAt time.Time `json:"promoted_at"`
	// RejoinedAt is when the old primary streamed from the new one (zero when it did not).
	// With sync commit and no other standby re-pointed (Repointed empty), the new primary's
	// commits wait for it until then: it is the only synchronous standby the new primary has.
	RejoinedAt time.Time `json:"rejoined_at,omitzero"`
	// WALLacked is, after an unplanned failover, the WAL the new primary lacked of the old
	// one: the old primary's end of valid WAL minus what the new one had received; absent
	// with WALLackedNote saying why.
	WALLacked     *int64            `json:"wal_lacked_bytes,omitempty"`
	WALLackedNote string            `json:"wal_lacked_note,omitempty"`
	Steps         []FailoverStep    `json:"steps"`
	Problems      map[string]string `json:"problems,omitempty"`
}

// FailoverStep is one timed step.
type FailoverStep struct {
	Name     string        `json:"name"`
	Duration time.Duration `json:"duration"`
}
