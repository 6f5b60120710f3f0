// Command readahead runs the read-ahead article's experiment (agbench readahead: cold cache,
// prefetch off vs on, -repeat runs of each query and side, medians) on the installed
// PostgreSQL and, where -pg18 names a folder of PostgreSQL 18 server binaries, on 18 too,
// with the machine's facts printed first and the load average after each. Arguments after
// the flags go to agbench readahead as they are (READAHEAD_FLAGS). `make bench-readahead`
// runs it; it is a benchmark, not a test.
//
// Imports from agbench: only bench/harness.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/agbench/agbench/bench/harness"
)

func main() {
	bin := flag.String("agbench", "bin/agbench", "agbench binary")
	repeat := flag.Int("repeat", 3, "runs of each query and side (medians are reported)")
	pg18 := flag.String("pg18", "", "folder of PostgreSQL 18 server binaries (scripts/get-pg18.sh prints it); empty: 15 only")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	harness.Header(os.Stdout, "agbench readahead: cold cache, prefetch off against on")
	runs := [][]string{nil}
	if *pg18 != "" {
		if _, err := os.Stat(filepath.Join(*pg18, "postgres")); err == nil {
			runs = append(runs, []string{"--pg-bin", *pg18})
		} else {
			fmt.Printf("no PostgreSQL 18 under %q: the installed PostgreSQL only\n", *pg18)
		}
	}
	for _, extra := range runs {
		args := append(append([]string{"readahead", "--repeat", strconv.Itoa(*repeat)}, extra...), flag.Args()...)
		c := exec.CommandContext(ctx, *bin, args...)
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		if err := c.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "bench readahead: agbench %v: %v\n", args, err)
			os.Exit(1)
		}
		harness.Footer(os.Stdout)
	}
}
