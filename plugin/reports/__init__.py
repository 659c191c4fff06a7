"""Reports: what a run leaves behind for an instructor.

    json_report.py  the JSON report of a run (`--kata-report PATH`), read by the scoreboard
    gradescope.py   the same as Gradescope's results.json (`--kata-report-format gradescope`)

They turn the grading's results into files; they import nothing of grading/ or guards/.
"""
