"""The grading session: the pytest hooks that turn a test run into a kata report.

Each hook has one job: tag items with their kata, pick the katas to run, run each test on
the right pieces, turn stubs into to-dos, collect results, print the table.
"""
import functools

import pytest

from ..guards import (integrity, interrupts, learner_output, partial_runs, patches, stack_watch, tamper, time_limit,
                      tracers, tripwire)
from . import conclusion, graph_picture, outcomes, say_once, shown_source
from .hints import HintBook
from ..manifest import find_kata, learner_file_paths, kata_for_path, katas, unknown_kata
from ..state import GRAPH_PAGES_DIR, KATA_KEY, STATUS_CACHE_KEY
from .results import DONE, KataResult, TestResult, status_of
from .speed import SPEED_KEY



def _failure_key(item):
    """Where a failure sorts in the summary (as _shorten_failures sorts a kata's failures)."""
    return (item.location[0], item.location[1] or 0)


def _quick_repr_failure(item, excinfo):
    """Python's own traceback of a failure that will be shown in one line: the same crash
    line (the one line, and the JSON report's message, come from it) without pytest's
    source parsing."""
    return item._repr_failure_py(excinfo, style="native")


def _todo_repr(excinfo):
    """No traceback for a test that reached a stub: its report only says so (see
    pytest_runtest_makereport). A stub that is a method (katas 07 and 08) raises its own
    NotImplementedError, which pytest would otherwise trace in full, parsing the source of
    each frame, only for the report to throw it away: 70 tests of a fresh clone."""
    return outcomes.todo_reason(excinfo)
HYPOTHESIS_EXAMPLES = "_hypothesis_failing_examples"  # _hypothesis_pytestplugin.FAILING_EXAMPLES_KEY
SPEED_FIXTURE = "speed"
GRAPH_SECTION = "The graph as a picture, yours and torch's"
FUZZ_FIXTURE = "fuzz"
# --tb styles that print a failure's message in full (E lines): not "line" (its first line) or "no"
FAILURE_SHOWN = ("auto", "long", "short", "native")


class Grading:
    def __init__(self, config):
        self.config = config
        self.results = {}  # slug -> KataResult
        self.learner_paths = learner_file_paths()
        self.cached = config.cache.get(STATUS_CACHE_KEY, {}) if getattr(config, "cache", None) else {}
        self.grading_katas = False  # no table for a run without kata tests (the kit's own)
        self.hints = HintBook(getattr(config, "cache", None))
        self.chosen = []  # the katas named with --kata, in order
        self._chosen_slugs_cache = None
        self.shipped = integrity.anchored()  # hashes of the shipped test files, as installed
        self.collected = {}  # slug -> the kata's items before any deselection
        self.selection = {}  # slug -> (why only part of its tests run, or "", how many run)
        self.tampered = set()  # the grader's functions found replaced (flags the whole run)
        self.run_flags = []
        self.first_failures = {}  # slug -> the (file, line) of its first failure in file order so far
        self.hinted = set()  # the katas whose hint a failure of this run already carries
        # A supervised run's child (plugin/supervisor/): the supervisor prints the table, writes
        # the report and decides the exit status from what the child hands over.
        self.supervised_child = config.getoption("kata_child_fd", None) is not None

    # --- collection ----------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session, config, items):
        for item in items:
            kata = kata_for_path(item.path)
            if kata is not None:
                item.stash[KATA_KEY] = kata
                self._mark(item, kata)
                self.collected.setdefault(kata.slug, []).append(item)
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
        if not kata.exists():
            item.add_marker(pytest.mark.skip(reason=partial_runs.missing_file(kata)))

    def _chosen_slugs(self, config):
        """The katas named with --kata (None when it was not given), resolved once; "next" is
        the first kata not done, as remembered."""
        if self._chosen_slugs_cache is None:
            wanted = config.getoption("kata") or []
            if not wanted:
                return None
            chosen = set()
            for spec in wanted:
                if spec == "next":
                    kata = next((k for k in katas() if status_of({}, self.cached, k) != DONE), None)
                else:
                    kata = find_kata(spec)
                if kata is None and spec != "next":
                    raise pytest.UsageError(f"--kata {spec}: {unknown_kata(spec)}")
                if kata is not None and kata.slug not in chosen:
                    chosen.add(kata.slug)
                    self.chosen.append(kata)
            self._chosen_slugs_cache = chosen
        return self._chosen_slugs_cache

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session):
        self._chosen_slugs(session.config)  # an unknown --kata: a usage error, before collecting

    def pytest_ignore_collect(self, collection_path, config):
        """Under --kata, the other katas' test files are not even imported: one kata's
        feedback should not wait for every kata's imports (torch, hypothesis strategies)."""
        chosen = self._chosen_slugs(config)
        if chosen is None or collection_path.suffix != ".py":
            return None
        kata = kata_for_path(collection_path)
        if kata is not None and kata.slug not in chosen:
            return True
        return None

    def _select(self, config, items):
        chosen = self._chosen_slugs(config)
        if chosen is None:
            return
        keep, drop = [], []
        for item in items:
            kata = item.stash.get(KATA_KEY, None)
            (keep if kata is None or kata.slug in chosen else drop).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep

    def pytest_collection_finish(self, session):
        # After every plugin deselected what it would (-k, --deselect, --lf, ...): which
        # katas run only part of their shipped tests. Each process that collects (each
        # pytest-xdist worker) finds the same; the reports carry it to the controller.
        # Speed tests only measure: a run without them still grades the whole kata.
        chosen = {}
        for item in session.items:
            kata = item.stash.get(KATA_KEY, None)
            if kata is not None:
                chosen.setdefault(kata, []).append(item)
        for kata, items in chosen.items():
            graded = [i for i in items if not _is_speed_test(i)]
            collected = [i for i in self.collected.get(kata.slug, []) if not _is_speed_test(i)]
            why = partial_runs.why_partial(kata, collected, graded, self.config.args, self._last_failed_only())
            self.selection[kata.slug] = (why, len(graded))

    def _last_failed_only(self):
        """--lf with failures remembered: pytest collects only those."""
        plugin = self.config.pluginmanager.get_plugin("lfplugin")
        return bool(self.config.getoption("lf", False) and getattr(plugin, "lastfailed", None))

    @staticmethod
    def _speed_tests_last(items):
        """Within each kata, the fuzz test runs after the correctness tests and the speed
        tests after it (each waits for the tests before it)."""
        first_seen = {}
        keyed = []
        for index, item in enumerate(items):
            kata = item.stash.get(KATA_KEY, None)
            group = first_seen.setdefault(kata.slug if kata else index, index)
            rank = 2 if _is_speed_test(item) else 1 if FUZZ_FIXTURE in getattr(item, "fixturenames", ()) else 0
            keyed.append(((group, rank, index), item))
        return [item for _, item in sorted(keyed, key=lambda pair: pair[0])]

    # --- reports ---------------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        kata = item.stash.get(KATA_KEY, None)
        if kata is not None:
            outcomes.give_every_frame_a_line(call.excinfo)
            # No "apply this patch to your tests" section from hypothesis: the learner's task
            # is the piece, and the shrunk example is already in the failure.
            item.__dict__.pop(HYPOTHESIS_EXAMPLES, None)
        at_stub = kata is not None and outcomes.reached_stub(call.excinfo, self.learner_paths)
        explained = None
        if kata is not None and call.excinfo is not None and not at_stub:
            say_once.plainer_failure(call.excinfo.value)
            # The learner's error a test raised its failure from: under the kit's sentence, once.
            outcomes.learners_error_under(call.excinfo.value, self.learner_paths)
            # The piece behind an error raised far from it, named in the error's own words
            # (pytest shows them in full, and the one line comes from them).
            explained = outcomes.explained(call.excinfo, self.learner_paths)
            if explained:
                outcomes.reword(call.excinfo.value, outcomes.without_own_type(call.excinfo.value, explained))
        quick = kata is not None and not at_stub and self._shown_in_one_line(item, kata, call)
        if at_stub or quick:
            item.repr_failure = _todo_repr if at_stub else functools.partial(_quick_repr_failure, item)
        try:
            report = yield
        finally:
            if at_stub or quick:
                del item.repr_failure
        if kata is None:
            return report
        first_of_kata = False
        if report.failed and call.when == "call":
            first = self.first_failures.get(kata.slug)
            first_of_kata = first is None
            self.first_failures[kata.slug] = min(first, _failure_key(item)) if first else _failure_key(item)
        report.kata = kata.slug
        report.kata_speed_test = SPEED_FIXTURE in item.fixturenames
        learner_output.cut_sections(report)
        patched = patches.found()
        if patched:  # travels with the report (the file was imported where the test ran)
            report.kata_patches = patched
        report.kata_selection, report.kata_selected = self.selection.get(kata.slug, ("", 0))
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
            return report
        if time_limit.ran_away(call.excinfo):
            # A skip-type exception only so that hypothesis stops: the test failed.
            report.outcome = "failed"
            report.longrepr = item.repr_failure(call.excinfo)
            report.kata_message = str(call.excinfo.value)
        elif call.excinfo is not None and call.excinfo.errisinstance(interrupts.RaisedInterrupt):
            report.kata_message = str(call.excinfo.value)
        if report.failed:
            # Each thing once: the test's source without the words its message says, the
            # engine named as the learner's (shown_source.py).
            engine = shown_source.LEARNER_ENGINE if self.config.getoption("solution") == "learner" else shown_source.MODEL_ENGINE
            shown_source.tidy(report.longrepr, self.learner_paths, engine)
            if explained and not getattr(report, "kata_message", None):
                report.kata_message = explained
            report.kata_message = outcomes.verdict(report)
            import_error = say_once.learner_file_message(call.excinfo)
            if import_error:  # one sentence, no frames: the learner's file is at fault
                report.longrepr = report.kata_message = import_error
                report.kata_import_error = True
            recursion = outcomes.recursion_failure(call.excinfo)
            if recursion and not self.config.getoption("fulltrace", False):
                report.longrepr = recursion
            if first_of_kata:
                self._draw_graph(report, kata, call.excinfo)
            # The hint once per run, under the kata's first failure: the seen one that fits it.
            hint = None if kata.slug in self.hinted else self.hints.current(kata, report.nodeid, report.kata_message)
            if hint:
                self.hinted.add(kata.slug)
                report.sections.append((say_once.HINT_SECTION, hint))
        return report

    def _draw_graph(self, report, kata, excinfo):
        """The kata's first wrong gradient as a page with both graphs (graph_picture.py); the
        failure says where it is."""
        picture = getattr(excinfo.value, "picture", None) if excinfo is not None else None
        if picture is None:
            return
        path = self.config.getoption("kata_html")
        if not path and getattr(self.config, "cache", None) is not None:
            path = self.config.cache.mkdir(GRAPH_PAGES_DIR) / f"{kata.slug}.html"
        if not path:
            return
        try:
            written = graph_picture.write_page(picture, path)
        except OSError as error:  # a page that cannot be written costs the picture, not the grade
            report.sections.append((GRAPH_SECTION, f"could not write {path}: {error}"))
            return
        report.sections.append((GRAPH_SECTION, f"{written.as_uri()}  (open it in a browser, or run: katas show {kata.number})"))

    def _shown_in_one_line(self, item, kata, call):
        """Whether this failing test's traceback will be replaced by its one line at the end
        (see _shorten_failures): a failure of the same kata earlier in file order (or of a
        variant of the same test that ran before it) is shown in full instead. Known here, before pytest builds the traceback: pytest's long form
        parses the source file of each frame again, some 15-25 ms a failure, and a kata in
        progress can fail 60 tests."""
        if call.when != "call" or call.excinfo is None or call.excinfo.errisinstance(pytest.skip.Exception):
            return False
        if self.config.getoption("verbose") > 0 or self.config.getoption("tbstyle", "auto") != "auto":
            return False
        first = self.first_failures.get(kata.slug)
        return first is not None and first <= _failure_key(item)

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
        for flag in getattr(report, "kata_patches", {}).get(slug, []):
            if flag not in result.flags:
                result.flags.append(flag)
        self._note_checks(result, report)
        speed = getattr(report, "kata_speed", None)
        if speed:
            result.speed.update(speed)
            result.speed_note = getattr(report, "kata_speed_note", "") or result.speed_note
            result.speed_why = getattr(report, "kata_speed_why", "") or result.speed_why
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
                printed=report.failed and self.config.getoption("tbstyle", "auto") in FAILURE_SHOWN,
            ))

    def _note_checks(self, result, report):
        """What a report tells beyond its outcome: the kata's selection (partial runs), the
        reference pieces the learner's code ran, the grader's functions found replaced."""
        result.selection = result.selection or getattr(report, "kata_selection", "")
        result.crash = result.crash or getattr(report, "kata_crash", "")  # a worker died (parallel.py)
        result.selected = max(result.selected, getattr(report, "kata_selected", 0))
        found = [tripwire.flag(name) for name in getattr(report, "kata_delegated", ())]
        if getattr(report, "kata_tracers", None):
            found.append(tracers.flag(report.kata_tracers))
        if getattr(report, "kata_stack_peek", None):  # a speed or growth test (grading/speed.py)
            found.append(stack_watch.flag(report.kata_stack_peek))
        result.flags.extend(flag for flag in dict.fromkeys(found) if flag not in result.flags)
        self.tampered.update(getattr(report, "kata_tampered", ()))

    # --- the end of the run ----------------------------------------------------------------

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter, exitstatus, config):
        # Before pytest prints the failures: in file order, only each kata's first in full.
        self._shorten_failures(terminalreporter)
        with say_once.said_once(terminalreporter.stats) as every_failure, \
                say_once.no_short_summary_of_katas(terminalreporter, every_failure):
            yield
        if _is_xdist_worker(config):
            return
        if self._graded():
            if not self.supervised_child:
                conclusion.show_table(terminalreporter, config, self.results, self.cached, self.run_flags,
                                      chosen=self.chosen)
            if config.getoption("hint"):
                self._show_hint(terminalreporter)
        conclusion.show_report(terminalreporter, getattr(self, "report_outcome", None))

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
        tr.write_sep("-", f"Hint {revealed.number} of {revealed.total} for kata {kata.slug}", yellow=True)
        first = self._first_failure(kata)
        if revealed.matched and first is not None:
            tr.write_line(f"(for your first failure, {first.nodeid.split('::')[-1]}; "
                          f"you have seen {revealed.seen} of the {revealed.total} hints)")
        elif first is not None:  # said, so a general hint is not read as one about the failure
            tr.write_line(f"(no hint you have not seen yet is about your first failure, "
                          f"{first.nodeid.split('::')[-1]}: this is the next in order; "
                          f"you have seen {revealed.seen} of the {revealed.total} hints)")
        tr.write_line(revealed.text)
        if revealed.seen == revealed.total:
            tr.write_line("(that was the last hint: the next step is the model solution in reference/solutions/, once the kata is done)")

    @pytest.hookimpl(wrapper=True)
    def pytest_report_header(self, config):
        lines = yield
        return say_once.without_benchmark_header(config, lines)

    def _first_failure(self, kata):
        result = self.results.get(kata.slug)
        return None if result is None else result.first_failure()

    def _shorten_failures(self, tr):
        failed = tr.stats.get("failed", [])
        order = {k.slug: k.number for k in katas()}
        failed.sort(key=lambda r: (order.get(getattr(r, "kata", None), 0), r.location[0], r.location[1] or 0))
        # A learner's printed output: once per kata (pytest prints errors, then failures).
        learner_output.once_per_kata(tr.stats.get("error", []) + failed)
        if not failed:
            return
        if self.config.getoption("verbose") > 0:
            return
        seen = set()
        for report in failed:
            slug = getattr(report, "kata", None)
            if slug is None:
                continue
            if slug in seen:  # the table lists it in one line, once (say_once.said_once)
                report.kata_one_line = True
            seen.add(slug)

    def pytest_sessionfinish(self, session, exitstatus):
        # Everything that outlives the run happens here, on the controller under pytest-xdist
        # (its workers write nothing); the terminal summary, which comes later, only prints.
        if _is_xdist_worker(self.config):
            return
        self._flag_the_run()
        self._remember_statuses()
        if self.config.getoption("hint") and self._graded():
            kata = self._hint_kata()
            first = None if kata is None else self._first_failure(kata)
            failure = (first.nodeid, first.message) if first is not None else ("", "")
            self.revealed = (kata, None if kata is None else self.hints.reveal_next(kata, *failure))
        if self.supervised_child:
            return  # the supervisor writes the report and decides the exit status
        if self.config.getoption("kata_report"):
            hints_used = {k.slug: self.hints.count(k) for k in katas()}
            self.report_outcome = conclusion.write_report(self.config, self.results, self.cached, hints_used, self.run_flags)
            if self.report_outcome[2] and session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED  # asked for, not written

        if self.config.getoption("kata_require_done") and session.exitstatus == 0:
            if not conclusion.chosen_done(self.chosen, self.results):
                session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_unconfigure(self, config):
        """--kata-require-done: the run's very last line says why it exits 1 (a Classroom or
        CI log shows the end: "14 passed" alone reads as a success). A supervised run's
        supervisor says it instead."""
        if not config.getoption("kata_require_done") or _is_xdist_worker(config) or not self._graded():
            return
        if self.supervised_child:
            return
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        line = conclusion.not_done_line(self.chosen, self.results)
        if reporter is not None and line:
            reporter.write_line(line, red=True, bold=True)

    def _flag_the_run(self):
        """A run whose grader was changed proves nothing: every kata that ran is flagged."""
        checks = self.config.pluginmanager.get_plugin("autograd-katas-report-checks")
        if checks is not None:
            self.tampered.update(checks.tampered())
        self.run_flags = [tamper.flag(sorted(self.tampered))] if self.tampered else []
        for result in self.results.values():
            result.flags.extend(flag for flag in self.run_flags if flag not in result.flags)

    def _remember_statuses(self):
        # Remember the learner's progress (for --kata next and the katas a run skips);
        # a run on the reference solution says nothing about it.
        if getattr(self.config, "cache", None) is None or self.config.getoption("solution") != "learner":
            return
        statuses = dict(self.cached)
        for slug, result in self.results.items():
            kata = find_kata(slug)
            if not result.tests or kata is None or not kata.exists():
                continue
            # A partial run tells that a kata is not done (a test failed), never that it is.
            if not result.partial or result.tested_status != DONE:
                statuses[slug] = result.status
        self.config.cache.set(STATUS_CACHE_KEY, statuses)
        self.statuses = statuses

    def kata_result(self, kata):
        return self.results.setdefault(kata.slug, KataResult(kata.slug))


def _is_speed_test(item):
    return SPEED_FIXTURE in getattr(item, "fixturenames", ())


def _is_xdist_worker(config):
    return hasattr(config, "workerinput")
