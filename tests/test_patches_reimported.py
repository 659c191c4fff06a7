"""A learner file is flagged for what it patches (plugin/guards/patches.py); a submodule of the
kit imported a second time in the same process (its sys.modules entry removed by a kit test
that reloads modules) is no patch, though the package's attribute is then a new module (under
xdist the order of tests made a kata 09 file 'patch reference.solutions.higher_order')."""
import importlib
import sys

from plugin.guards import patches


def test_a_submodule_imported_again_is_no_patch():
    name = "reference.solutions.higher_order"
    importlib.import_module(name)
    before = patches.snapshot()
    old = sys.modules.pop(name)
    try:
        importlib.import_module(name)  # the package's attribute now holds the new module
        changed, stuck = patches.undo(before)
        assert not [c for c in changed if c.endswith(".higher_order")], changed
    finally:
        sys.modules[name] = old
        setattr(sys.modules["reference.solutions"], "higher_order", old)


def test_a_function_replaced_in_a_module_is_still_one():
    import reference.solutions.higher_order as module

    before = patches.snapshot()
    original = module.jacobian
    module.jacobian = lambda f, x: None
    changed, stuck = patches.undo(before)
    assert "reference.solutions.higher_order.jacobian" in changed and module.jacobian is original
