// Package status declares the records of live state that agbench shows: a cluster's state
// as `cluster status` (and its --json) reports it, the parts of a topology it is made of (the
// listener, links, modelled hosts and their budgets, the nodes' network namespaces and
// exporters, Patroni's settings and its view of the members), and what a listener knows of
// each backend (its /status and its banner). The cluster, cgroup and listener packages fill
// them and name them by aliases; internal/render prints them. They live here, in a leaf, so
// that the renderer can print live state without importing an engine, and so that each type
// is declared once.
//
// It holds types, their JSON form and the one-line descriptions made from them, and no
// behaviour: no process, file or network is read here.
//
// Imports from agbench: none.
package status
