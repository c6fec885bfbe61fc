"""Benchmarks: scripts that print numbers and ratios (never timing assertions in tests)."""
