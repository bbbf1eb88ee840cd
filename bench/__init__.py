"""Benchmarks (``make bench``): the project's engines against named peers in one run."""
