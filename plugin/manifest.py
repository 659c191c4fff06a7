"""The katas the kit knows: one entry each. Adding a kata is adding one `Kata(...)` line.

A kata lives in `katas/NN_slug/`: README.md (the lesson), the learner's file, graded tests
(test_*.py), hints.md. `pieces` are the names the learner's file provides that the engine
calls through its seam; `functions` are names the tests call directly (katas 09 and 10,
written on the engine's public API).
"""
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KATAS_DIR = ROOT / "katas"


def use_root(rootpath):
    """Grade the katas under `rootpath` (pytest's rootdir): a learner's clone, or a copy of
    it in a test of the kit. Returns the root used before, to restore it."""
    global KATAS_DIR
    previous = KATAS_DIR.parent
    if (Path(rootpath) / "katas").is_dir():
        KATAS_DIR = Path(rootpath).resolve() / "katas"
    return previous


@dataclass(frozen=True)
class Kata:
    number: int
    name: str
    learner_file: str
    pieces: tuple = ()
    functions: tuple = ()
    reference_module: str = ""  # the reference piece a finished learner compares with
    whole_engine: bool = False  # the capstone runs on every learner piece
    changes_arguments: tuple = ()  # functions whose contract changes what they are given

    @property
    def slug(self):
        return f"{self.number:02d}_{self.name}"

    @property
    def folder(self):
        return KATAS_DIR / self.slug

    @property
    def path(self):
        return self.folder / self.learner_file

    @property
    def lesson(self):
        return self.folder / "README.md"

    @property
    def hints(self):
        return self.folder / "hints.md"

    def present(self):
        """The kata is part of this checkout: its folder is there."""
        return self.folder.is_dir()

    def exists(self):
        """Its learner file is there (a kata whose file was renamed or deleted stays in the
        table as "learner file missing", with the command that restores the stub)."""
        return self.path.exists()

    @property
    def restore_command(self):
        return f"katas reset {self.number}"


ALL_KATAS = (
    Kata(1, "elementwise_rules", "rules.py", pieces=(
        "add_backward", "sub_backward", "mul_backward", "div_backward", "neg_backward",
        "pow_backward", "exp_backward", "log_backward", "sigmoid_backward", "tanh_backward",
        "relu_backward",
    ), reference_module="reference/solutions/rules.py"),
    Kata(2, "shapes", "shapes.py", pieces=(
        "unbroadcast", "sum_backward", "mean_backward", "max_backward", "reshape_backward",
        "transpose_backward", "matmul_backward", "getitem_backward",
    ), reference_module="reference/solutions/shapes.py"),
    Kata(3, "toposort", "toposort.py", pieces=("topological_order",),
         reference_module="reference/solutions/toposort.py"),
    Kata(4, "accumulation", "accumulate.py", pieces=("merge_grads", "accumulate_grad"),
         reference_module="reference/solutions/accumulate.py"),
    Kata(5, "seeding", "seeding.py", pieces=("make_root_grads",),
         reference_module="reference/solutions/seeding.py"),
    Kata(6, "backward_pass", "backward_pass.py", pieces=("run_backward",),
         reference_module="reference/solutions/backward_pass.py"),
    Kata(7, "retain_graph", "saved.py", pieces=("SavedTensors",),
         reference_module="reference/solutions/saved.py"),
    Kata(8, "devices", "devices.py", pieces=(
        "Device", "array_module", "transfer", "check_same_device", "to_backward",
    ), reference_module="reference/solutions/devices.py"),
    Kata(9, "higher_order", "higher_order.py",
         functions=("jacobian", "hessian_vector_product", "gradient_penalty"),
         reference_module="reference/solutions/higher_order.py"),
    Kata(10, "capstone", "capstone.py", whole_engine=True, functions=(
        "mlp_forward", "cross_entropy", "sgd_step", "train", "multitask_sequential",
        "multitask_summed", "grads_all_at_once", "grads_one_by_one",
    ), changes_arguments=("sgd_step",), reference_module="reference/solutions/capstone.py"),
)


def katas():
    """The katas present in this checkout (their folder is there), in order; a kata whose
    learner file is missing is one of them."""
    return [k for k in ALL_KATAS if k.present()]


def kata_for_path(path):
    """The kata whose folder holds `path`, or None."""
    path = Path(path).resolve()
    for kata in ALL_KATAS:
        if kata.folder == path or kata.folder in path.parents:
            return kata
    return None


def find_kata(spec):
    """A kata from what a learner types: "3", "03", "toposort" or "03_toposort"."""
    text = str(spec).strip().lower()
    for kata in katas():
        if text.isdigit() and int(text) == kata.number:
            return kata
        if text in (kata.name, kata.slug):
            return kata
    return None


def unknown_kata(spec):
    """What to tell someone who named a kata that does not exist: the names that do."""
    return f"no such kata {spec!r} (the katas: {', '.join(k.slug for k in katas())})"


_learner_paths = {}  # katas folder -> the resolved paths of its learner files


def learner_file_paths():
    """The learner files of every kata present (to recognise a stub's NotImplementedError),
    found once per run and katas folder: every kata test asks twice (its pieces, its timer),
    and finding them costs a quarter of a millisecond, 0.3 s of a whole run."""
    folder = KATAS_DIR
    if folder not in _learner_paths:
        _learner_paths[folder] = frozenset(k.path.resolve() for k in katas())
    return _learner_paths[folder]


def forget_learner_file_paths():
    """Find the learner files afresh (a new run, or a new checkout in the kit's own tests)."""
    _learner_paths.clear()
