"""Reproducible benchmarks: `make bench` (all) or `python -m benchmarks NAME`."""
