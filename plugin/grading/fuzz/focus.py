"""What each kata's fuzz test draws: a vocabulary of programs aimed at the kata's pieces.

Each kata's builder is the kit's fuzzer (api.Builder: its names, devices and aliases) with a
mix of steps of its own: the steps that exercise the kata's pieces come often, the values
where bugs hide come among the ordinary ones (0 and -0.0, inf and nan, magnitudes near exp's
overflow at 700 and beyond 1e30, subnormals, ties, empty and one-element tensors,
non-contiguous views), and operations mostly take the latest results, so that chains and
second derivatives form within a dozen steps.

A builder draws from a `random.Random` (`rng`): a kata's graded run draws a fixed number of
programs from a fixed seed, fast and the same every run. `BUILDERS` maps a kata's number to
its builder, `PROGRAMS` to the number of programs its graded run draws (its time budget).
"""
import random

import numpy as np
import torch

from .. import device_strings
from .api import SAME_DEVICE_ERROR, Builder, Step, canonical

INF, NAN = float("inf"), float("nan")
ORDINARY = [-2.0, -1.0, -0.5, 0.5, 1.0, 1.5, 2.0, 3.0]
EDGES = [0.0, -0.0, INF, -INF, NAN, 700.0, -700.0, 1e30, -1e30, 1e-30, 1e-40]
NUMBERS = [0, 0.0, -0.0, 1, 2, 3, -1, 0.5, 2.5, -1.5, 1e30, 1e-40, True]
SMOOTH_NUMBERS = [1, 2, 3, -1, 0.5, 2.5, -1.5, True]
FLOAT_DTYPES = ["float32", "float64"]
HOOKS = ["lambda g: g * 2", "lambda g: None", "lambda g: g + 1", "lambda g: g * 0"]


def literal(value):
    """Python source for a number or nested list (nan and inf spelled so that they run)."""
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, float) and value != value:
        return "float('nan')"
    if isinstance(value, float) and value in (INF, -INF):
        return "float('inf')" if value > 0 else "-float('inf')"
    if isinstance(value, (int, float)) and not isinstance(value, bool) and (value < 0 or str(value).startswith("-")):
        return f"({value!r})"  # -2 ** x is -(2 ** x): a negative number keeps its parentheses
    return repr(value)


def _leaves(t):
    """The ids of the leaves that require grad in torch's graph behind `t`."""
    found, stack, seen = set(), [t.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        variable = getattr(node, "variable", None)
        if variable is not None:
            found.add(id(variable))
        stack.extend(child for child, _ in node.next_functions)
    return found


class NothingToPick(Exception):
    """A step drew from an empty choice (no tensor of the kind it needs yet)."""


class Focus(Builder):
    """The kit's fuzzer with a kata's own mix of steps (`KINDS`: step -> weight) and values,
    drawn from `rng`."""

    KINDS = {}
    SHAPES = [(), (1,), (3,), (2, 3), (0,), (2, 0), (1, 3), (3, 1)]
    DTYPES = FLOAT_DTYPES
    VALUES = ORDINARY * 2 + EDGES
    DEVICES = ["cpu"]
    REQUIRES_GRAD = 0.75  # the share of new tensors that require grad
    EDGY = True  # some programs at the edges (0, inf, nan, ...); False: every program smooth

    def __init__(self, engine, rng):
        super().__init__(engine)
        self.rng = rng
        # Each program draws from a few edge values of its own: an edge then comes often
        # enough in one program to meet the operation it breaks.
        ordinary = [v for v in self.VALUES if v not in EDGES]
        edges = [v for v in self.VALUES if v in EDGES or v != v]
        self.pool = ordinary + rng.sample(edges, min(3, len(edges))) * 2 if edges else ordinary
        # A program is either smooth (ordinary values, second derivatives) or at the edges
        # (0, inf, nan, ..., first derivatives only): at a singular point a second derivative
        # is the formula's choice (grad / x and grad * (1 / x) part there, both right), while a
        # first derivative is the rule's, as torch's.
        self.smooth = not self.EDGY or rng.random() < 0.5
        if self.smooth:
            self.pool = ordinary
        self.numbers = rng.sample(SMOOTH_NUMBERS if self.smooth else NUMBERS, 5)
        self.last_grads = []  # the names autograd.grad's latest step gave
        self.zero_signs = False  # first derivatives show the sign of zero gradients (kata 01)
        self.queue = []  # the next steps of a scenario: functions of the builder that give a Step

    def then(self, *steps):
        """Queue a scenario's next steps (each a function of the builder, drawn when its turn
        comes, so that it sees what the steps before it made); the first one now."""
        self.queue[:0] = steps[1:]
        return steps[0](self)

    def next_step(self):
        if self.queue:  # the rest of a scenario
            try:
                step = self.queue.pop(0)(self)
            except NothingToPick:
                step = None
            return step if step is not None else self.create()
        kinds = list(self.KINDS) if self.floats() else ["create"] + [k for k in self.KINDS if k.startswith("scenario")]
        weights = [self.KINDS.get(kind, 1) for kind in kinds]
        try:
            step = getattr(self, self.rng.choices(kinds, weights)[0])()
        except NothingToPick:
            step = None
        return step if step is not None else self.create()

    # --- drawing --------------------------------------------------------------------------

    def pick(self, options):
        options = list(options)
        if not options:
            raise NothingToPick  # this step does not fit the namespace yet: next_step draws another
        return self.rng.choice(options)

    def integer(self, low, high):
        return self.rng.randint(low, high)

    def chance(self, p):
        return self.rng.random() < p

    def draw(self, strategy):
        raise TypeError("a Focus builder draws from its rng: write the step with pick, integer, chance")

    # --- what the namespace holds -----------------------------------------------------------

    def floats(self, where=lambda name, t: True):
        return self.tensors(lambda n, t: t.dtype in (torch.float32, torch.float64) and where(n, t))

    def recent(self, names):
        """One of `names`, most often one of the latest three: chains of operations."""
        if len(names) > 3 and self.chance(0.6):
            names = names[-3:]
        return self.pick(names)

    def with_graph(self):
        return self.floats(lambda n, t: t.grad_fn is not None)

    def leaves(self):
        return self.floats(lambda n, t: t.is_leaf and t.requires_grad)

    def leaves_of(self, name):
        """The names of the leaves that require grad behind tensor `name`."""
        ids = _leaves(self.engine.names[name])
        return [n for n in self.leaves() if id(self.engine.names[n]) in ids]

    def same_device(self, name):
        device = self.device(name)
        return lambda n, t: self.device(n) == device

    def dtype_of(self, name):
        return "lib." + str(self.engine.names[name].dtype).replace("torch.", "")

    # --- creation ---------------------------------------------------------------------------

    def values(self, shape, pool=None):
        pool = pool or self.pool
        flat = [self.pick(pool) for _ in range(int(np.prod(shape)))]
        return np.array(flat, dtype=object).reshape(shape).tolist() if shape else flat[0]

    def tensor_code(self, shape, dtype=None, requires_grad=None, device=None, pool=None):
        """(the reference's code, torch's code, torch's device) of a new tensor."""
        dtype = dtype or self.pick(self.DTYPES)
        args = [literal(self.values(shape, pool)), f"dtype=lib.{dtype}"]
        if 0 in shape and len(shape) > 1:  # a nested empty list loses the shape: [] is (0,)
            args[0] = ", ".join(map(str, shape))
            function = "zeros"
        else:
            function = "tensor"
        if requires_grad if requires_grad is not None else self.chance(self.REQUIRES_GRAD):
            args.append("requires_grad=True")
        device = device or self.pick(self.DEVICES)
        mine = args + ([f"device={device!r}"] if device != "cpu" else [])
        return f"lib.{function}({', '.join(mine)})", f"lib.{function}({', '.join(args)})", canonical(device)

    def create(self, shape=None, **options):
        name = self.new_name()
        code, torch_code, device = self.tensor_code(shape if shape is not None else self.pick(self.SHAPES), **options)
        return Step(f"{name} = {code}", f"{name} = {torch_code}", {name: device})

    # --- operations -------------------------------------------------------------------------

    def elementwise(self):
        """a op b: a tensor with a tensor of its shape, or with a number on either side."""
        left = self.recent(self.floats())
        op = self.pick(["+", "-", "*", "/", "**"])
        shape = self.engine.names[left].shape
        partners = self.floats(lambda n, t: t.shape in (shape, ()) and n != left and self.device(n) == self.device(left))
        if partners and self.chance(0.5):
            right = self.pick(partners)
            tensors = [left, right]
        else:
            right = literal(self.pick(self.numbers))
            tensors = [left]
        if self.chance(0.25) and not (op == "**" and right == "True"):  # True ** x: torch's own internal error
            left, right = right, left
        if op in ("*", "/"):  # this engine saves both operands, torch only what a gradient needs
            self.saved_needlessly.update(t for t in tensors if not all(
                self.engine.names[o].requires_grad for o in tensors if o != t) or len(tensors) == 1)
        return self.result(self.new_name(), f"{left} {op} {right}", tensors)

    def rule(self):
        x = self.recent(self.floats())
        op = self.pick(["exp", "log", "sigmoid", "tanh", "relu", "neg"])
        return self.result(self.new_name(), f"-{x}" if op == "neg" else f"{x}.{op}()", [x])

    def grad_of(self, create_graph=None, allow_unused=True):
        """g, ... = autograd.grad(y.sum(), [leaves of y], ...): first derivatives and, on a
        gradient made with create_graph, second ones."""
        candidates = self.with_graph()
        if not candidates:
            return None
        y = self.recent(candidates)
        leaves = self.leaves_of(y)
        if not leaves:
            return None
        inputs = sorted({self.pick(leaves) for _ in range(self.integer(1, 2))})
        create_graph = self.smooth and (self.chance(0.7) if create_graph is None else create_graph)
        names = [self.new_name("g") for _ in inputs]
        self.viewed.update(names)
        self.grad_results.update(names)
        options = ", create_graph=True" if create_graph else ", retain_graph=True"
        if allow_unused:
            options += ", allow_unused=True"
        code = f"{', '.join(names)}, = lib.autograd.grad({y}.sum(), [{', '.join(inputs)}]{options})"
        return Step(code, devices={n: self.device(i) for n, i in zip(names, inputs)})

    def backward_of(self):
        """y.sum().backward() or y.backward(a gradient of y's shape), graphs kept."""
        candidates = self.with_graph()
        if not candidates:
            return None
        y = self.recent(candidates)
        options = ["retain_graph=True"]
        if self.smooth and self.chance(0.3):
            options.append("create_graph=True")
        if self.chance(0.5):
            return Step(f"{y}.sum().backward({', '.join(options)})")
        t = self.engine.names[y]
        code, torch_code, _ = self.tensor_code(tuple(t.shape), dtype=self.dtype_of(y)[4:], requires_grad=False,
                                               device=self.device(y))
        return Step(f"{y}.backward({code}, {', '.join(options)})", f"{y}.backward({torch_code}, {', '.join(options)})")

    def change_in_place(self):
        """An in-place change, under no_grad, of a tensor a node may have saved: the next
        backward through that node must fail with torch's error, or not fail, as torch's."""
        candidates = [n for n in self.floats() if n not in self.viewed and n not in self.grad_results
                      and n not in self.saved_needlessly]
        if not candidates:
            return None
        x = self.recent(candidates)
        return Step(f"with lib.no_grad():\n    {x}.{self.pick(['mul_(2)', 'add_(1)', 'zero_()'])}")


    # --- scenarios: a few steps that take one operation through one question ---------------------

    CONTINUATIONS = {"first_derivative": 2, "second_derivative": 2, "backward_then_create_graph": 1,
                     "changed_between_passes": 1}

    def input_step(self, name, shape, dtype, device, pool=None, requires_grad=True):
        """A new tensor `name`, its values from `pool` or from a regime drawn for it."""
        def step(builder):
            values = pool or (ORDINARY if builder.smooth else REGIMES[builder.pick(list(REGIMES))])
            code, torch_code, where = builder.tensor_code(shape, dtype, requires_grad, device, pool=values)
            return Step(f"{name} = {code}", f"{name} = {torch_code}", {name: where})
        return step

    def forward_step(self, out, expression, tensors, view=False, needless=()):
        """out = expression, once its operands exist (else nothing)."""
        def step(builder):
            if any(t not in builder.engine.names for t in tensors):
                return None
            builder.saved_needlessly.update(needless)
            return builder.result(out, expression, tensors, view=view)
        return step

    def continuation(self, out, inputs):
        """The steps after a scenario's forward: one of CONTINUATIONS."""
        kinds = [k for k in self.CONTINUATIONS if self.smooth or k not in SECOND_ORDER]
        chosen = self.rng.choices(kinds, [self.CONTINUATIONS[k] for k in kinds])[0]
        return getattr(self, chosen)(out, inputs)

    def has_graph(self, name):
        t = self.engine.names.get(name)
        return isinstance(t, torch.Tensor) and t.grad_fn is not None

    def seed_code(self, name):
        """(mine, torch's) code of a gradient for tensor `name`: values from a seed regime."""
        t = self.engine.names[name]
        seeds = SEED_REGIMES[self.pick(["ones", "ordinary"] if self.smooth else list(SEED_REGIMES))]  # finite
        code, torch_code, _ = self.tensor_code(tuple(t.shape), str(t.dtype)[6:], False, self.device(name), seeds)
        return code, torch_code

    def first_derivative(self, out, inputs):
        """g... = autograd.grad(out, inputs, a gradient for out); each g turned into 1 / g
        where the scenario's rule passes the gradient on unchanged or negated (`zero_signs`):
        a zero gradient's sign shows only through a reciprocal (-grad and 0 - grad part there)."""
        zero_signs = self.zero_signs

        def step(builder):
            if not builder.has_graph(out):
                return None
            names = builder.grad_names(inputs)
            code, torch_code = builder.seed_code(out)
            call = f"{', '.join(names)}, = lib.autograd.grad({out}, [{', '.join(inputs)}], {{}}, allow_unused=True)"
            if zero_signs:
                call += "".join(f"\n{n} = 1 / {n} if {n} is not None else None" for n in names)
            return Step(call.format(code), call.format(torch_code), {n: builder.device(i) for n, i in zip(names, inputs)})
        return [step]

    def second_derivative(self, out, inputs):
        """Gradients with create_graph, then the gradient of their squares' sum."""
        def first(builder):
            return builder.grad_of_names(f"{out}.sum()", out, inputs, create_graph=True)

        def second(builder):
            grads = [n for n in builder.last_grads if builder.has_graph(n)]
            if not grads:
                return None
            total = " + ".join(f"({g} * {g}).sum()" for g in grads)
            return builder.grad_of_names(total, grads[0], inputs, create_graph=False)
        return [first, second]

    def backward_then_create_graph(self, out, inputs):
        """A plain backward, then a second derivative through the same graph."""
        return [self.backward_step(out)] + self.second_derivative(out, inputs)

    def changed_between_passes(self, out, inputs):
        """backward, an in-place change of what a node saved, backward again."""
        def change(builder):
            targets = [t for t in [out] + list(inputs) if t not in builder.saved_needlessly and t not in builder.viewed]
            if not targets:
                return None
            return Step(f"with lib.no_grad():\n    {builder.pick(targets)}.{builder.pick(['mul_(2)', 'add_(1)'])}")
        return [self.backward_step(out), change, self.backward_step(out)]

    def gradient_changed_in_place(self, out, inputs):
        """autograd.grad's results changed in place: torch refuses where a gradient is an
        expand whose elements share memory, and allows it where it is a tensor of its own."""
        def change(builder):
            grads = [g for g in builder.last_grads if isinstance(builder.engine.names.get(g), torch.Tensor)]
            if not grads:
                return None
            g = builder.pick(grads)
            step = Step(f"{g}.{builder.pick(['add_(1)', 'mul_(2)'])}")
            step.lenient = True  # see graded.py: torch's refusal there is a storage detail
            return step
        return self.first_derivative(out, inputs)[:1] + [change]

    def backward_step(self, out):
        def step(builder):
            return Step(f"{out}.sum().backward(retain_graph=True)") if builder.has_graph(out) else None
        return step

    def grad_names(self, inputs):
        names = [self.new_name("g") for _ in inputs]
        self.grad_results.update(names)
        self.viewed.update(names)
        self.last_grads = names
        return names

    def grad_of_names(self, expression, anchor, inputs, create_graph):
        """g... = autograd.grad(expression, inputs): None where anchor has no graph."""
        if not self.has_graph(anchor) or any(i not in self.engine.names for i in inputs):
            return None
        names = self.grad_names(inputs)
        option = "create_graph=True" if create_graph else "retain_graph=True"
        code = f"{', '.join(names)}, = lib.autograd.grad({expression}, [{', '.join(inputs)}], {option}, allow_unused=True)"
        return Step(code, devices={n: self.device(i) for n, i in zip(names, inputs)})


# --- kata 01: the elementwise rules ---------------------------------------------------------------

# Each rule's forms: `a` and `b` are tensors (b of a's shape, or 0-d), `N` a number.
RULE_FORMS = {
    "add": ["a + b", "a + N", "N + a"],
    "sub": ["a - b", "a - N", "N - a"],
    "mul": ["a * b", "a * N", "a * (-0.0)"],
    "div": ["a / b", "a / N", "N / a", "1 / a"],
    "neg": ["-a"],
    "pow": ["a ** b", "a ** b", "a ** N", "N ** a", "a ** 0", "a ** 2", "a ** 0.5", "a ** (-1)", "0 ** a",
            "(-2) ** a", "a ** True"],
    "exp": ["a.exp()"],
    "log": ["a.log()"],
    "sigmoid": ["a.sigmoid()"],
    "tanh": ["a.tanh()"],
    "relu": ["a.relu()"],
}
SINGULAR_FORMS = {"a * (-0.0)", "a ** 0", "0 ** a", "(-2) ** a", "a ** 0.5"}  # edges even at ordinary values
SECOND_ORDER = {"second_derivative", "backward_then_create_graph"}

# The values of a scenario's tensor (and of the gradient it receives) come from one regime:
# edges then meet edges (a tiny numerator over a subnormal divisor, an infinite gradient into a
# rule whose output is 0).
REGIMES = {
    "ordinary": ORDINARY,
    "edges": ORDINARY + EDGES,
    "tiny": [0.0, -0.0, 1e-30, -1e-30, 1e-40, 1e-310, 0.5, -1.0],  # 1e-40, 1e-310: subnormal in float32, float64
    "huge": [700.0, -700.0, 1e30, -1e30, INF, -INF, NAN, 2.0, -0.5],
}
# Incoming gradients stay finite: an inf or nan gradient meets the rule's formula in an order of
# its own (grad * 0 or a selection), where torch's choice is no contract. An inf that a chain
# makes (log of a relu's 0) still flows.
SEED_REGIMES = {"ones": [1.0], "ordinary": ORDINARY, "tiny": REGIMES["tiny"],
                "large": [700.0, -700.0, 1e30, -1e30, 2.0, -0.5]}


class Rules(Focus):
    """Every rule at the edges of its formula, to first and second order, on both devices:
    random chains, and scenarios that take one rule through a first derivative with an
    edge gradient, a second derivative, a backward then a create_graph pass, or a change
    in place between two backward passes."""

    KINDS = {"create": 1, "elementwise": 3, "rule": 3, "grad_of": 2, "backward_of": 1, "change_in_place": 1,
             "scenario": 10}
    SHAPES = [(), (1,), (3,), (2, 3), (0,)]
    SCENARIO_SHAPES = [(), (1,), (4,), (2, 3), (2, 4), (3, 4), (0,)]  # several values meet each edge at once
    DEVICES = ["cpu", "cpu", "cpu", "cuda"]

    def scenario(self):
        rule = self.pick(list(RULE_FORMS) + ["pow", "pow", "div"])  # pow has the most corners
        forms = [f for f in RULE_FORMS[rule] if not (self.smooth and f in SINGULAR_FORMS)]
        form = self.pick(forms).replace("N", literal(self.pick(self.numbers)))
        shape, dtype, device = self.pick(self.SCENARIO_SHAPES), self.pick(self.DTYPES), self.pick(self.DEVICES)
        a, b, out = self.new_name("a"), self.new_name("b"), self.new_name("y")
        inputs = [a] + ([b] if "b" in form else [])
        steps = [self.input_step(a, shape, dtype, device)]
        if b in inputs:
            steps.append(self.input_step(b, self.pick([shape, ()]), dtype, device))
        # the reference saves the partner of a number in * and / too (docs/known-differences.md)
        needless = [a] if "b" not in form and ("*" in form or "/" in form) else []
        steps.append(self.forward_step(out, form.replace("a", a, 1).replace(" b", " " + b), inputs, needless=needless))
        # rules whose gradient is the incoming one or its negative: its zeros keep or flip their
        # sign exactly as torch's (no formula in between to choose one)
        self.zero_signs = rule in ("add", "sub", "neg")
        try:
            return self.then(*steps, *self.continuation(out, inputs))
        finally:
            self.zero_signs = False


# --- kata 02: shapes ----------------------------------------------------------------------------

BROADCAST_PAIRS = [((2, 3), (3,)), ((2, 3), (1, 3)), ((2, 1), (1, 3)), ((0, 3), (1, 3)), ((2, 3), ()),
                   ((2, 1, 3), (4, 1)), ((3, 1), (3,)), ((1,), (0,)), ((2, 2), (2, 1)), ((1, 1), (2, 3))]
MATMUL_PAIRS = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 4)), ((2, 2, 3), (3, 4)),
                ((2, 3), (2, 3, 4)), ((2, 1, 2, 3), (2, 3, 1)), ((0, 3), (3, 2)), ((2, 0), (0, 3)),
                ((1, 3), (3, 1)), ((3,), (2, 3, 2))]
REDUCED_SHAPES = [(2, 3), (2, 3, 4), (2, 3, 4), (2, 1, 3, 2), (3,), (), (0, 3), (2, 0), (1, 3), (4, 1), (1,)]
TIES = [1.0, 2.0, 2.0, 3.0, 3.0, -1.0]  # max shares its gradient between tied elements
RESHAPES = {  # x of shape (2, 3) or (2, 3, 2): views, copies, and gradients that arrive non-contiguous
    (2, 3): ["x.reshape(3, 2)", "x.reshape(-1)", "x.view(3, 2)", "x.view(-1)", "x.T", "x.transpose(0, 1)",
             "x.transpose(-1, 0)", "x.reshape(3, 2).T", "x.T.reshape(-1)", "x.T.reshape(2, 3)",
             "x[:, 1:].reshape(-1)", "x.reshape(6, 1).transpose(0, 1)", "x.view(3, 2).transpose(0, 1).reshape(-1)",
             "x.reshape(1, 2, 3).transpose(0, 2)"],
    (2, 3, 2): ["x.reshape(6, 2)", "x.transpose(0, 2)", "x.transpose(1, 2).reshape(2, 6)", "x.reshape(-1, 3).T",
                "x.view(3, 4).transpose(-1, -2)", "x.transpose(0, 1).transpose(1, 2)"],
}
INDEXES = {  # x of shape (4,), (3, 4) or (2, 3, 4): numbers, slices, lists and tensors that repeat, masks
    (4,): ["[0]", "[-1]", "[1:]", "[[0, 0, 2]]", "[T([2, 0, 2, 2])]", "[T([True, False, True, True])]", "[T(1)]",
           "[[]]", "[::2]"],
    (3, 4): ["[0]", "[:, 0]", "[1:, -1]", "[[0, 0]]", "[[0, 1], [1, 1]]", "[:, [3, 0, 3]]", "[T([2, 2])]",
             "[T([[0, 1], [1, 1]])]", "[T([True, False, True])]", "[T(0), 1:]", "[..., 1]"],
    (2, 3, 4): ["[1]", "[:, 0]", "[0, :, [1, 1]]", "[[1, 0, 1]]", "[T([0, 0]), 1]", "[..., T([3, 3])]"],
}


class Shapes(Focus):
    """Broadcasting into every binary operation, reductions over dims and ties, views and
    copies with gradients that arrive non-contiguous, matmul's 1-D and batched cases,
    indexing that repeats: each scenario to first and second order, and gradients that
    later steps change in place."""

    KINDS = {"create": 1, "grad_of": 1, "backward_of": 1, "broadcast": 3, "reduce": 4, "reshape": 3,
             "matmul": 3, "index": 3}
    # Shapes route gradients: edge values would only test the arithmetic of the routing (a
    # scatter written as a product with a matrix of reads gives nan for an inf gradient).
    EDGY = False
    DEVICES = ["cpu", "cpu", "cpu", "cuda"]
    CONTINUATIONS = {"first_derivative": 3, "second_derivative": 2, "gradient_changed_in_place": 2,
                     "backward_then_create_graph": 1}

    def _scenario(self, shapes, make_expression, pool=None, view=False):
        dtype, device = self.pick(self.DTYPES), self.pick(self.DEVICES)
        names = [self.new_name(letter) for letter in "ab"[: len(shapes)]]
        out = self.new_name("y")
        steps = [self.input_step(n, shape, dtype, device, pool or ORDINARY) for n, shape in zip(names, shapes)]
        steps.append(self.forward_step(out, make_expression(*names), names, view=view))
        return self.then(*steps, *self.continuation(out, names))

    def broadcast(self):
        pair = self.pick(BROADCAST_PAIRS)
        if self.chance(0.5):
            pair = pair[::-1]
        op = self.pick(["+", "-", "*", "/"])
        return self._scenario(pair, lambda a, b: f"{a} {op} {b}")

    def reduce(self):
        shape = self.pick(REDUCED_SHAPES)
        ndim = max(len(shape), 1)
        op = self.pick(["sum", "mean", "max"])
        keep = self.pick(["", ", keepdim=True"])
        dims = [f"dim={self.integer(-ndim, ndim - 1)}"]
        if op != "max" and len(shape) >= 2:  # several dims, some counted from the end
            chosen = self.rng.sample(range(len(shape)), self.integer(2, len(shape)))
            chosen = [d - len(shape) if self.chance(0.3) else d for d in chosen]
            dims += [f"dim={tuple(chosen)!r}"] * 2
        call = self.pick([f"{op}()"] + [f"{op}({d}{keep})" for d in dims])
        if 0 in shape and self.chance(0.5):
            # along a dim that is not empty: the output is empty too, each of its (no) elements
            # a reduction of a whole dim (a count taken as numel(x) / numel(out) is 0 / 0)
            call = f"{op}(dim={self.pick([d for d, size in enumerate(shape) if size])}{keep})"
        pool = TIES if op == "max" else None
        if op == "max" and "dim" in call:
            return self._scenario([shape], lambda a: f"{a}.{call}[0]", pool)
        return self._scenario([shape], lambda a: f"{a}.{call}", pool)

    def reshape(self):
        shape = self.pick(list(RESHAPES))
        form = self.pick(RESHAPES[shape])
        return self._scenario([shape], lambda a: form.replace("x", a), view=True)

    def matmul(self):
        pair = self.pick(MATMUL_PAIRS)
        return self._scenario(pair, lambda a, b: f"{a} @ {b}")

    def index(self):
        shape = self.pick(list(INDEXES))
        form = self.pick(INDEXES[shape])
        device = self.pick(self.DEVICES)
        dtype = self.pick(self.DTYPES)
        x, out = self.new_name("a"), self.new_name("y")
        # index tensors on x's device, as torch wants them (and as the lesson's max(dim) scatter makes them)
        where = "" if device == "cpu" else f", device={device!r}"
        mine = form.replace("T(", "lib.tensor(").replace(")]", f"{where})]").replace("), ", f"{where}), ") \
            if "T(" in form else form
        theirs = form.replace("T(", "lib.tensor(")

        def forward(builder):
            if x not in builder.engine.names:
                return None
            builder.used.add(x)
            builder.viewed.update([out, x])
            return Step(f"{out} = {x}{mine}", f"{out} = {x}{theirs}", {out: builder.device(x)})
        steps = [self.input_step(x, shape, dtype, device, ORDINARY), forward]
        return self.then(*steps, *self.continuation(out, [x]))


# --- katas 03 and 06: the order and the loop -------------------------------------------------------


class Graphs(Focus):
    """Graphs whose order matters: random DAGs with fan-out and diamonds, residual chains,
    deep chains, several roots (repeated, or one feeding another), several inputs; passes
    by backward and by autograd.grad, with create_graph and inputs=."""

    KINDS = {"create": 1, "graph": 4, "chain": 1, "residual": 2, "roots": 3, "grad_of": 2, "backward_of": 1,
             "several_inputs": 2}
    SHAPES = [(), (1,), (3,), (2, 3)]
    VALUES = ORDINARY
    REQUIRES_GRAD = 0.9

    def graph(self):
        """One multi-line step: a random DAG over two leaves (its inner nodes are `_n`
        names, not compared: only the leaves' gradients and the result are)."""
        leaves = self.leaves()
        if not leaves:
            return None
        x = self.recent(leaves)
        partners = self.floats(lambda n, t: t.shape == self.engine.names[x].shape and self.device(n) == self.device(x))
        nodes, lines = [x, self.pick(partners)], []
        for i in range(self.integer(3, 14)):
            a, b = self.pick(nodes), self.pick(nodes)
            form = self.pick(["{a} * {b}", "{a} + {b}", "{a} - {b} * 0.5", "({a} * 0.5).tanh()", "{a}.sigmoid() * {b}"])
            lines.append(f"_n{i} = " + form.format(a=a, b=b))
            nodes.append(f"_n{i}")
        out = self.new_name("y")
        ends = sorted({self.pick(nodes[2:]) for _ in range(self.integer(1, 3))})
        lines.append(f"{out} = " + " + ".join(f"{e}.sum()" for e in ends))
        step = self.result(out, "0", [x, nodes[1]])  # devices and aliases as for an operation
        if step is None or "raise" in step.torch_code:
            return None
        return Step("\n".join(lines), devices=step.devices)

    def chain(self):
        x = self.recent(self.floats(lambda n, t: t.requires_grad))
        if x is None:
            return None
        out = self.new_name("y")
        depth = self.pick([30, 100, 300])
        form = self.pick(["_c * 1.0", "_c * 0.5 + _c.tanh() * 0.5", "_c + 0.0"])
        return Step(f"_c = {x}\nfor _ in range({depth}):\n    _c = {form}\n{out} = _c",
                    devices={out: self.device(x)})

    def residual(self):
        """y = y + f(y), repeated: every value feeds the next two (diamonds in series)."""
        x = self.recent(self.floats(lambda n, t: t.requires_grad))
        out = self.new_name("y")
        depth = self.pick([3, 10, 40])
        return Step(f"_r = {x}\nfor _ in range({depth}):\n    _r = _r + (_r * 0.5).tanh()\n{out} = _r",
                    devices={out: self.device(x)})

    def roots(self):
        """lib.autograd.backward or autograd.grad on several roots: repeated, or one
        feeding another, with and without gradients."""
        outputs = self.with_graph()
        if not outputs:
            return None
        chosen = [self.recent(outputs) for _ in range(self.integer(1, 4))]
        if self.chance(0.3):
            chosen.append(chosen[0])  # a root named twice
        roots = ", ".join(f"{c}.sum()" if self.chance(0.7) else c for c in chosen)
        seeds = ", ".join("None" if "sum" in part else f"lib.ones_like({part})" for part in roots.split(", "))
        if self.chance(0.5):
            grads = f", grad_tensors=[{seeds}]" if self.chance(0.5) else ""
            return Step(f"lib.autograd.backward([{roots}]{grads}, retain_graph=True)")
        leaves = sorted({leaf for c in chosen for leaf in self.leaves_of(c)})
        if not leaves:
            return None
        inputs = leaves[: self.integer(1, len(leaves))]
        names = self.grad_names(inputs)
        grads = f", grad_outputs=[{seeds}]" if self.chance(0.5) else ""
        code = f"{', '.join(names)}, = lib.autograd.grad([{roots}], [{', '.join(inputs)}]{grads}, retain_graph=True, allow_unused=True)"
        return Step(code, devices={n: self.device(i) for n, i in zip(names, inputs)})

    def several_inputs(self):
        """backward(inputs=[...]) or autograd.grad with inputs that are leaves and
        intermediate results, some unused."""
        outputs = self.with_graph()
        if not outputs:
            return None
        y = self.recent(outputs)
        pool = self.leaves_of(y) + [n for n in self.with_graph() if n != y]
        if not pool:
            return None
        inputs = sorted({self.pick(pool) for _ in range(self.integer(1, 4))})
        if self.chance(0.5):
            return Step(f"{y}.sum().backward(inputs=[{', '.join(inputs)}], retain_graph=True)")
        names = self.grad_names(inputs)
        create = ", create_graph=True" if self.smooth and self.chance(0.3) else ", retain_graph=True"
        code = f"{', '.join(names)}, = lib.autograd.grad({y}.sum(), [{', '.join(inputs)}]{create}, allow_unused=True)"
        return Step(code, devices={n: self.device(i) for n, i in zip(names, inputs)})


class Loop(Graphs):
    """Kata 06: the graphs of kata 03, with hooks on leaves and on intermediate results
    (changing, replacing, removing themselves), retain_grad, zero and empty gradients, and
    passes by backward and autograd.grad that prune to what is asked."""

    KINDS = {"create": 1, "graph": 2, "residual": 1, "roots": 2, "grad_of": 2, "backward_of": 2,
             "several_inputs": 3, "hook": 3, "retain": 2, "zero_paths": 2, "rule": 1, "elementwise": 1}
    SHAPES = [(), (1,), (3,), (2, 3), (0,)]

    def hook(self):
        x = self.recent(self.floats(lambda n, t: t.requires_grad))
        handle = self.new_name("h")
        hook = self.pick(HOOKS + ["lambda g: g.mul_(1)", "lambda g: g.clone().add_(1)"])
        code = f"{handle} = {x}.register_hook({hook})"
        if self.chance(0.25):  # a hook that removes itself when it runs
            return Step(f"{handle} = []\n{handle}.append({x}.register_hook(lambda g: {handle}[0].remove()))")
        if self.chance(0.2):
            code += f"\n{handle}.remove()"
        return Step(code)

    def retain(self):
        candidates = self.with_graph()
        return Step(f"{self.recent(candidates)}.retain_grad()") if candidates else None

    def zero_paths(self):
        """Gradients that are exactly zero (x * 0, relu of negatives, a mask): a node that
        receives zeros still runs, and its leaves still get a gradient."""
        x = self.recent(self.floats(lambda n, t: t.requires_grad))
        form = self.pick(["{x} * 0", "(-({x} * {x}) - 1).relu()", "{x} * lib.zeros_like({x})", "({x} * 0).exp()"])
        return self.result(self.new_name(), form.format(x=x), [x])


# --- kata 04: accumulation --------------------------------------------------------------------------


class Accumulation(Focus):
    """Gradients into leaves: fan-out within a pass, several passes, create_graph passes
    (a .grad with a graph), hand-set, zeroed and None gradients, a .grad held under another
    name or saved by another graph while it accumulates, zero and negative-zero gradients
    (their sign shown by a reciprocal), empty tensors, both devices."""

    KINDS = {"create": 2, "fan_out": 4, "backward_of": 4, "grad_of": 1, "set_grad": 2, "hold_grad": 2,
             "grad_in_a_graph": 2, "reciprocal_of_grad": 1, "rule": 1}
    SHAPES = [(), (1,), (3,), (2, 3), (0,)]
    VALUES = ORDINARY + [0.0, -0.0, 1e-40]
    DEVICES = ["cpu", "cpu", "cuda"]
    REQUIRES_GRAD = 0.9

    def fan_out(self):
        """x used several times in one expression (and with a partner): its gradients merge."""
        x = self.recent(self.floats(lambda n, t: t.requires_grad))
        form = self.pick(["{x} * {x}", "{x} + {x} * 2", "({x} * {x}).sigmoid() + {x}", "{x} * (-0.0) + {x} * 0",
                          "{x} * (-0.0) + {x} * (-0.0)", "{x} - {x}", "({x} * 1e-30) * 1e-30"])
        return self.result(self.new_name(), form.format(x=x), [x])

    def set_grad(self):
        leaves = [n for n in self.leaves() if n not in self.grad_results]
        if not leaves:
            return None
        x = self.recent(leaves)
        choice = self.integer(0, 3)
        if choice == 0:
            return Step(f"{x}.grad = None")
        if choice == 1:
            return Step(f"{x}.grad.zero_()")
        t = self.engine.names[x]
        code, torch_code, _ = self.tensor_code(tuple(t.shape), self.dtype_of(x)[4:], False, self.device(x))
        return Step(f"{x}.grad = {code}", f"{x}.grad = {torch_code}")

    def hold_grad(self):
        """r = x.grad: the same tensor keeps accumulating later passes in place."""
        x = self.recent(self.leaves())
        name = self.new_name("g")  # a g name: the fuzzer's model knows it for a gradient (api.Engine.observe)
        return Step(f"{name} = {x}.grad", devices={name: self.device(x)})

    def grad_in_a_graph(self):
        """A graph that saved x.grad (s = (x.grad * w).sum()): a later pass that adds into
        x.grad in place changes what it saved, and its backward must fail as torch's."""
        x = self.recent(self.leaves())
        partners = self.floats(lambda n, t: t.requires_grad and t.shape == self.engine.names[x].shape
                               and self.device(n) == self.device(x) and n != x)
        if not partners:
            return None
        w, out = self.pick(partners), self.new_name("s")
        return Step(f"{out} = ({x}.grad * {w}).sum() if {x}.grad is not None else {w}.sum()",
                    devices={out: self.device(x)})

    def reciprocal_of_grad(self):
        x = self.recent(self.leaves())
        name = self.new_name("q")
        return Step(f"{name} = 1 / {x}.grad if {x}.grad is not None else None", devices={name: self.device(x)})


# --- kata 05: seeding ---------------------------------------------------------------------------------


class Seeding(Focus):
    """Root gradients of every kind: none, of the output's shape, of another shape, dtype or
    device, Python numbers, lists with Nones, too few or too many, empty lists, gradients
    that require grad; outputs that are 0-d, one-element, empty, constant, leaves, inf or
    nan; several roots; hooks that change the seed in place."""

    KINDS = {"create": 2, "output": 3, "seeded": 6, "several": 3, "hooked_seed": 1}
    SHAPES = [(), (1,), (1, 1), (3,), (2, 3), (0,)]
    VALUES = ORDINARY + [INF, NAN, 0.0]
    DEVICES = ["cpu", "cpu", "cuda"]
    REQUIRES_GRAD = 0.7

    def output(self):
        x = self.recent(self.floats())
        form = self.pick(["{x} * 2", "{x}.sum()", "{x}.exp()", "({x} * {x}).sum() * 0.5", "{x}.reshape(-1)[:1]",
                          "{x}[{x} != {x}]", "{x}.detach()"])
        return self.result(self.new_name("y"), form.format(x=x), [x], view="detach" in form or "[" in form)

    def gradient_for(self, y):
        """(mine, torch's) code of one gradient argument for y, or None."""
        t = self.engine.names[y]
        shape = tuple(t.shape)
        kind = self.pick(["none", "match", "match", "shape", "dtype", "number", "requires_grad", "device", "int"])
        if kind == "none":
            return "None", "None"
        if kind == "number":
            return "2.0", "2.0"
        dtype = str(t.dtype)[6:]
        device = self.device(y)
        if kind == "shape":
            shape = self.pick([(), (1,), (2,), (3, 1), (0,)])
        elif kind == "dtype":
            dtype = "float64" if dtype == "float32" else "float32"
        elif kind == "int":
            dtype = "int64"
        elif kind == "device":
            device = "cpu" if device != "cpu" else "cuda"
        pool = [1.0, 2.0, -1.0, 0.5] if dtype != "int64" else [1, 2]
        args = [literal(self.values(shape, pool)), f"dtype=lib.{dtype}"]
        if kind == "requires_grad":
            args.append("requires_grad=True")
        mine = args + ([f"device={device!r}"] if device != "cpu" else [])
        if canonical(device) != canonical(self.device(y)):
            return None  # torch's side runs on the CPU: a seed on another device is not simulated
        return f"lib.tensor({', '.join(mine)})", f"lib.tensor({', '.join(args)})"

    def seeded(self):
        y = self.recent(self.floats())
        given = self.gradient_for(y)
        if given is None:
            return None
        mine, theirs = given
        call = self.pick(["{y}.backward({g}, retain_graph=True)", "{y}.backward(gradient={g}, retain_graph=True)",
                          "lib.autograd.backward({y}, grad_tensors={g}, retain_graph=True)",
                          "lib.autograd.backward([{y}], [{g}], retain_graph=True)",
                          "{y}.backward(retain_graph=True)"]
                         + (["{y}.backward({g}, create_graph=True)"] if self.smooth else []))
        if self.chance(0.4):
            x = self.pick(self.leaves())
            names = self.grad_names([x])
            call = f"{names[0]}, = lib.autograd.grad({{y}}, [{x}], {{g}}, retain_graph=True, allow_unused=True)"
            return Step(call.format(y=y, g=mine), call.format(y=y, g=theirs), {names[0]: self.device(x)})
        return Step(call.format(y=y, g=mine), call.format(y=y, g=theirs))

    def several(self):
        outputs = [self.recent(self.floats()) for _ in range(self.integer(1, 3))]
        given = [self.gradient_for(y) for y in outputs]
        if any(g is None for g in given):
            return None
        count = len(given) + self.pick([0, 0, 0, -1, 1])
        mine = [g[0] for g in given][:count] + ["None"] * max(0, count - len(given))
        theirs = [g[1] for g in given][:count] + ["None"] * max(0, count - len(given))
        form = self.pick(["lib.autograd.backward([{ys}], [{gs}], retain_graph=True)",
                          "lib.autograd.backward(({ys},), ({gs},), retain_graph=True)",
                          "lib.autograd.backward([{ys}], retain_graph=True)",
                          "lib.autograd.backward([{ys}], [], retain_graph=True)"])
        ys = ", ".join(outputs)
        return Step(form.format(ys=ys, gs=", ".join(mine)), form.format(ys=ys, gs=", ".join(theirs)))

    def hooked_seed(self):
        """The user's own gradient tensor reaches hooks as it is: a hook that changes it in
        place changes the user's tensor."""
        y = self.recent(self.with_graph() or [None]) if self.with_graph() else None
        if y is None:
            return None
        t = self.engine.names[y]
        v = self.new_name("v")
        code, torch_code, device = self.tensor_code(tuple(t.shape), str(t.dtype)[6:], False, self.device(y), [1.0, 2.0])
        lines = "{v} = {c}\n_h = {y}.register_hook(lambda g: g.mul_(2))\n{y}.backward({v}, retain_graph=True)\n_h.remove()"
        return Step(lines.format(v=v, c=code, y=y), lines.format(v=v, c=torch_code, y=y), {v: device})


# --- kata 07: saved tensors ---------------------------------------------------------------------------


class Saved(Focus):
    """What nodes save, and when it is gone: operations that save inputs or outputs, passes
    with and without retain_graph (a second pass after a freed one), graphs that save
    nothing, in-place changes under no_grad between forward and backward and between two
    passes, create_graph passes."""

    KINDS = {"create": 2, "saving": 4, "rule": 1, "backward_of": 3, "plain_backward": 3, "change_in_place": 3,
             "grad_of": 2, "scenario": 4}
    SHAPES = [(), (1,), (3,), (2, 3)]
    VALUES = ORDINARY
    CONTINUATIONS = {"changed_between_passes": 3, "backward_then_create_graph": 1, "twice_without_retain": 2,
                     "changed_before_backward": 3}

    def saving(self):
        x = self.recent(self.floats())
        partners = self.floats(lambda n, t: t.shape == self.engine.names[x].shape and self.device(n) == self.device(x))
        w = self.pick(partners)
        form = self.pick(["{x} * {w}", "{x} / ({w} * {w} + 1)", "{x}.exp()", "({x} * {x}).log()", "{x}.sigmoid()",
                          "{x}.tanh()", "{x} ** 2", "{x}.relu()", "{x} + {w}", "{x}.sum() * 3"])
        if "*" in form or "/" in form:
            self.saved_needlessly.update([x, w])
        return self.result(self.new_name(), form.format(x=x, w=w), [x, w] if "{w}" in form else [x])

    def plain_backward(self):
        """A backward that frees the graph (retain_graph not given)."""
        candidates = self.with_graph()
        if not candidates:
            return None
        y = self.recent(candidates)
        return Step(self.pick([f"{y}.sum().backward()", f"lib.autograd.backward({y}.sum())",
                               f"_g = lib.autograd.grad({y}.sum(), [{self.pick(self.leaves_of(y) or [y])}], allow_unused=True)"]))

    def scenario(self):
        shape, dtype = self.pick(self.SHAPES), self.pick(self.DTYPES)
        a, out = self.new_name("a"), self.new_name("y")
        form = self.pick(["X.exp()", "X.sigmoid()", "X.tanh()", "(X * X).log()", "X ** 3", "X.relu() * X",
                          "X.max(dim=0)[0]" if shape else "X * X", "X[[0, 0]]" if shape else "X.exp() * X",
                          "X.softmax(0)" if shape else "X.sqrt()"])
        steps = [self.input_step(a, shape, dtype, "cpu", ORDINARY), self.forward_step(out, form.replace("X", a), [a])]
        return self.then(*steps, *self.continuation(out, [a]))

    def twice_without_retain(self, out, inputs):
        def step(builder):
            return Step(f"{out}.sum().backward()") if builder.has_graph(out) else None
        return [step, step]

    def changed_before_backward(self, out, inputs):
        def change(builder):
            targets = [t for t in [out] + list(inputs) if t not in builder.viewed]
            if not targets:
                return None
            return Step(f"with lib.no_grad():\n    {builder.pick(targets)}.{builder.pick(['mul_(2)', 'add_(1)', 'zero_()'])}")
        return [change, self.backward_step(out)]


# --- kata 08: devices ---------------------------------------------------------------------------------

DEVICE_STRINGS = ["cpu", "cuda", "cuda:0", "cuda:1", "cpu:0", "cpu:1", "cuda:", "cuda:01", "cuda:-1", "cuda:x",
                  "gpu", "gpu:0", "gpu:x", "CUDA", "", " cuda", "cuda:1 ", "cuda:0:1", "cuda:1:2", "cuda:+1",
                  "cuda: 1", "cuda:\u00b2", "cuda:\u0661", "Cuda:0", "cuda0", ":0", "cpu:", "cuda:2", "cuda:10"]
# Parts a device string is also composed of, beyond the list above: an index of ASCII digits
# mixed with digits torch does not read (superscript, Arabic-Indic, fullwidth: str.isdigit()
# and a regex's \d say yes to them; blind round 5's 08 b19 read "cuda:1\u0661" as cuda:11).
DEVICE_TYPES = ["cuda", "cpu", "gpu", "CUDA"]
INDEX_CHARACTERS = ["0", "1", "2", "9", "\u00b2", "\u0661", "\uff10", "\uff11", "-", "+", " ", "x", ":"]


class Devices(Focus):
    """Every device string torch accepts or refuses, devices made from a type and an index,
    compared, printed; tensors made on and moved between cpu, cuda and cuda:1, operations
    that mix devices, gradients that flow back across moves and land on each leaf's device,
    seeds and accumulation on a device."""

    KINDS = {"create": 3, "device_string": 5, "device_parts": 2, "compare": 2, "create_on": 2, "move": 4,
             "mix": 2, "backward_of": 3, "grad_of": 2, "elementwise": 2, "rule": 1}
    SHAPES = [(), (1,), (3,), (2, 3), (0,)]
    VALUES = ORDINARY
    DEVICES = ["cpu", "cuda", "cuda:0", "cuda:1"]

    # `lib.device` is the engine's own Device; the kata's piece is the active one, which parses
    # every device string a tensor is given. The engine's side of these steps makes devices with
    # the active piece (`lib.pieces.active.Device`, what `from plugin import engine as lib` has),
    # torch's with `torch.device`; the printed program says both.
    MINE = "lib.pieces.active.Device"

    def device_step(self, code):
        """`code` with DEVICE( for the device class: the active piece's, and torch.device."""
        mine, theirs = code.replace("DEVICE(", self.MINE + "("), code.replace("DEVICE(", "lib.device(")
        return Step(f"{mine}  # torch: {theirs.splitlines()[0]}" if "\n" not in mine else mine, theirs)

    # A device is shown by what it says (type, index, str, repr), under a `_` name the
    # comparison skips: the object's class is the learner's own.
    def device_string(self):
        name = "_" + self.new_name("d")
        text = self.pick(DEVICE_STRINGS) if self.chance(0.5) else self.composed_device_string()
        make = f"{name} = DEVICE({text!r})"
        if text not in device_strings.WORDED:
            # torch's words are the contract only for the strings the kata lists; any other
            # string torch refuses must be refused, in whatever words
            make = (f"try:\n    {make}\nexcept RuntimeError:\n"
                    "    raise RuntimeError('refused (its words are checked for the listed strings)')")
        step = self.device_step(make)
        seen = f"{name[1:]} = ({name}.type, {name}.index, str({name}), repr({name}))"
        return Step(step.code + "\n" + seen, step.torch_code + "\n" + seen)

    def composed_device_string(self):
        """A type, a colon, and one to three characters of an index: mostly digits, some that
        only look like digits."""
        index = "".join(self.pick(INDEX_CHARACTERS) for _ in range(self.integer(1, 3)))
        return f"{self.pick(DEVICE_TYPES)}:{index}"

    def device_parts(self):
        name = "_" + self.new_name("d")
        # no "cuda:0" with an index: torch refuses it, but the kata's contract names only bad
        # strings, and a correct Device that takes the second index is no learner's mistake
        kind = self.pick(["cuda", "cpu", "gpu"])
        index = self.pick(["0", "1", "2"])  # a negative index: torch refuses it, the contract is silent
        step = self.device_step(f"{name} = DEVICE({kind!r}, {index})")
        seen = f"{name[1:]} = ({name}.type, {name}.index, str({name}))"
        return Step(step.code + "\n" + seen, step.torch_code + "\n" + seen)

    def compare(self):
        name = self.new_name("e")
        a, b = self.pick(DEVICE_STRINGS[:6]), self.pick(DEVICE_STRINGS[:6])
        # (not a device against a string: there the engine chose otherwise, docs/known-differences.md)
        form = self.pick(["DEVICE({a!r}) == DEVICE({b!r})", "DEVICE({a!r}) != DEVICE({b!r})",
                          "hash(DEVICE({a!r})) == hash(DEVICE({b!r}))", "len({{DEVICE({a!r}), DEVICE({b!r})}})"])
        return self.device_step(f"{name} = " + form.format(a=a, b=b))

    def create_on(self):
        """A tensor made with a device string: the active Device parses it (its errors are
        the user's), and the tensor's device is what it understood."""
        name = self.new_name()
        text = self.pick(DEVICE_STRINGS[:12])
        mine, theirs, _ = self.tensor_code(self.pick(self.SHAPES), device="cpu")
        where = canonical(text.strip()) if text.strip() in ("cpu", "cuda", "cuda:0", "cuda:1", "cpu:0") else None
        if where is None:
            return Step(f"{name} = {mine[:-1]}, device={text!r})", f"{name} = {mine[:-1]}, device={text!r})")
        return Step(f"{name} = {mine[:-1]}, device={text!r})\n{name}_where = str({name}.device)",
                    f"{name} = {theirs}\n{name}_where = {where!r}", {name: where})

    def move(self):
        x = self.recent(self.floats())
        target = self.pick(["cpu", "cuda", "cuda:0", "cuda:1"])
        call = self.pick([f"to({target!r})", f"to(lib.device({target!r}))", f"to(device={target!r})",
                          "cpu()" if target == "cpu" else f"cuda({target[-1] if ':' in target else ''})",
                          f"to({target!r}, lib.float64)"])
        name = self.new_name()
        where = canonical(target)
        self.used.add(x)
        dtype = ", lib.float64" if "float64" in call else ""
        copy = ", copy=True" if where != self.device(x) else ""
        self.moved = self.moved or bool(copy)
        if not copy and (not dtype or self.engine.names[x].dtype == torch.float64):
            self.viewed.update([name, x])
            self.alias(name, x)
        return Step(f"{name} = {x}.{call}", f'{name} = {x}.to("cpu"{dtype}{copy})', {name: where})

    def mix(self):
        """An operation on tensors of two devices: torch's error, the same from the engine."""
        a = self.recent(self.floats())
        others = self.floats(lambda n, t: self.device(n) != self.device(a) and t.shape == self.engine.names[a].shape)
        if not others:
            return None
        b = self.pick(others)
        if (self.engine.names[a].ndim == 0 and self.device(a) == "cpu") or (self.engine.names[b].ndim == 0 and self.device(b) == "cpu"):
            return None  # torch lets a 0-d CPU tensor join (docs/known-differences.md)
        name = self.new_name()
        return Step(f"{name} = {a} {self.pick(['+', '*', '-'])} {b}", f"raise RuntimeError({SAME_DEVICE_ERROR!r})")


BUILDERS = {1: Rules, 2: Shapes, 3: Graphs, 4: Accumulation, 5: Seeding, 6: Loop, 7: Saved, 8: Devices}
# Programs per graded run: what fits in about a second and a half of an idle 2-core machine.
PROGRAMS = {1: 300, 2: 250, 3: 150, 4: 200, 5: 200, 6: 200, 7: 200, 8: 200}


def program_builder(kata_number, engine, program_seed):
    """The builder of kata `kata_number` for one program, drawing from `program_seed`."""
    return BUILDERS[kata_number](engine, random.Random(program_seed))
