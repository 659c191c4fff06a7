"""The workshop: the `katas` command (cli.py) and the tools it runs besides pytest.

    cli.py         `katas`, `katas check/next/hint/report/...`: each prints the pytest command it runs
    watch.py       grade a kata again on every save (`katas watch`)
    show.py        open the graph page of a kata's last wrong gradient (`katas show`)
    reset.py       put a kata's stub back, keeping the learner's file as a backup (`katas reset`)
    scoreboard.py  a class table from many learners' reports (`katas scoreboard`)
    autograder.py  grade a submission as Gradescope's autograder runs it (examples/gradescope/)
    edition.py     a course's student copy, without the model solutions not released (`katas edition`)

They call on reports/, shipped/ and the base, and run pytest for the grading itself.
"""
