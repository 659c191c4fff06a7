"""The grader checks itself: learner code that replaces the grader's own functions (say
`Oracle.check_grads = lambda *a: None`) could make any kata pass. At the start of a run the
plugin notes every function and class of its grading modules (and the methods of those
classes); after each kata test, and at the end, it compares; a run where one changed is
flagged as a whole, and the originals are put back when the run ends.

A signpost, like the rest of integrity: Python lets determined code change anything.
"""
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
    "plugin.supervisor.child", "plugin.supervisor.records",
    "reference.pieces",
)


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
    return noted


def _label(owner, name):
    where = owner.__name__ if inspect.ismodule(owner) else f"{owner.__module__}.{owner.__qualname__}"
    return f"{where}.{name}"


def changed(noted):
    """Names of the noted functions that are no longer what they were, in a stable order."""
    missing = object()
    return sorted(_label(owner, name) for (owner, name), value in noted.items()
                  if vars(owner).get(name, missing) is not value)


def restore(noted):
    """Put every noted function back (a run inside another, as in the kit's own tests,
    must not leave the outer one changed)."""
    for (owner, name), value in noted.items():
        if vars(owner).get(name) is not value:
            setattr(owner, name, value)


def flag(names):
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return f"the grader's own functions were replaced: {shown}"
