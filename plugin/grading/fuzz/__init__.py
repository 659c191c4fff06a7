"""The differential fuzzer: random programs run on torch and on an engine, compared.

    api.py     the programs: steps drawn against the public API, run on two engines, and
               everything a user can observe compared (the kit's own fuzzer of the reference,
               tests/test_fuzz_api.py, and the katas' fuzz tests share it)
"""
