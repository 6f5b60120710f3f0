package experiment

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/internal/privilege"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/runner"
	"github.com/agbench/agbench/internal/sample"
	"github.com/agbench/agbench/internal/target"
)

// Samplers are the samplers that run beside every measured window: every node's database
// statistics and the OS (CPU, PSI, the devices behind the data folders of nodes on this
// machine). A sampler that cannot start is a warning, never a failure.
type Samplers struct {
	List     []runner.Sampler
	Warnings []string
	pg       *sample.PG
}

// StartSamplers starts the samplers for a target. withPG false leaves out the database
// sampler (the servers restart between steps, so its sessions would not survive).
func StartSamplers(ctx context.Context, tgt *target.Target, database string, withPG bool) *Samplers {
	s := &Samplers{}
	var paths []string
	if tgt.Topo != nil {
		for _, n := range tgt.Topo.Nodes {
			paths = append(paths, n.DataDir)
		}
	}
	if withPG {
		nodes := PGNodes(tgt, database)
		if len(nodes) > 0 {
			pg, err := sample.NewPG(ctx, nodes, sample.PGOptions{})
			if err != nil {
				s.Warnings = append(s.Warnings, fmt.Sprintf("database sampler: %v", err))
			} else {
				s.pg = pg
				s.List = append(s.List, pg)
				for i, info := range pg.Nodes() {
					switch {
					case !IsLocal(nodes[i].ConnString) || slices.Contains(paths, info.DataDirectory):
					case info.DataDirectory != "":
						paths = append(paths, info.DataDirectory)
					case tgt.Topo == nil:
						s.Warnings = append(s.Warnings, dataDirectoryHidden(info))
					}
				}
			}
		}
	}
	if tgt.Topo != nil && tgt.Topo.Hosts != nil {
		var hosts []sample.HostGroup
		for _, n := range tgt.Topo.Nodes {
			if n.Group != nil {
				hosts = append(hosts, sample.HostGroup{Node: n.Name, Group: n.Group})
			}
		}
		if hs, err := sample.NewHostStep(hosts, 0); err != nil {
			s.Warnings = append(s.Warnings, fmt.Sprintf("host sampler: %v", err))
		} else {
			s.List = append(s.List, hs)
		}
	}
	osr, err := sample.NewOSStep(sample.OSConfig{Paths: paths}, 0)
	if err != nil {
		s.Warnings = append(s.Warnings, fmt.Sprintf("OS sampler: %v", err))
	} else {
		s.List = append(s.List, osr)
	}
	return s
}

// dataDirectoryHidden says why the device of a server on this machine was not watched: its
// login may not read data_directory.
func dataDirectoryHidden(info result.PGNodeInfo) string {
	return fmt.Sprintf("device figures of %s not measured: the login %s lacks pg_read_all_settings (pg_monitor includes it), so the server does not show it its data_directory, and the device under it is unknown (GRANT pg_read_all_settings TO %s;)",
		info.Name, info.Login, privilege.Ident(info.Login))
}

// Close closes the database sampler's sessions.
func (s *Samplers) Close() {
	if s != nil && s.pg != nil {
		_ = s.pg.Close(context.Background())
	}
}

// PGNodes lists the servers to sample directly (never through a listener): a cluster's
// nodes by their names, or the primary and standbys of connection strings, named as in the
// result's topology (NAME of NAME=URL, else primary, standby1, standby2 ...).
func PGNodes(tgt *target.Target, database string) []sample.PGNode {
	var out []sample.PGNode
	if tgt.Topo != nil {
		for i := range tgt.Topo.Nodes {
			n := &tgt.Topo.Nodes[i]
			out = append(out, sample.PGNode{Name: n.Name, ConnString: tgt.Topo.ConnString(n, database)})
		}
		return out
	}
	if tgt.Primary != "" {
		out = append(out, sample.PGNode{Name: tgt.NameOfPrimary(), ConnString: tgt.Primary})
	}
	for i, cs := range tgt.Standbys {
		out = append(out, sample.PGNode{Name: tgt.NameOfStandby(i), ConnString: cs})
	}
	return out
}

// IsLocal says whether a connection string reaches a server on this machine (loopback or
// a Unix socket), whose data directory's device can be watched here.
func IsLocal(conn string) bool {
	cfg, err := pgconn.ParseConfig(conn)
	if err != nil {
		return false
	}
	if strings.HasPrefix(cfg.Host, "/") || cfg.Host == "localhost" {
		return true
	}
	ip := net.ParseIP(cfg.Host)
	return ip != nil && ip.IsLoopback()
}
