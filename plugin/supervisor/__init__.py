"""Supervised grading: pytest runs as a child process, under limits no learner code can cross.

The commands that decide a grade or an exit status (`katas`, `katas check/next/report/watch`,
`pytest --kata-report`, `pytest --kata-require-done`, `pytest --kata-supervised`, the
Gradescope autograder and the Classroom steps) run their pytest as a child, in its own
process group, with a memory limit and a hard wall-clock limit per kata:

    run.py       the supervisor: starts the child, relays its output, kills it when a kata
                 runs past its limit, grades what is left in a fresh child after a crash,
                 then prints the table, writes the report and decides the exit status
    child.py     the child's side: it hands each kata's result record over a pipe as the
                 kata finishes, and the whole run's at the session's end (before any atexit
                 handler of learner code can run)
    records.py   the records, as lines of JSON, read back into the grading's results
    processes.py starting, limiting and ending the child and everything it started

A kata whose child died or was killed is "crashed" or "timed out", in one sentence that
names it; "done" and the exit status come only from the records received. A plain `pytest`
runs in its own process, as before.
"""
