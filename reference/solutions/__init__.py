"""Reference solutions of the katas written on the engine's public API (katas 09 and 10).

They use only `import reference as ag`, the same torch-like API a learner's file reaches
through `from plugin import engine as ag`, so they run on whichever pieces are plugged in.
"""
