package readahead

import (
	"encoding/json"
	"fmt"
	"strings"
)

// PlanStats are the figures of one EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) of a query: our
// STATISTICS IO. Block counts are of 8 kB pages (BLCKSZ).
type PlanStats struct {
	// SharedHit is pages found in shared buffers (the article's logical reads that cost no IO).
	SharedHit int64 `json:"shared_hit"`
	// SharedRead is pages read from the OS (physical reads, or page-cache hits on a warm OS).
	SharedRead int64 `json:"shared_read"`
	// IOReadMs is the time spent reading (track_io_timing = on), milliseconds.
	IOReadMs float64 `json:"io_read_ms"`
	// ExecutionMs is the server's Execution Time.
	ExecutionMs float64 `json:"execution_ms"`
	// Rows is the top node's actual rows.
	Rows int64 `json:"rows"`
	// Nodes are the plan's node types, depth first, with their relation ("Index Scan on testtable").
	Nodes []string `json:"nodes"`
}

// HasNode reports whether a node of this type ran ("Nested Loop", "Bitmap Heap Scan").
func (p PlanStats) HasNode(nodeType string) bool {
	for _, n := range p.Nodes {
		if n == nodeType || strings.HasPrefix(n, nodeType+" on ") {
			return true
		}
	}
	return false
}

// Plan is the nodes as one line: "Nested Loop(Index Scan on testtable, Index Scan on testtable2)".
func (p PlanStats) Plan() string { return strings.Join(p.Nodes, " > ") }

type planNode struct {
	NodeType     string     `json:"Node Type"`
	RelationName string     `json:"Relation Name"`
	ActualRows   float64    `json:"Actual Rows"`
	Plans        []planNode `json:"Plans"`
	// Buffers of a node include its children's.
	SharedHit  int64 `json:"Shared Hit Blocks"`
	SharedRead int64 `json:"Shared Read Blocks"`
	// "I/O Read Time" up to PostgreSQL 16, "Shared I/O Read Time" from 17.
	IOReadTime       *float64 `json:"I/O Read Time"`
	SharedIOReadTime *float64 `json:"Shared I/O Read Time"`
}

type explainDoc struct {
	Plan          *planNode `json:"Plan"`
	ExecutionTime float64   `json:"Execution Time"`
}

// ParseExplain reads the output of EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON): a JSON array
// holding one object with "Plan" and "Execution Time".
func ParseExplain(b []byte) (PlanStats, error) {
	var docs []explainDoc
	if err := json.Unmarshal(b, &docs); err != nil {
		return PlanStats{}, fmt.Errorf("EXPLAIN output is not JSON: %w", err)
	}
	if len(docs) != 1 || docs[0].Plan == nil {
		return PlanStats{}, fmt.Errorf("EXPLAIN output: want one plan, got %d documents", len(docs))
	}
	top := docs[0].Plan
	s := PlanStats{SharedHit: top.SharedHit, SharedRead: top.SharedRead, ExecutionMs: docs[0].ExecutionTime, Rows: int64(top.ActualRows)}
	switch {
	case top.SharedIOReadTime != nil:
		s.IOReadMs = *top.SharedIOReadTime
	case top.IOReadTime != nil:
		s.IOReadMs = *top.IOReadTime
	}
	var walk func(n *planNode, depth int)
	walk = func(n *planNode, depth int) {
		if depth > 100 {
			return
		}
		name := n.NodeType
		if n.RelationName != "" {
			name += " on " + n.RelationName
		}
		s.Nodes = append(s.Nodes, name)
		for i := range n.Plans {
			walk(&n.Plans[i], depth+1)
		}
	}
	walk(top, 0)
	return s, nil
}
