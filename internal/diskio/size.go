package diskio

import "github.com/agbench/agbench/internal/units"

// ParseSize is units.ParseBytes, kept only while cmd/agbench still calls it here.
//
// Deprecated: call units.ParseBytes.
func ParseSize(s string) (int64, error) { return units.ParseBytes(s) }

// FormatSize is units.FormatBytesExact, kept only while cmd/agbench still calls it here.
//
// Deprecated: call units.FormatBytesExact.
func FormatSize(n int64) string { return units.FormatBytesExact(n) }
