"""The grader checks itself: learner code that replaces the grader's own functions (say
`Oracle.check_grads = lambda *a: None`) could make any kata pass, and so could learner code
that changes its settings (the oracle's tolerances, widened, let 115 of 123 wrong tests
pass). At the start of a run the plugin notes every function and class of its grading
modules (and the methods of those classes), every other public value of those modules, and
what the public dicts, lists and sets among them hold; after each kata test, and at the end,
it compares; a run where one changed is flagged as a whole, and the originals are put back
when the run ends.

A signpost, like the rest of integrity: Python lets determined code change anything.
"""
import copy
import importlib
import inspect
import sys

# The modules whose functions decide a grade.
GRADING_MODULES = (
    "plugin.grading.assembly", "plugin.grading.conclusion", "plugin.grading.fixtures", "plugin.grading.graph_view",
    "plugin.grading.hints", "plugin.grading.oracle", "plugin.grading.outcomes",
    "plugin.grading.results", "plugin.grading.session", "plugin.grading.speed",
    "plugin.grading.table", "plugin.guards.integrity", "plugin.guards.partial_runs",
    "plugin.guards.tamper", "plugin.guards.tripwire", "plugin.reports.json_report",
    "plugin.supervisor.child", "plugin.supervisor.records", "plugin.grading.gpu_check",
    "plugin.guards.tracers", "plugin.grading.course",
    "reference.pieces",
)
CONTENTS = "contents"  # the third part of the key under which a container's contents are noted


def _watched(value):
    return inspect.isfunction(value) or inspect.isclass(value) or isinstance(
        value, (property, staticmethod, classmethod))


def snapshot(imported_only=False):
    """{(owner, name): value} for the grading modules' functions and classes, and the
    methods and properties of the classes they define. `imported_only`: of the modules
    already imported (pytest-xdist's controller, which runs no learner code, need not import
    the oracle, and torch with it)."""
    noted = {}
    for module_name in GRADING_MODULES:
        if imported_only and module_name not in sys.modules:
            continue
        module = importlib.import_module(module_name)
        for name, value in list(vars(module).items()):
            if not _watched(value):
                continue
            noted[(module, name)] = value
            if inspect.isclass(value) and value.__module__ == module_name:
                for attr, member in list(vars(value).items()):
                    if _watched(member) or inspect.isfunction(member):
                        noted[(value, attr)] = member
        for name, value in list(vars(module).items()):  # its settings: public values
            if name.startswith("_") or _watched(value) or inspect.ismodule(value):
                continue
            noted[(module, name)] = value
            if isinstance(value, (dict, list, set)):
                noted[(module, name, CONTENTS)] = copy.copy(value)
    return noted


def _differs(key, value):
    owner, name = key[:2]
    current = vars(owner).get(name, _MISSING)
    if len(key) == 2:
        return current is not value
    try:
        return current is _MISSING or bool(current != value)
    except Exception:  # a comparison that fails: the contents are not what they were
        return True


_MISSING = object()


def _label(owner, name):
    where = owner.__name__ if inspect.ismodule(owner) else f"{owner.__module__}.{owner.__qualname__}"
    return f"{where}.{name}"


def changed(noted):
    """Names of the noted functions and values that are no longer what they were, in a stable
    order."""
    return sorted({_label(*key[:2]) for key, value in noted.items() if _differs(key, value)})


def restore(noted):
    """Put every noted function and value back (a run inside another, as in the kit's own
    tests, must not leave the outer one changed)."""
    for key, value in noted.items():
        if len(key) == 2 and vars(key[0]).get(key[1]) is not value:
            setattr(key[0], key[1], value)
    for key, value in noted.items():
        container = vars(key[0]).get(key[1])
        if len(key) == 3 and _differs(key, value) and isinstance(container, (dict, list, set)):
            container.clear()
            (container.extend if isinstance(container, list) else container.update)(value)


def flag(names):
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return f"the grader's own functions or settings were changed: {shown}"
