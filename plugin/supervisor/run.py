"""The supervisor of a supervised run: pytest as a child process, its results from records.

`pytest --kata-supervised` (and `--kata-report`, `--kata-require-done`, which imply it) runs
this instead of the tests (plugin/__init__.py's pytest_cmdline_main): it starts the same
pytest command as a child (processes.py) that hands its results over (child.py), relays the
child's output, and watches it:

- a kata that runs past the hard limit (--kata-hard-limit: a loop inside C code, a timer
  cancelled by the learner's code) has its process group killed: that kata is "timed out";
- a child that dies (a segfault, os._exit, the memory limit met in C code) marks the kata it
  was grading "crashed";
- either way, the katas not graded yet are graded in a fresh child;
- after the session's end record the child gets a moment to finish printing, then it and
  whatever it started (a thread that keeps it alive, a daemon) are ended.

Then it prints the table, writes the report, remembers the crashed katas and returns the exit
status, all from the records it received (never from the child's exit status). Ctrl-C stops
the child and the run.
"""
import codecs
import hashlib
import os
import selectors
import signal
import sys
import time
from dataclasses import dataclass, field

import pytest

from .. import manifest
from ..grading import conclusion
from ..grading.results import KataResult, TestResult
from ..guards import integrity
from ..state import STATUS_CACHE_KEY
from . import processes, records

AFTER_END_S = 60.0  # after the end record: the child prints its summary, then exits
AFTER_BYE_S = 2.0  # after pytest is done: what keeps the process alive is not pytest's
MIN_HARD_LIMIT_S = 120.0


class Stopped(Exception):
    """SIGTERM reached the supervisor (watch mode ending it, a closed terminal)."""


def wanted(config):
    """Whether this pytest should supervise its own run (see plugin/__init__.py)."""
    option = config.option
    if getattr(option, "kata_child_fd", None) is not None or not sys.platform.startswith(("linux", "darwin")):
        return False
    if any(getattr(option, name, False) for name in (
            "help", "version", "collectonly", "showfixtures", "show_fixtures_per_test", "markers")):
        return False
    if getattr(option, "kata_supervised", False):
        return True
    if getattr(option, "kata_in_process", False):
        return False
    return bool(getattr(option, "kata_report", None) or getattr(option, "kata_require_done", False))


def hard_limit(config):
    chosen = config.getoption("kata_hard_limit", None)
    return chosen if chosen else max(MIN_HARD_LIMIT_S, 10 * config.getoption("kata_timeout"))


@dataclass
class ChildOutcome:
    """What one child told, and how it ended."""
    plan: dict = None  # slug -> tests, once collected
    grading: bool = False  # the child collected kata tests (the run shows the table)
    cached: dict = field(default_factory=dict)
    hints: dict = field(default_factory=dict)
    running: dict = field(default_factory=dict)  # slug -> the test that started last
    started: dict = field(default_factory=dict)  # slug -> when its first test started
    tested: dict = field(default_factory=dict)  # slug -> [TestResult] so far
    finished: dict = field(default_factory=dict)  # slug -> KataResult
    finished_at: dict = field(default_factory=dict)  # slug -> when its record came
    tampered: set = field(default_factory=set)
    end: dict = None
    bye: bool = False
    timed_out: str = None  # the slug of the kata that ran past the hard limit
    stalled: bool = False  # the child ran past the hard limit with no kata in flight
    lingered: bool = False  # the child did not end after its session had
    returncode: int = None
    unreadable: int = 0  # lines that were not records

    def in_flight(self):
        return [slug for slug in self.started if slug not in self.finished]


class Child:
    """One child pytest: its output relayed to ours, its records read, its limits watched."""

    def __init__(self, command, cwd, env, limit_s, memory_mb, out):
        self.command, self.cwd, self.env = command, cwd, env
        self.limit_s, self.memory_mb, self.out = limit_s, memory_mb, out
        self.outcome = ChildOutcome()
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.pending = b""

    def run(self):
        read_end, write_end = os.pipe()
        try:
            process = processes.start([*self.command, f"--kata-child-fd={write_end}"], self.cwd, self.env,
                                      self.memory_mb, pass_fds=(write_end,))
        finally:
            os.close(write_end)
        try:
            self._watch(process, read_end)
        except BaseException:
            processes.interrupt_group(process)
            try:
                process.wait(timeout=2)
            except BaseException:
                pass
            raise
        finally:
            processes.end_group(process)
            self.outcome.returncode = process.wait()
            os.close(read_end)
            process.stdout.close()
        return self.outcome

    def _watch(self, process, read_end):
        selector = selectors.DefaultSelector()
        selector.register(process.stdout, selectors.EVENT_READ, "output")
        selector.register(read_end, selectors.EVENT_READ, "records")
        began = time.monotonic()
        ended_at = None  # when the child's process ended
        while True:
            now = time.monotonic()
            deadline, why = self._deadline(began)
            if now >= deadline:
                if why == "kata":
                    self.outcome.timed_out = min(self.outcome.in_flight(), key=self.outcome.started.get)
                elif why == "idle":
                    self.outcome.stalled = True
                else:
                    self.outcome.lingered = True
                processes.end_group(process)
                deadline = now + 1.0
            if ended_at is None and process.poll() is not None:
                ended_at = now
                processes.end_group(process)  # what it started and left behind in its group
            if ended_at is not None and (not selector.get_map() or now - ended_at > 1.0):
                return
            wait = max(0.0, min(deadline - now, 0.2))
            for key, _ in selector.select(wait):
                data = os.read(key.fileobj if isinstance(key.fileobj, int) else key.fileobj.fileno(), 65536)
                if not data:
                    selector.unregister(key.fileobj)
                elif key.data == "output":
                    self._relay(data)
                else:
                    self._receive(data)
            if not selector.get_map() and ended_at is None:
                try:
                    process.wait(timeout=min(max(deadline - time.monotonic(), 0.0), 0.2))
                except Exception:
                    pass

    def _deadline(self, began):
        """(when the child must be stopped, why): a kata's hard limit, the time to start, or
        the grace after its session ended."""
        outcome = self.outcome
        if outcome.bye:
            return outcome.bye + AFTER_BYE_S, "after"
        if outcome.end is not None:
            return outcome.end["received"] + AFTER_END_S, "after"
        flying = outcome.in_flight()
        if flying:
            return min(outcome.started[slug] for slug in flying) + self.limit_s, "kata"
        return max([began, *outcome.finished_at.values()]) + self.limit_s, "idle"

    def _relay(self, data):
        self.out.write(self.decoder.decode(data))
        self.out.flush()

    def _receive(self, data):
        self.pending += data
        *lines, self.pending = self.pending.split(b"\n")
        if len(self.pending) > records.MAX_LINE:
            self.pending = b""
            self.outcome.unreadable += 1
        for line in lines:
            record = records.decode(line)
            if record is None:
                self.outcome.unreadable += bool(line.strip())
                continue
            try:
                self._note(record)
            except (KeyError, TypeError, ValueError, AttributeError):
                self.outcome.unreadable += 1

    def _note(self, record):
        outcome, event, now = self.outcome, record["event"], time.monotonic()
        if outcome.bye or (outcome.end is not None and event != "bye"):
            return  # nothing after the end counts
        if event == "plan":
            outcome.plan = {str(k): int(v) for k, v in record["katas"].items()}
            outcome.cached = {str(k): str(v) for k, v in (record.get("cached") or {}).items()}
            outcome.hints = {str(k): int(v) for k, v in (record.get("hints") or {}).items()}
            outcome.grading = bool(record.get("grading"))
        elif event == "running":
            outcome.running[str(record["kata"])] = str(record["test"])
            outcome.started.setdefault(str(record["kata"]), now)
        elif event == "tested":
            outcome.tested.setdefault(str(record["kata"]), []).append(records.to_test(record["test"]))
        elif event == "kata":
            outcome.finished[str(record["kata"])] = records.to_kata(record["result"])
            outcome.finished_at[str(record["kata"])] = now
            outcome.tampered.update(str(name) for name in record.get("tampered") or [])
        elif event == "end":
            results = {str(slug): records.to_kata(data) for slug, data in record["results"].items()}
            outcome.end = {"received": now, "exitstatus": int(record["exitstatus"]), "results": results,
                           "run_flags": [str(flag) for flag in record.get("run_flags") or []]}
        elif event == "bye":
            outcome.bye = now


def _crash_sentence(outcome, slug, limit_s):
    test = outcome.running.get(slug, "")
    where = f" (while running {test.split('::', 1)[-1]})" if test else ""
    if outcome.timed_out == slug:
        return (f"timed out: kata {slug} ran past its hard limit of {limit_s:g} s{where} and its process "
                "was stopped: a loop that the per-test time limit cannot interrupt (inside C code, or "
                "with the timer cancelled)?")
    return (f"crashed: the grading process {processes.describe_exit(outcome.returncode)} while it graded "
            f"kata {slug}{where}; the other katas were graded in a fresh process")


def _crashed_result(outcome, slug, sentence):
    """The result of a kata whose process died: the tests it finished, then the crash."""
    result = KataResult(slug)
    for test in outcome.tested.get(slug, []):
        result.add(test)
    nodeid = outcome.running.get(slug) or f"katas/{slug}"
    result.add(TestResult(nodeid=nodeid, location=(nodeid.split("::")[0], 10 ** 9), outcome="failed", message=sentence))
    result.crash = sentence
    return result


def _without_kata_options(args):
    """The command line without its --kata choices (a fresh child names the katas left)."""
    kept, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--kata":
            skip = True
        elif not arg.startswith("--kata="):
            kept.append(arg)
    return kept


def learner_file_hashes():
    """{slug: sha256 of its learner file, or None when it is missing}."""
    found = {}
    for kata in manifest.katas():
        try:
            found[kata.slug] = hashlib.sha256(kata.path.read_bytes()).hexdigest()
        except OSError:
            found[kata.slug] = None
    return found


class Supervisor:
    def __init__(self, config, out=None):
        self.config = config
        self.out = out or sys.stdout
        self.limit_s = hard_limit(config)
        self.results = {}  # slug -> KataResult, the run's
        self.crashed = {}  # slug -> sentence
        self.cached, self.hints, self.run_flags, self.tampered = {}, {}, [], set()
        self.exitstatus = None  # from the last end record
        self.unreadable = 0
        self.graded_katas = False
        self.plan = None  # the first child's: the katas this run chose, and their tests

    def run(self):
        config = self.config
        args = list(config.invocation_params.args)
        command = [sys.executable, "-m", "pytest", *args]
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        if self.out.isatty():
            env.setdefault("PY_COLORS", "1")
            env.setdefault("COLUMNS", str(os.get_terminal_size(self.out.fileno()).columns))
        before = learner_file_hashes()
        static_flags = self._static_flags()
        strays = processes.Strays()
        handlers = {}
        if _main_thread():  # Ctrl-C stops the run even where SIGINT was ignored by whoever started it
            handlers = {signal.SIGTERM: signal.signal(signal.SIGTERM, _on_sigterm),
                        signal.SIGINT: signal.signal(signal.SIGINT, signal.default_int_handler)}
        try:
            plan = None
            while True:
                outcome = Child(command, str(config.invocation_params.dir), env, self.limit_s,
                                config.getoption("kata_memory_limit"), self.out).run()
                strays.end()
                plan = self.plan = self._gather(outcome, plan)
                if outcome.end is not None:
                    break
                left = [slug for slug in (plan or {}) if slug not in self.results]
                if not outcome.in_flight() or not left or self._stops_at_first_failure():
                    if not outcome.in_flight():  # no kata to blame: no fresh start either
                        why = "ran past the hard limit" if outcome.stalled else processes.describe_exit(outcome.returncode)
                        self._say(f"The grading process {why} outside any kata's tests: the katas it had "
                                  "not graded were not graded.", red=True)
                    break
                command = [sys.executable, "-m", "pytest", *_without_kata_options(args),
                           *[option for slug in left for option in ("--kata", slug)]]
        except (KeyboardInterrupt, Stopped):
            self._say("Stopped: the grading process was ended; no report written.", red=True)
            return pytest.ExitCode.INTERRUPTED
        finally:
            strays.end()
            strays.close()
            for number, handler in handlers.items():
                signal.signal(number, handler)
        self._flag(static_flags, before)
        return self._conclude()

    def _stops_at_first_failure(self):
        return bool(self.config.getoption("exitfirst", False) or self.config.getoption("maxfail", 0))

    def _static_flags(self):
        """The integrity flags of every learner file, read before any of its code runs (the
        child reads them after: by then the file may have rewritten itself)."""
        if self.config.getoption("solution") != "learner":
            return {}
        shipped = integrity.anchored()
        return {k.slug: integrity.flags(k, shipped) for k in manifest.katas() if k.exists()}

    def _gather(self, outcome, plan):
        """Add one child's results to the run's; the plan of the first child that told one."""
        plan = plan if plan is not None else outcome.plan
        self.graded_katas = self.graded_katas or outcome.grading
        if outcome.plan is not None and not self.cached and not self.hints:
            self.cached, self.hints = outcome.cached, outcome.hints
        self.tampered |= outcome.tampered
        self.unreadable += outcome.unreadable
        if outcome.end is None:  # the child died before its summary: it printed none of its failures
            for test in [t for r in outcome.finished.values() for t in r.tests.values()] + \
                    [t for tests in outcome.tested.values() for t in tests]:
                test.printed = False
        self.results.update(outcome.finished)
        if outcome.lingered:
            self._say("The grading process did not end after grading (a thread that a learner file "
                      "started, still running?): it was stopped.", yellow=True)
        if outcome.end is not None:
            self.results.update(outcome.end["results"])
            self.run_flags = outcome.end["run_flags"]
            self.exitstatus = outcome.end["exitstatus"]
            return plan
        for slug in outcome.in_flight():
            sentence = _crash_sentence(outcome, slug, self.limit_s)
            self.crashed[slug] = sentence
            self.results[slug] = _crashed_result(outcome, slug, sentence)
        return plan

    def _flag(self, static_flags, before):
        """Flags no child can hide: the learner files' own (read before the run), a learner file
        changed while the kit graded, the grader's functions found replaced."""
        from ..guards import tamper

        after = learner_file_hashes()
        run_flags = list(self.run_flags)
        if self.tampered:
            flag = tamper.flag(sorted(self.tampered))
            if flag not in run_flags:
                run_flags.append(flag)
        self.run_flags = run_flags
        for slug, result in self.results.items():
            extra = list(static_flags.get(slug, []))
            if before.get(slug) != after.get(slug) and self.config.getoption("solution") == "learner":
                extra.append("its learner file changed while the kit graded it (the kit grades the file as it was)")
            for flag in extra + run_flags:
                if flag not in result.flags:
                    result.flags.append(flag)

    def _say(self, text, **markup):
        from _pytest._io import TerminalWriter

        TerminalWriter(self.out).line(text, **markup)

    def _conclude(self):
        config = self.config
        tr = _Lines(self.out)
        if self.graded_katas and manifest.katas():
            conclusion.show_table(tr, config, self.results, self.cached, self.run_flags, chosen=self._chosen())
        if self.unreadable:
            tr.write_line(f"({self.unreadable} lines on the results pipe were not records, and were skipped)",
                          yellow=True)
        report = None
        if config.getoption("kata_report"):
            report = conclusion.write_report(config, self.results, self.cached, self.hints, self.run_flags)
            conclusion.show_report(tr, report)
        self._remember_crashes()
        status = self._exit_status(report)
        if config.getoption("kata_require_done") and status == pytest.ExitCode.TESTS_FAILED:
            # the log's last line says why (a Classroom log shows the end)
            line = conclusion.not_done_line(self._chosen(), self.results)
            if line:
                tr.write_line(line, red=True, bold=True)
        return status

    def _chosen(self):
        """The katas chosen with --kata, as the child resolved them ("next"), else none."""
        if not self.config.getoption("kata"):
            return []
        return [k for k in (manifest.find_kata(s) for s in self.plan or {}) if k is not None]

    def _exit_status(self, report):
        failed = any(t.outcome == "failed" for r in self.results.values() for t in r.tests.values())
        if self.exitstatus in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR,
                               pytest.ExitCode.USAGE_ERROR) and not failed:
            return self.exitstatus
        if failed or self.crashed or self.exitstatus is None or (report and report[2]):
            return pytest.ExitCode.TESTS_FAILED
        if self.config.getoption("kata_require_done"):
            # The katas chosen with --kata, as the child resolved them ("next"), else every kata.
            if not conclusion.chosen_done(self._chosen(), self.results):
                return pytest.ExitCode.TESTS_FAILED
        return self.exitstatus

    def _remember_crashes(self):
        """A crashed kata is remembered as in progress (the child could not say so)."""
        if not self.crashed or self.config.getoption("solution") != "learner":
            return
        try:
            from _pytest.cacheprovider import Cache

            cache = Cache.for_config(self.config, _ispytest=True)
            statuses = dict(cache.get(STATUS_CACHE_KEY, {}) or {})
            statuses.update({slug: "in progress" for slug in self.crashed})
            cache.set(STATUS_CACHE_KEY, statuses)
        except Exception:  # no cache (-p no:cacheprovider, a read-only clone): nothing remembered
            pass


class _Lines:
    """The part of pytest's terminal reporter that the table and the report's lines use."""

    def __init__(self, out):
        from _pytest._io import TerminalWriter

        self.tw = TerminalWriter(out)

    def write_sep(self, sep, title=None, **markup):
        self.tw.sep(sep, title, **markup)

    def write_line(self, line, **markup):
        self.tw.line(line, **markup)

    def write(self, text, **markup):
        self.tw.write(text, **markup)


def _main_thread():
    import threading

    return threading.current_thread() is threading.main_thread()


def _on_sigterm(signum, frame):
    raise Stopped()


def supervise(config):
    """Run the grading of `config`'s command line under the supervisor; its exit status."""
    from ..grading.options import check_report_path

    check_report_path(config)
    previous = manifest.use_root(config.rootpath)
    manifest.forget_learner_file_paths()
    try:
        return Supervisor(config).run()
    finally:
        manifest.use_root(previous)
