"""The workshop's tools, apart from the grading plugin: the `katas` command (cli.py) and what
it runs besides pytest: watch (grade again on every save), reset (put a stub back, keeping the
learner's file), scoreboard (a class table from reports) and autograder (Gradescope)."""
