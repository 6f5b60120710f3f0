package tpcc

import _ "embed"

// functionsSQL holds the five transactions as PL/pgSQL functions; build installs them.
//
//go:embed functions.sql
var functionsSQL string
