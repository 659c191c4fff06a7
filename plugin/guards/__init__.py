"""Guards: what keeps a run alive and honest whatever a learner's code does.

Learner code runs in the grader's process. These modules make sure it costs at most its own
kata, and that a kata counts only as the learner's own work:

    time_limit.py       the time limit of a kata test (also under hypothesis); a breaker per
                        piece that ran away (and its kata's heavy tests fail at once)
    interrupts.py       a KeyboardInterrupt raised by code fails its test; Ctrl-C stops the run
    cycle_collector.py  Python's cycle collector rests while a kata test runs
    learner_output.py   what a learner's code prints: once per kata, cut to a few KB
    patches.py          a learner file that patches the engine, numpy or torch: flagged, put back
    integrity.py        flags: forbidden imports, reaching the reference's pieces, test files
                        changed
    tripwire.py         at run time: the reference's own implementation never runs from
                        learner code, however it was reached
    tamper.py           at run time: the grader's own functions and settings are the ones it
                        started with
    tracers.py          a profile or trace function learner code installs: removed, flagged
    stack_watch.py      a piece that looks at the call stack while it is timed: no verdict
    report_checks.py    the run-time checks carried on each test's report (to the controller)
    partial_runs.py     a kata is done only when graded in full (-k, --deselect, -x say so)

They read the shared state (plugin/state.py), the manifest and the shipped record; nothing
here imports grading/.
"""
