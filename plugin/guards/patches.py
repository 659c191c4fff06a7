"""Learner files that patch the engine, numpy or torch: found, named, and put back.

Every learner file runs in the grader's process. One that replaces `numpy.exp` or
`ag.Tensor.backward` when it is imported changes the engine for every kata graded after it,
whose tests then fail with messages that never mention the file that did it. So the grader
takes a snapshot of what a file could patch before importing it and compares after: each
change is named in a flag on that file's kata (which is then not counted as done) and put
back, so that the other katas, and the kata's own tests, run on the real engine.

What is watched: the public API learner files import (`plugin.engine`), the attributes of
the reference engine's modules and the methods of their classes (Tensor, Node, ...), the
active pieces, and the namespaces of numpy and torch (the oracle's side). A module that
appears as a new attribute is a submodule imported late, not a patch.
"""
import sys
import types

_MISSING = object()
_found = {}  # kata slug -> sentences naming what its learner file patched


def forget():
    _found.clear()


def found():
    """{kata slug: [flag sentence]} for the learner files imported so far in this process."""
    return {slug: list(flags) for slug, flags in _found.items()}


def _namespaces():
    """(label, holder, mapping) for everything watched; `holder` gets setattr on undo."""
    from reference import pieces

    watched = []
    engine = sys.modules.get("plugin.engine")
    if engine is not None:
        watched.append(("ag", engine, vars(engine)))
    for name, module in sorted(sys.modules.items()):
        if (name == "reference" or name.startswith("reference.")) and module is not None:
            watched.append((name, module, vars(module)))
            for value in list(vars(module).values()):
                if isinstance(value, type) and value.__module__ == name:
                    watched.append((value.__name__, value, vars(value)))
    watched.append(("the active pieces", pieces.active, vars(pieces.active)))
    for name in ("numpy", "numpy.random", "numpy.linalg", "torch", "torch.autograd"):
        module = sys.modules.get(name)
        if module is not None:
            watched.append((name, module, vars(module)))
    torch = sys.modules.get("torch")
    if torch is not None:
        watched.append(("torch.Tensor", torch.Tensor, vars(torch.Tensor)))
    return watched


def snapshot():
    """What every watched namespace holds now (name -> object, compared by identity). A
    module's private names are its state (the seed of ag.randn, ...), not its API."""
    return [
        (label, holder, {n: v for n, v in mapping.items() if _watched(holder, n)})
        for label, holder, mapping in _namespaces()
    ]


def _watched(holder, name):
    return isinstance(holder, type) or not name.startswith("_")


def undo(before):
    """Put back every change since `before`; returns the names changed ("numpy.exp"), and
    those that could not be put back."""
    changed, stuck = [], []
    for label, holder, saved in before:
        now = {n: v for n, v in vars(holder).items() if _watched(holder, n)}
        names = [n for n in saved if now.get(n, _MISSING) is not saved[n] and not _reimported(saved[n], now.get(n))]
        names += [n for n in now if n not in saved and not isinstance(now[n], types.ModuleType)]
        for name in sorted(names):
            changed.append(f"{label}.{name}")
            try:
                if name in saved:
                    setattr(holder, name, saved[name])
                else:
                    delattr(holder, name)
            except (AttributeError, TypeError):
                stuck.append(f"{label}.{name}")
    return changed, stuck


def _reimported(before, now):
    """A submodule imported again (its sys.modules entry gone, by a test that reloads the kit):
    the package's attribute is the new module, no patch."""
    return (isinstance(before, types.ModuleType) and isinstance(now, types.ModuleType)
            and before.__name__ == now.__name__)


def record(kata, changed, stuck):
    """Flag `kata` for what its learner file patched."""
    names = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
    fate = ("could not all be put back: other katas may fail because of it" if stuck
            else "put back, so that every kata runs on the real ones")
    _found.setdefault(kata.slug, []).append(
        f"{kata.learner_file} patches {names} when imported ({fate})"
    )
