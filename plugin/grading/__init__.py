"""Grading: the pytest hooks that turn a run of the kata tests into a table and a report.

    session.py       the hooks: tag each test with its kata, choose the katas to run, turn
                     stubs into to-dos, gather results, print the table, write the report
    options.py       the command-line options (`pytest --help`, "autograd-katas")
    fixtures.py      what kata tests receive: the assembled engine, the oracle, speed
    assembly.py      the reference engine with a learner's pieces plugged in; `assemble()`
    oracle.py        the same code on torch and on the engine, compared; the wrong node located
    graph_view.py    the two graphs paired and drawn as text around the wrong node
    gpu_check.py     the same scenario on the engine's (simulated) GPU and on torch
    outcomes.py      what a test's result means: a to-do, a pass, a failure in one sentence
    results.py       per-kata bookkeeping from test reports (also on pytest-xdist's controller)
    speed.py         the learner's piece timed against the reference's; growth classes
    work.py          growth counted rather than timed (lines, node comparisons, list moves,
                     bytes allocated): wide and residual graphs, the same verdict when busy
    table.py         the table at the end of every run
    conclusion.py    what a run concludes (the table, the report, --kata-require-done), alike
                     in pytest's own process and in a supervised run's supervisor
    hints.py         progressive hints, remembered in pytest's cache
    say_once.py      what would repeat under every failure (a hint, an import error) once
    random_cases.py  a failing random case costs its own time, not pytest's traceback of it
    parallel.py      `-n N` runs in one process where workers cannot pay for themselves; a
                     kata's tests share a worker, and a worker that dies costs that kata only
    fuzz/            the differential fuzzer: random programs on torch and on an engine; each
                     kata's fuzz test (the `fuzz` fixture), run last in its kata

It calls on guards/ (against learner code) and reports/, never the other way round.
"""
