// Package catalogue is the verdict catalogue: for every verdict, a run made to be invalid in
// that way and a control run that is not, both real runs of the agbench binary on real
// servers, judged from its output and its result files. The cases that do not change their
// cluster run side by side on shared clusters; those that measure the machine's own load run
// alone (catalogueCase.Serial).
//
// Imports from agbench: only e2e/e2etest, internal/analyze, internal/cgroup, internal/cluster, internal/cluster/clustertest, internal/result, internal/target, internal/workload/pgops.
package catalogue
