"""The grading session: the pytest hooks that turn a test run into a kata report.

Each hook has one job: tag items with their kata, pick the katas to run, run each test on
the right pieces, turn stubs into to-dos, collect results, print the table.
"""
import pytest

from . import integrity, outcomes
from . import report as json_report
from .hints import HintBook, load_hints
from .assembly import learner_file_paths
from .manifest import find_kata, kata_for_path, katas, unknown_kata
from .results import CACHE_KEY, DONE, KataResult, TestResult, status_of
from .speed import SPEED_KEY
from .table import write_table

KATA_KEY = pytest.StashKey()
HYPOTHESIS_EXAMPLES = "_hypothesis_failing_examples"  # _hypothesis_pytestplugin.FAILING_EXAMPLES_KEY
SPEED_FIXTURE = "speed"


class Grading:
    def __init__(self, config):
        self.config = config
        self.results = {}  # slug -> KataResult
        self.learner_paths = learner_file_paths()
        self.cached = config.cache.get(CACHE_KEY, {}) if getattr(config, "cache", None) else {}
        self.grading_katas = False  # no table for a run without kata tests (the kit's own)
        self.hints = HintBook(getattr(config, "cache", None))
        self.chosen = []  # the katas named with --kata, in order
        self.shipped = integrity.load_shipped()  # hashes of the shipped test files

    # --- collection ----------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session, config, items):
        for item in items:
            kata = kata_for_path(item.path)
            if kata is not None:
                item.stash[KATA_KEY] = kata
                self._mark(item, kata)
        self._select(config, items)
        items[:] = self._speed_tests_last(items)
        self.grading_katas = any(KATA_KEY in item.stash for item in items)

    def _mark(self, item, kata):
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(self.config.getoption("kata_timeout")))
        # Under pytest-xdist --dist loadgroup, a kata's tests share a worker, in order.
        item.add_marker(pytest.mark.xdist_group(kata.slug))
        if not self.config.getoption("fulltrace", False):
            outcomes.hide_machinery(item)

    def _select(self, config, items):
        wanted = config.getoption("kata") or []
        if not wanted:
            return
        chosen = set()
        for spec in wanted:
            if spec == "next":
                kata = next((k for k in katas() if self.cached.get(k.slug) != DONE), None)
            else:
                kata = find_kata(spec)
            if kata is None and spec != "next":
                raise pytest.UsageError(f"--kata {spec}: {unknown_kata(spec)}")
            if kata is not None:
                chosen.add(kata.slug)
                self.chosen.append(kata)
        keep, drop = [], []
        for item in items:
            kata = item.stash.get(KATA_KEY, None)
            (keep if kata is None or kata.slug in chosen else drop).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep

    @staticmethod
    def _speed_tests_last(items):
        """Within each kata, speed tests run after the correctness tests (they wait for them)."""
        first_seen = {}
        keyed = []
        for index, item in enumerate(items):
            kata = item.stash.get(KATA_KEY, None)
            group = first_seen.setdefault(kata.slug if kata else index, index)
            is_speed = SPEED_FIXTURE in getattr(item, "fixturenames", ())
            keyed.append(((group, is_speed, index), item))
        return [item for _, item in sorted(keyed, key=lambda pair: pair[0])]

    # --- reports ---------------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        kata = item.stash.get(KATA_KEY, None)
        if kata is not None:
            # No "apply this patch to your tests" section from hypothesis: the learner's task
            # is the piece, and the shrunk example is already in the failure.
            item.__dict__.pop(HYPOTHESIS_EXAMPLES, None)
        at_stub = kata is not None and outcomes.reached_stub(call.excinfo, self.learner_paths)
        report = yield
        if kata is None:
            return report
        report.kata = kata.slug
        report.kata_speed_test = SPEED_FIXTURE in item.fixturenames
        if call.when == "call":
            for key, value in item.stash.get(SPEED_KEY, {}).items():
                setattr(report, key, value)
        if at_stub:
            report.outcome = "skipped"
            report.kata_todo = True
            reason = outcomes.todo_reason(call.excinfo)
            report.longrepr = (str(item.path), item.location[1] or 0, reason)
            if isinstance(call.excinfo.value, outcomes.KataBlocked):
                report.kata_message = reason  # the table says which katas to finish first
        elif report.failed:
            report.kata_message = outcomes.verdict(report)
            hint = self.hints.current(kata)
            if hint:
                report.sections.append(("Hint (pytest --hint shows the next one)", hint))
        return report

    def pytest_report_teststatus(self, report, config):
        if getattr(report, "kata_todo", False):
            return outcomes.TODO, "T", ("TODO", {"yellow": True})
        return None

    def pytest_runtest_logreport(self, report):
        slug = getattr(report, "kata", None)
        if slug is None:
            return
        result = self.results.get(slug)
        if result is None:
            result = self.results[slug] = KataResult(slug)
            kata = find_kata(slug)
            if kata is not None and self.config.getoption("solution") == "learner":
                result.flags = integrity.flags(kata, self.shipped)
        speed = getattr(report, "kata_speed", None)
        if speed:
            result.speed.update(speed)
        growth = getattr(report, "kata_growth", "")
        if growth:
            result.growth = growth
        if report.when == "call" or report.outcome != "passed":
            if report.when == "teardown" and report.outcome == "skipped":
                return
            outcome = outcomes.TODO if getattr(report, "kata_todo", False) else report.outcome
            result.add(TestResult(
                nodeid=report.nodeid,
                location=(report.location[0], report.location[1]),
                outcome=outcome,
                message=getattr(report, "kata_message", ""),
                speed=getattr(report, "kata_speed_test", False),
            ))

    # --- the end of the run ----------------------------------------------------------------

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter, exitstatus, config):
        # Before pytest prints the failures: in file order, only each kata's first in full.
        self._shorten_failures(terminalreporter)
        yield
        if _is_xdist_worker(config):
            return
        if self._graded():
            write_table(
                terminalreporter,
                self.results,
                self.cached,
                self._why_no_speed,
                verbose=config.getoption("verbose") > 0,
            )
            if config.getoption("hint"):
                self._show_hint(terminalreporter)
        self._show_report(terminalreporter)

    def _graded(self):
        return bool(katas()) and (self.grading_katas or bool(self.results))

    def _hint_kata(self):
        """The kata chosen with --kata, else the first one not done."""
        if self.chosen:
            return self.chosen[0]
        return next((k for k in katas() if status_of(self.results, self.cached, k) != DONE), None)

    def _show_hint(self, tr):
        kata, revealed = self.revealed
        if kata is None:
            tr.write_line("Every kata is done: no hint needed.")
            return
        if revealed is None:
            tr.write_line(f"Kata {kata.slug} has no hints.")
            return
        number, total, text = revealed
        tr.write_sep("-", f"Hint {number} of {total} for kata {kata.slug}", yellow=True)
        tr.write_line(text)
        if number == total:
            tr.write_line("(that was the last hint: the next step is reference/ once the kata is done)")

    def _show_report(self, tr):
        outcome = getattr(self, "report_outcome", None)
        if outcome is None:
            return
        path, replaced, error = outcome
        if error:
            tr.write_line(f"Could not write the report {path}: {error}", red=True)
            return
        tr.write_line(f"Report written to {path}")
        if replaced:
            tr.write_line(f"(it replaced a report of {replaced!r} at that path)", yellow=True)

    def _shorten_failures(self, tr):
        failed = tr.stats.get("failed", [])
        if not failed:
            return
        order = {k.slug: k.number for k in katas()}
        failed.sort(key=lambda r: (order.get(getattr(r, "kata", None), 0), r.location[0], r.location[1] or 0))
        if self.config.getoption("verbose") > 0:
            return
        seen = set()
        for report in failed:
            slug = getattr(report, "kata", None)
            if slug is None:
                continue
            if slug in seen:
                report.longrepr = f"(shown in one line; -v shows it in full) {getattr(report, 'kata_message', '')}"
            seen.add(slug)

    def _why_no_speed(self, kata, result):
        if result is None:
            return ""
        if not _has_speed_test(kata):
            return "no speed test for this kata"
        if not any(t.speed for t in result.tests.values()):
            return "speed tests not run" if result.status == DONE else "measured once the tests pass"
        if not result.clean_so_far():
            return "measured once the tests pass"
        return "not measured in this run"

    def pytest_sessionfinish(self, session, exitstatus):
        # Everything that outlives the run happens here, on the controller under pytest-xdist
        # (its workers write nothing); the terminal summary, which comes later, only prints.
        if _is_xdist_worker(self.config):
            return
        self._remember_statuses()
        if self.config.getoption("hint") and self._graded():
            kata = self._hint_kata()
            self.revealed = (kata, None if kata is None else self.hints.reveal_next(kata))
        path = self.config.getoption("kata_report")
        if path:
            self.report_outcome = self._write_report(path)
        if self.config.getoption("kata_require_done") and session.exitstatus == 0:
            if not self._chosen_done():
                session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _chosen_done(self):
        """--kata-require-done: every kata chosen with --kata (else every kata) is done."""
        chosen = self.chosen or katas()
        return bool(chosen) and all(status_of(self.results, {}, k) == DONE for k in chosen)

    def _remember_statuses(self):
        # Remember the learner's progress (for --kata next and the katas a run skips);
        # a run on the reference solution says nothing about it.
        if getattr(self.config, "cache", None) is None or self.config.getoption("solution") != "learner":
            return
        statuses = dict(self.cached)
        for slug, result in self.results.items():
            if result.tests:
                statuses[slug] = result.status
        self.config.cache.set(CACHE_KEY, statuses)
        self.statuses = statuses

    def _write_report(self, path):
        """(path, the other learner whose report it replaced, error) after writing it."""
        shown = katas()
        data = json_report.build(
            shown,
            statuses={k.slug: status_of(self.results, self.cached, k) for k in shown},
            results=self.results,
            hints_used={k.slug: self.hints.count(k) for k in shown},
            hints_total={k.slug: len(load_hints(k)) for k in shown},
            learner=json_report.learner_name(self.config.getoption("kata_learner"), self.config.rootpath),
            solution=self.config.getoption("solution"),
        )
        if self.config.getoption("kata_report_format") == "gradescope":
            data = self._gradescope(data)
            if data is None:
                return path, None, self.gradescope_error
        try:
            return path, json_report.write(path, data), ""
        except OSError as exc:  # a bad path fails the report, never the grading
            return path, None, f"{type(exc).__name__}: {exc.strerror or exc}"

    def _gradescope(self, report):
        from . import gradescope

        try:
            settings = gradescope.course_settings(self.config.rootpath)
        except ValueError as error:
            self.gradescope_error = f"course settings: {error}"
            return None
        return gradescope.results(report, settings, per_test=self.config.getoption("kata_report_per_test"))

    def kata_result(self, kata):
        return self.results.setdefault(kata.slug, KataResult(kata.slug))


# Test files whose results fill the speed column: time ratios, memory peaks, transfer counts.
SPEED_COLUMN_FILES = ("test_*speed*.py", "test_*memory*.py", "test_*transfers*.py")


def _has_speed_test(kata):
    return any(any(kata.folder.glob(pattern)) for pattern in SPEED_COLUMN_FILES)


def _is_xdist_worker(config):
    return hasattr(config, "workerinput")
