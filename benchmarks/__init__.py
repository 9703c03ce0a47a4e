"""Benchmarks of the rbm package; run them all with `make bench`."""
