"""Kata 07 (retain_graph) through the grading plugin, on a copy of its folder (pytester)."""
import re

from kit import assert_done, assert_stubs_all_todo, kata_row, learner_source, row_line, write_learner_file

KATA = "07_retain_graph"

# A correct solution written differently from reference/solutions/saved.py: one list of records
# (tensor, version, is_output) instead of parallel tuples, a None list as the released state,
# and the error messages assembled from a dtype table keyed by the dtype's name.
ALTERNATIVE = '''
import weakref

from plugin import engine as ag

_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed). Saved intermediate values of the graph "
          "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
          "you need to backward through the graph a second time or if you need to access saved "
          "tensors after calling backward.")
_KINDS = {"float32": "Float", "float64": "Double", "int64": "Long"}  # int64: a saved index


class SavedTensors:
    def __init__(self, owner):
        self.owner = weakref.ref(owner)
        self.records = []

    def save(self, *tensors):
        node = self.owner()
        for t in tensors:
            if t is None:
                self.records.append((None, None, False))
            elif t.grad_fn is not None and t.grad_fn is node:
                self.records.append((t.detach(), t._version, True))
            else:
                self.records.append((t, t._version, False))

    def unpack(self):
        if self.records is None:
            raise RuntimeError(_FREED)
        node = self.owner()
        out = []
        for t, version, mine in self.records:
            if t is None:
                out.append(None)
                continue
            if t._version != version:
                producer = node if mine else t.grad_fn
                where = ""
                if producer is not None:
                    op = producer.name().replace("Backward", "", 1)  # MaxBackward1: Max1
                    if op.endswith("0"):  # only an overload 0 is left out: PowBackward0 is Pow
                        op = op[:-1]
                    where = ", which is output 0 of " + op + ","
                kind = _KINDS.get(str(t.dtype).replace("torch.", ""), "Float")
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by "
                    f"an inplace operation: [torch.{kind}Tensor {list(t.shape)}]{where} is at "
                    f"version {t._version}; expected version {version} instead."
                )
            out.append(ag.reattach(t, node) if mine else t)
        return tuple(out)

    def release(self):
        self.records = None
'''


def test_the_stubs_are_all_todo(checkout):
    outcomes = assert_stubs_all_todo(checkout.runpytest("--kata", "7"), KATA)
    assert outcomes.get("todo", 0) >= 20, outcomes


def test_the_reference_solution_is_done(checkout):
    assert_done(checkout.runpytest("--kata", "7", "--solution", "reference", "-p", "no:randomly"), KATA)


def test_a_correct_solution_written_differently_is_done(checkout):
    write_learner_file(checkout, KATA, "saved.py", ALTERNATIVE)
    result = checkout.runpytest("--kata", "7")
    assert result.ret == 0, result.stdout.str()
    assert kata_row(result, KATA)[1] == "done"
    assert "compare with the reference solution in reference/solutions/saved.py" in result.stdout.str()


def test_a_release_that_keeps_the_tensors_is_told_so(checkout):
    """The classic slip: release() only sets a flag, so the arrays live as long as the graph."""
    source = learner_source("saved")
    wrong = source.replace("        self._tensors = self._versions = self._outputs = None\n", "")
    assert wrong != source
    write_learner_file(checkout, KATA, "saved.py", wrong)
    result = checkout.runpytest("--kata", "7", "-v")
    out = result.stdout.str()
    assert result.ret == 1
    assert kata_row(result, KATA)[1] == "in progress"
    assert "test_saved_arrays_die_after_a_backward_without_retain FAILED" in out
    assert "release() must drop every reference to them" in out
    assert "test_peak_memory_of_training_steps FAILED" in out
    assert "the saved arrays of step 1's graph are still alive after its" in out
    row = row_line(result, KATA)
    peak = re.search(r"peak memory (\d+\.\d+)x reference", row)
    assert peak and float(peak[1]) > 1.5, row
    # the errors themselves are still right
    assert "test_a_second_backward_raises_torchs_error PASSED" in out


def test_a_saved_output_kept_as_is_is_told_so(checkout):
    """Saving the node's own output without detaching it: node -> output -> node."""
    source = learner_source("saved")
    wrong = source.replace("        if True in outputs:\n", "        if False:\n").replace(
        "reattach(t, owner) if is_output else t", "t")
    assert wrong.count("if False") == 1
    write_learner_file(checkout, KATA, "saved.py", wrong)
    result = checkout.runpytest("--kata", "7", "-v")
    out = result.stdout.str()
    assert result.ret == 1
    assert "test_a_saved_output_does_not_keep_itself_alive FAILED" in out
    assert "a saved output must be kept detached (t.detach())" in out
