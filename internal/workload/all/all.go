// Package all registers every workload of agbench by importing it for its side effect.
package all
