"""Benchmarks of the reference engine against torch's CPU autograd and hand-written numpy.

Not part of the default test run. See benchmarks/README.md for the commands.
"""
