// Package units owns how agbench reads and writes quantities for people: byte sizes
// (ParseBytes, ParseBytesFraction, and the byte formats FormatBytes, FormatBytesExact,
// FormatBytesShort, MB), rates in bytes per second (ParseRate) and numbers grouped in
// thousands (GroupDigits, GroupInt).
//
// Imports from agbench: none.
package units
