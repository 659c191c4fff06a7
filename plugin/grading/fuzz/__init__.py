"""The differential fuzzer: random programs run on torch and on an engine, compared.

    api.py         the programs: steps drawn against the public API, run on two engines, and
                   everything a user can observe compared (the kit's own fuzzer of the
                   reference, tests/test_fuzz_api.py, and the katas' fuzz tests share it)
    focus.py       each kata's vocabulary: the steps and values aimed at its pieces
    graded.py      a kata's fuzz test (katas 01-08): programs on the learner's pieces, a
                   divergence passed over when the model solutions show it too, else shrunk
                   and blamed on a piece
    functional.py  the fuzz test of katas 09 and 10: random cases of their functions against
                   torch.autograd.functional and the capstone run on torch
"""
