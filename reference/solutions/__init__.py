"""The model solutions of the ten katas, one module each, each opening with the kata it solves.

    rules.py          01 elementwise rules     backward_pass.py  06 the backward pass
    shapes.py         02 shapes                saved.py          07 retain_graph, saved tensors
    toposort.py       03 topological order     devices.py        08 devices
    accumulate.py     04 accumulation          higher_order.py   09 higher-order gradients
    seeding.py        05 seeding               capstone.py       10 the capstone

Katas 01-08 are pieces of the engine: the core calls them through the seam
(`reference.pieces.active`), never by import, and a learner's file replaces them there.
Katas 09 and 10 are functions written on the public API (`import reference as ag`, what a
learner's file reaches as `from plugin import engine as ag`), so they run on whichever pieces
are plugged in.
"""
