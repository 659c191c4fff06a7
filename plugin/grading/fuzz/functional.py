"""The fuzz test of katas 09 and 10: random cases of their functions against torch's.

Kata 09's functions are compared with `torch.autograd.functional` (jacobian, hvp) and a torch
gradient penalty; kata 10's with the model solution's own source run on torch (it is written
on the part of the API the engine shares with torch). Each case is drawn from a fixed seed:
random shapes, both float dtypes, batch size 1, functions whose gradient is constant, unused
or absent, large logits; the caller's tensors (values, requires_grad, `.grad`) are checked
before and after each call. A case the model solution gets wrong too (on the same engine) is
the engine's, not the learner's, and is passed over; a capstone case the model solution gets
right on the learner's engine but not on the model engine is blamed on katas 01-08.
"""
import importlib
import os
import random
import time

import numpy as np
import pytest
import torch

import reference
from reference import pieces as seam

from ..speed import nodes_behind

CASES = {9: 80, 10: 60}  # random cases per graded run (the kata's time budget)
LONG = "AUTOGRAD_KATAS_FUZZ"


class Mismatch(Exception):
    """The learner's function gave something torch's does not."""


def close(mine, theirs, dtype):
    rtol, atol = (1e-4, 1e-6) if dtype == np.float32 else (1e-7, 1e-10)
    return mine.shape == theirs.shape and np.allclose(mine, theirs, rtol=rtol, atol=atol, equal_nan=True)


def as_array(t, what):
    if not (hasattr(t, "detach") and hasattr(t, "shape")):
        raise Mismatch(f"{what} must be an engine tensor, got {type(t).__name__}")
    return np.asarray(t.detach().cpu().numpy())


def compare(mine, theirs, what):
    """An engine tensor against torch's: shape, dtype, values, no grad required."""
    got, expected = as_array(mine, what), theirs.detach().cpu().numpy()
    if got.shape != expected.shape:
        raise Mismatch(f"{what}: shape {got.shape}, torch's {expected.shape}")
    if got.dtype != expected.dtype:
        raise Mismatch(f"{what}: dtype {got.dtype}, torch's {expected.dtype}")
    if not close(got, expected, expected.dtype):
        raise Mismatch(f"{what}: torch gives {np.array2string(expected, precision=6)}, yours "
                       f"{np.array2string(got, precision=6)}")


def snapshot(t):
    grad = t.grad
    return (t.detach().cpu().numpy().copy(), t.requires_grad, grad, None if grad is None else grad.detach().cpu().numpy().copy())


def unchanged(before, t, what):
    data, requires_grad, grad, grad_values = before
    if not np.array_equal(t.detach().cpu().numpy(), data, equal_nan=True):
        raise Mismatch(f"{what}: the caller's values changed")
    if t.requires_grad != requires_grad:
        raise Mismatch(f"{what}: requires_grad was {requires_grad}, it is {t.requires_grad} after the call")
    if t.grad is not grad:
        raise Mismatch(f"{what}: its .grad was {'None' if grad is None else 'a tensor'} and was replaced")
    if grad is not None and not np.array_equal(t.grad.detach().cpu().numpy(), grad_values, equal_nan=True):
        raise Mismatch(f"{what}: its .grad was changed in place")


# --- kata 09 ------------------------------------------------------------------------------------------

# name -> (f(lib, w) -> a function of x, whether f returns one element); w: a weight of x's shape
JACOBIAN_FUNCTIONS = {
    "x.sigmoid() * x": lambda lib, w: (lambda x: x.sigmoid() * x),
    "(x * w).tanh()": lambda lib, w: (lambda x: (x * w).tanh()),
    "x * 2 (linear)": lambda lib, w: (lambda x: x * 2),
    "w * 3 (no x at all)": lambda lib, w: (lambda x: w * 3),
    "x.detach() * 2 (a constant)": lambda lib, w: (lambda x: x.detach() * 2),
    "(x ** 2).sum()": lambda lib, w: (lambda x: (x ** 2).sum()),
    "x.exp().reshape(-1)[:1]": lambda lib, w: (lambda x: x.exp().reshape(-1)[:1]),
    "(x * x).sum() * x": lambda lib, w: (lambda x: (x * x).sum() * x),
    "x.sum() (a gradient that is an expand)": lambda lib, w: (lambda x: x.sum()),
}
HVP_FUNCTIONS = {
    "(x ** 3).sum()": lambda lib, w: (lambda x: (x ** 3).sum()),
    "(x.tanh() * x).sum()": lambda lib, w: (lambda x: (x.tanh() * x).sum()),
    "x.exp().sum().log()": lambda lib, w: (lambda x: x.exp().sum().log()),
    "(x * w).sum() (linear)": lambda lib, w: (lambda x: (x * w).sum()),
    "x.sum() * 2 (linear)": lambda lib, w: (lambda x: x.sum() * 2),
    "(w * w).sum() (no x at all)": lambda lib, w: (lambda x: (w * w).sum()),
    "(x * x * w).sum()": lambda lib, w: (lambda x: (x * x * w).sum()),
}
SHAPES = [(), (1,), (3,), (1, 3), (2, 3), (1, 1)]


def _value(rng, shape, dtype):
    return (rng.normal(size=shape) * rng.choice([0.5, 1.0, 2.0])).astype(dtype)


def _leaf(lib, array, requires_grad, grad=None, device="cpu"):
    """A caller's tensor (torch's on the CPU: its results are compared by value)."""
    where = {"device": device} if lib is not torch else {}
    t = lib.tensor(array.copy(), requires_grad=requires_grad, **where)
    if grad is not None:
        t.grad = lib.tensor(grad.copy(), **where)
    return t


def _higher_order_case(rng):
    """(description, run(lib, functions) -> results, compare)"""
    which = rng.choice(["jacobian", "hessian_vector_product", "gradient_penalty"])
    dtype = rng.choice([np.float32, np.float64])
    if which == "gradient_penalty":
        return _penalty_case(rng, dtype)
    shape = SHAPES[rng.integers(len(SHAPES))]
    table = JACOBIAN_FUNCTIONS if which == "jacobian" else HVP_FUNCTIONS
    name = list(table)[rng.integers(len(table))]
    x0, w0, v0 = (_value(rng, shape, dtype) for _ in range(3))
    x_grad = rng.random() < 0.5
    # No GPU here: kata 09's contract is silent on devices, and its stub invites numpy for the rows.
    device = "cpu"
    wrong_v = which == "hessian_vector_product" and rng.random() < 0.25
    if wrong_v:  # torch: "v has invalid size"; a product of another shape must fail, not return
        v0 = _value(rng, (int(np.prod(shape)) + 1,), dtype)
    described = (f"{which}(f, x{', v' if which != 'jacobian' else ''}) with f = lambda x: {name}, x of shape {shape}, "
                 f"dtype {np.dtype(dtype).name}{', x requiring grad with a .grad set' if x_grad else ''}"
                 f"{', v of shape ' + str(v0.shape) + ' (not x.shape)' if wrong_v else ''}")

    def run(lib, function):
        w = _leaf(lib, w0, True, np.ones_like(w0), device)
        x = _leaf(lib, x0, x_grad, np.full_like(x0, 2.0) if x_grad else None, device)
        f = table[name](lib, w)
        tensors = {"x": x, "f's weight": w}
        if which != "jacobian":
            tensors["v"] = _leaf(lib, v0, False, None, device)
        before = {label: snapshot(t) for label, t in tensors.items()}
        if which == "jacobian":
            result = function(f, x)
        else:
            result = function(f, x, tensors["v"])
        return result, before, tensors

    def expected():
        w = torch.tensor(w0, requires_grad=True)
        f = table[name](torch, w)
        if which == "jacobian":
            return torch.autograd.functional.jacobian(f, torch.tensor(x0))
        return torch.autograd.functional.hvp(f, torch.tensor(x0), torch.tensor(v0))[1]

    def check(outcome):
        result, before, tensors = outcome
        if wrong_v:
            raise Mismatch(f"{which} returned a result for a v of the wrong shape (torch raises: v has invalid size)")
        compare(result, expected(), f"{which}'s result")
        if result.requires_grad:
            raise Mismatch(f"{which}'s result requires grad (torch's does not, create_graph=False)")
        if str(result.device) != str(tensors["x"].device):
            raise Mismatch(f"{which}'s result is on {result.device}, x on {tensors['x'].device} (torch's result is on x's device)")
        try:
            result.mul_(1)
        except Exception as error:
            raise Mismatch(f"{which}'s result cannot be changed in place (torch's can): {type(error).__name__}: "
                           f"{str(error).splitlines()[0]}") from None
        for label, t in tensors.items():
            unchanged(before[label], t, f"{which}: {label}")

    return which, described, run, check


def _penalty_case(rng, dtype):
    batch = int(rng.choice([1, 1, 2, 4]))
    sample = [(3,), (2, 2), (1,)][rng.integers(3)]
    features = int(np.prod(sample))
    hidden = int(rng.integers(1, 4))
    real, fake = _value(rng, (batch, *sample), dtype), _value(rng, (batch, *sample), dtype)
    alpha = rng.random((batch,) + (1,) * len(sample)).astype(dtype)
    weights = [_value(rng, (features, hidden), dtype), _value(rng, (hidden,), dtype), _value(rng, (hidden, 1), dtype)]
    # (No critic whose gradient is exactly 0: the norm's derivative there is the formula's
    # choice, nan for sqrt of a sum, 0 for torch's norm, and the contract does not choose.)
    activation = rng.choice(["tanh", "relu", "none"])
    described = (f"gradient_penalty(critic, real, fake, alpha) with a batch of {batch} samples of shape {sample}, "
                 f"dtype {np.dtype(dtype).name}, a critic with {hidden} hidden units and "
                 f"{'no activation (a linear critic)' if activation == 'none' else activation}")

    def critic_of(lib, params):
        w1, b1, w2 = params

        def critic(x):
            h = x.reshape(x.shape[0], -1) @ w1 + b1
            if activation != "none":
                h = getattr(h, activation)()
            return h @ w2
        return critic

    def run(lib, function):
        params = [_leaf(lib, w, True, np.ones_like(w)) for w in weights]
        data = {"real": _leaf(lib, real, False), "fake": _leaf(lib, fake, False), "alpha": _leaf(lib, alpha, False)}
        tensors = {**data, "w1": params[0], "b1": params[1], "w2": params[2]}
        before = {label: snapshot(t) for label, t in tensors.items()}
        penalty = function(critic_of(lib, params), data["real"], data["fake"], data["alpha"])
        grads = lib.autograd.grad(penalty.sum(), params, allow_unused=True) if penalty.requires_grad else None
        return (penalty, grads), before, tensors

    def expected():
        params = [torch.tensor(w, requires_grad=True) for w in weights]
        mixed = (torch.tensor(alpha) * torch.tensor(real) + (1 - torch.tensor(alpha)) * torch.tensor(fake)).requires_grad_()
        scores = critic_of(torch, params)(mixed)
        (g,) = torch.autograd.grad(scores, mixed, torch.ones_like(scores), create_graph=True)
        penalty = ((g.reshape(batch, -1).norm(dim=1) - 1) ** 2).mean()
        return penalty, torch.autograd.grad(penalty, params, allow_unused=True)

    def check(outcome):
        (penalty, grads), before, tensors = outcome
        theirs, their_grads = expected()
        compare(penalty.reshape(()), theirs, "gradient_penalty's result")
        if grads is None:
            raise Mismatch("the penalty does not require grad: it must carry a graph to the critic's weights")
        for label, mine, expected_grad in zip(("w1", "b1", "w2"), grads, their_grads):
            if (mine is None) != (expected_grad is None):
                raise Mismatch(f"the penalty's gradient for {label} is {'None' if mine is None else 'a tensor'}, "
                               f"torch's {'None' if expected_grad is None else 'a tensor'}")
            if mine is not None:
                compare(mine, expected_grad, f"the penalty's gradient for the critic's {label}")
        for label, t in tensors.items():
            unchanged(before[label], t, f"gradient_penalty: {label}")

    return "gradient_penalty", described, run, check


# --- kata 10 ------------------------------------------------------------------------------------------

_torch_capstone = None


def torch_capstone():
    """The model solution's capstone.py run on torch (it uses only what the two APIs share)."""
    global _torch_capstone
    if _torch_capstone is None:
        path = importlib.import_module("reference.solutions.capstone").__file__
        source = open(path, encoding="utf-8").read().replace("import reference as ag", "import torch as ag")
        namespace = {"__name__": "torch_capstone"}
        exec(compile(source, path, "exec"), namespace)
        _torch_capstone = namespace
    return _torch_capstone


def _raises(action):
    try:
        action()
    except Exception:  # the outcome compared: torch's model raises here, or it does not
        return True
    return False


def _capstone_case(rng):
    dtype = rng.choice([np.float32, np.float64])
    sizes = [int(rng.integers(1, 5))] + [int(rng.integers(1, 5)) for _ in range(rng.integers(0, 3))] + [int(rng.integers(2, 5))]
    batch = int(rng.choice([1, 1, 2, 3, 5]))
    scale = float(rng.choice([0.5, 1.0, 3.0, 30.0]))  # 30: large logits
    weights = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        weights += [(rng.normal(size=(fan_in, fan_out)) * scale).astype(dtype), (rng.normal(size=fan_out) * scale).astype(dtype)]
    x = rng.normal(size=(batch, sizes[0])).astype(dtype)
    labels = rng.integers(0, sizes[-1], size=batch)
    # logits given as they are: rows far apart (one far below another)
    logits = (rng.normal(size=(batch, sizes[-1])) * scale).astype(dtype)
    logits += (rng.choice([0.0, 0.0, -1000.0, 1000.0], size=(batch, 1))).astype(dtype)
    if rng.random() < 0.3:  # the label's logit far below its row's largest: its softmax underflows
        row = rng.integers(batch)
        logits[row, labels[row]] -= dtype(rng.choice([120.0, 800.0]))
    # No -inf for a masked class: the kata asks for large logits, not masks, and a correct
    # one-hot cross entropy gives -inf * 0 = nan there (torch's kernel skips the zero).
    which = rng.choice(["forward and loss", "cross_entropy", "train", "sgd_step", "multitask_sequential",
                        "multitask_summed", "grads_all_at_once", "grads_one_by_one"])
    lr, steps = float(rng.choice([0.1, 0.5, 1.0])), int(rng.integers(1, 4))
    described = (f"{which} on an MLP of sizes {sizes}, a batch of {batch}, dtype {np.dtype(dtype).name}, "
                 f"weights of scale {scale}" + (f", lr {lr}, {steps} steps" if which in ("train", "sgd_step") else ""))
    if which == "cross_entropy":
        described = (f"cross_entropy(logits, labels) with logits {np.array2string(logits, precision=3)} "
                     f"({np.dtype(dtype).name}) and labels {labels.tolist()}")

    def run(lib, f):
        if which == "train":
            given = [w.copy() for w in weights]
            losses = f["train"](given, x.copy(), labels.copy(), lr, steps)
            return [float(v) for v in losses], [np.array_equal(a, b) for a, b in zip(given, weights)]
        params = [lib.tensor(w.copy(), requires_grad=True) for w in weights]
        inputs = lib.tensor(x.copy())
        if which == "cross_entropy":
            given = lib.tensor(logits.copy(), requires_grad=True)
            loss = f["cross_entropy"](given, labels.copy())
            return [loss.reshape(()), lib.autograd.grad(loss.sum(), [given])[0]]
        if which == "forward and loss":
            out = f["mlp_forward"](params, inputs)
            loss = f["cross_entropy"](out, labels.copy())
            return [out, loss.reshape(()), *lib.autograd.grad(loss.sum(), params)]
        if which == "sgd_step":
            loss = f["cross_entropy"](f["mlp_forward"](params, inputs), labels.copy())
            loss.backward()
            f["sgd_step"](params, lr)
            return [p.detach() for p in params] + [p.grad is None for p in params]
        trunk = f["mlp_forward"](params, inputs).sigmoid()
        loss1, loss2 = (trunk * trunk).sum(), trunk.sum() * 0.5
        for p in params:
            p.grad = lib.ones_like(p)  # a .grad already there: the strategies add to it, the grads leave it
        if which.startswith("multitask"):
            f[which](loss1, loss2)
            # afterwards the trunk's graph is freed, as after torch's last backward
            return [p.grad for p in params] + [_raises(lambda: loss2.backward())]
        loss = loss1 + loss2
        counted = lib is not torch and which == "grads_all_at_once"
        start = reference.graph.Stats.node_calls if counted else 0
        grads = list(f[which](loss, params))
        once = reference.graph.Stats.node_calls - start <= nodes_behind(loss) if counted else True
        flags = [g.requires_grad for g in grads if hasattr(g, "requires_grad")]
        again = _raises(lambda: lib.autograd.grad(loss, params[:1]))  # the caller's graph is still there
        return grads + [p.grad for p in params] + flags + [once, again]

    def check(mine, theirs):
        if which == "train":
            (losses, kept), (expected, _) = mine, theirs
            if len(losses) != len(expected) or not close(np.array(losses), np.array(expected), dtype):
                raise Mismatch(f"train's losses: torch's model gives {np.round(expected, 6).tolist()}, yours "
                               f"{np.round(losses, 6).tolist()}")
            if not all(kept):
                raise Mismatch("train changed the caller's numpy weights (make the leaves from copies: ag.tensor copies)")
            return
        if len(mine) != len(theirs):
            raise Mismatch(f"{which}: {len(mine)} results, torch's model {len(theirs)}")
        for i, (a, b) in enumerate(zip(mine, theirs)):
            if isinstance(b, bool) or b is None or a is None:
                if a is not b and a != b:
                    raise Mismatch(f"{which}: {_meaning(which, i, len(mine))} is {a!r}, torch's model gives {b!r}")
                continue
            compare(a, b, f"{which}: {_meaning(which, i, len(mine))}")

    return which, described, run, check


def _meaning(which, i, count):
    """What result i of a capstone case is, for the failure's sentence."""
    if which.startswith("multitask"):
        return "whether a later backward through the trunk fails" if i == count - 1 else f"weight {i}'s .grad"
    if which.startswith("grads"):
        tail = {count - 1: "whether the loss's graph can be differentiated again afterwards",
                count - 2: "whether one call ran each node at most once"}
        return tail.get(i, f"result {i} (gradients, then the weights' .grad, then the gradients' requires_grad)")
    return f"result {i}"


# --- running ------------------------------------------------------------------------------------------


def _capture(run):
    try:
        return ("ok", run())
    except Mismatch:
        raise
    except Exception as error:  # the learner's (or the engine's) error, compared as an outcome
        return ("error", f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}")


def _agrees(kind, outcome, check, theirs=None):
    if outcome[0] == "error":
        return False
    try:
        check(outcome[1]) if theirs is None else check(outcome[1], theirs)
    except Mismatch:
        return False
    return True


def check_functions(kata, solution):
    """The fuzz test of kata 09 or 10: fails with the first case the learner's functions get
    wrong where the model solution gets it right."""
    model = importlib.import_module(f"reference.solutions.{kata.name}")
    long = os.environ.get(LONG) == "long"
    stop = time.monotonic() + 60 * float(os.environ.get("AUTOGRAD_KATAS_FUZZ_MINUTES", "5"))
    rng = random.Random(2500 + kata.number) if not long else random.Random()
    count = 0
    while True:
        count += 1
        case_seed = rng.getrandbits(32)
        case = np.random.default_rng(case_seed)
        if kata.number == 9:
            which, described, run, check = _higher_order_case(case)
            mine = _capture(lambda: run(reference, getattr(solution, which)))
            if _agrees(which, mine, check):
                pass
            else:
                with seam.swapped(dict(seam.REFERENCE)):
                    model_outcome = _capture(lambda: run(reference, getattr(model, which)))
                if _agrees(which, model_outcome, check):
                    _fail(kata, described, case_seed, mine, lambda: check(mine[1]))
        else:
            which, described, run, check = _capstone_case(case)
            functions = {name: getattr(solution, name) for name in kata.functions}
            theirs = run(torch, torch_capstone())
            mine = _capture(lambda: run(reference, functions))
            if not _agrees(which, mine, check, theirs):
                models = {name: getattr(model, name) for name in kata.functions}
                on_learner_engine = _capture(lambda: run(reference, models))
                with seam.swapped(dict(seam.REFERENCE)):
                    on_model_engine = _capture(lambda: run(reference, models))
                if _agrees(which, on_model_engine, check, theirs):
                    engine_at_fault = not _agrees(which, on_learner_engine, check, theirs)
                    _fail(kata, described, case_seed, mine, lambda: check(mine[1], theirs), engine_at_fault)
        if (not long and count >= CASES[kata.number]) or (long and time.monotonic() > stop):
            break
    if long:
        print(f"\nkata {kata.slug}: {count} random cases, no divergence")


def _fail(kata, described, case_seed, outcome, recheck, engine_at_fault=False):
    if outcome[0] == "error":
        what = f"it raised {outcome[1]}"
    else:
        try:
            recheck()
            what = "it differs from torch"
        except Mismatch as mismatch:
            what = str(mismatch)
    blame = ""
    if engine_at_fault:
        blame = ("\nThe model solution's capstone.py fails this case on your engine too, and passes on the model "
                 "engine: the difference comes from your pieces of katas 01-08, not from capstone.py.")
    pytest.fail(f"a random case for kata {kata.slug} (case seed {case_seed}) differs from torch where the model "
                f"solution agrees:\n  {described}\n  {what}{blame}", pytrace=False)
