"""Kata 09's mutation suite: one plausible mistake per sentence of the three functions'
contracts (the stub's docstrings and the lesson), planted in the reference solution as a
learner writes it; each must leave the kata not done. Correct solutions written differently
must come out done."""
import pytest

from kit import learner_source
from mutation import Mutant, assert_caught, assert_correct_is_done

KATA = "09_higher_order"
FILE = "higher_order.py"
SOURCE = learner_source("higher_order")

# Correct, in another shape: the Jacobian's seeds are the rows of an identity matrix, the
# product is the gradient of the dot product g . v (the constant case told by requires_grad),
# the penalty's mean of squares is written out.
ROWS = '''
import numpy as np

from plugin import engine as ag


def jacobian(f, x):
    x = x.detach().requires_grad_(True)
    out = f(x)
    if not out.requires_grad:  # a constant f
        return ag.zeros(tuple(out.shape) + tuple(x.shape), dtype=x.dtype)
    rows = []
    identity = np.eye(out.numel(), dtype=np.dtype(str(out.dtype)))  # once: one per row is cubic
    for i in range(out.numel()):
        seed = ag.tensor(identity[i])
        (row,) = ag.autograd.grad([out.reshape(-1)], [x], [seed], retain_graph=i + 1 < out.numel(),
                                  allow_unused=True)
        rows.append(np.zeros(tuple(x.shape), dtype=np.dtype(str(x.dtype))) if row is None else row.numpy())
    return ag.tensor(np.array(rows).reshape(tuple(out.shape) + tuple(x.shape)))


def hessian_vector_product(f, x, v):
    x = x.detach().requires_grad_(True)
    out = f(x)
    if not out.requires_grad:  # a constant f
        return ag.zeros_like(x)
    (g,) = ag.autograd.grad(out, [x], create_graph=True, allow_unused=True)
    if g is None:  # f does not use x
        return ag.zeros_like(x)
    dot = (g * v).sum()
    if not dot.requires_grad:
        return ag.zeros_like(x)
    (hv,) = ag.autograd.grad(dot, [x], allow_unused=True)
    return ag.zeros_like(x) if hv is None else hv


def gradient_penalty(critic, real, fake, alpha):
    mixed = (real * alpha + fake * (1 - alpha)).detach()
    mixed.requires_grad_(True)
    scores = critic(mixed)
    (g,) = ag.autograd.grad([scores], [mixed], [ag.ones_like(scores)], create_graph=True)
    flat = g.reshape(g.shape[0], -1)
    distance = (flat * flat).sum(dim=1).sqrt() - 1.0
    return (distance * distance).sum() * (1.0 / g.shape[0])
'''

# A Hessian-vector product by central finite differences of the gradient: about 1e-10 off.
FINITE_DIFFERENCES = '''    x = x.detach()
    eps = 1e-5 * max(1.0, float(np.abs(x.numpy()).max()))

    def gradient_at(point):
        point = point.detach().requires_grad_()
        return ag.autograd.grad(f(point), point)[0].numpy()

    step = v.numpy() * eps
    plus, minus = gradient_at(ag.tensor(x.numpy() + step)), gradient_at(ag.tensor(x.numpy() - step))
    return ag.tensor((plus - minus) / (2 * eps))
'''

HVP_BODY = '''    x = x.detach().requires_grad_()
    out = f(x)
    if not out.requires_grad:  # f depends on nothing that requires grad (a constant)
        return ag.zeros_like(x)
    # g has a graph: it can be differentiated. allow_unused: f may not depend on x at all
    (g,) = ag.autograd.grad(out, x, create_graph=True, allow_unused=True)
    if g is None or not g.requires_grad:  # no x in f, or a constant gradient (f linear in x)
        return ag.zeros_like(x)
    # allow_unused: g may have a graph that does not reach x (f = (x * w).sum(), w a weight)
    (hv,) = ag.autograd.grad(g, x, grad_outputs=v, allow_unused=True)
    return ag.zeros_like(x) if hv is None else hv.detach()
'''

# Gradients through backward() and .grad: right values, but f's weights collect a .grad.
HVP_BY_BACKWARD = '''    x = x.detach().requires_grad_()
    out = f(x)
    if not out.requires_grad:
        return ag.zeros_like(x)
    (g,) = ag.autograd.grad(out, x, create_graph=True, allow_unused=True)
    if g is None or not g.requires_grad:
        return ag.zeros_like(x)
    g.backward(v)
    return ag.zeros_like(x) if x.grad is None else x.grad
'''

JACOBIAN_ROW = '''        (row,) = ag.autograd.grad(flat, x, grad_outputs=ag.tensor(seed), retain_graph=not last,
                                  allow_unused=True)
'''

MUTANTS = [
    # jacobian
    # blind round 3's 09 b13: f called again for the gradient (a stochastic f gives another draw)
    Mutant("hvp: calls f once more for the gradient",
           "    (g,) = ag.autograd.grad(out, x, create_graph=True, allow_unused=True)\n",
           "    (g,) = ag.autograd.grad(f(x), x, create_graph=True, allow_unused=True)\n", expect="called f 2 times"),
    Mutant("jacobian: returns the flat (outputs, inputs) matrix",
           "np.stack(rows).reshape(tuple(out.shape) + tuple(x.shape))", "np.stack(rows)",
           expect="jacobian of sum of squares: shape (1, 3), torch's is (3,)"),
    Mutant("jacobian: rows and columns swapped",
           "np.stack(rows).reshape(tuple(out.shape) + tuple(x.shape))",
           "np.stack(rows, axis=-1).reshape(tuple(out.shape) + tuple(x.shape))",
           expect="jacobian of"),
    Mutant("jacobian: in float64 whatever x's dtype",
           "ag.tensor(np.stack(rows).reshape", "ag.tensor(np.stack(rows).astype(np.float64).reshape",
           expect="dtype float64, torch's is float32"),  # the first float32 Jacobian compared with torch's
    Mutant("jacobian: the result requires grad",
           "return ag.tensor(np.stack(rows).reshape(tuple(out.shape) + tuple(x.shape)))",
           "return ag.tensor(np.stack(rows).reshape(tuple(out.shape) + tuple(x.shape)), requires_grad=True)",
           expect="the Jacobian must not require grad"),
    # "a row autograd.grad finds nothing for is zeros" (found by a blind walk-through)
    Mutant("jacobian: a row of None where f does not reach x",
           "rows.append(np.zeros(x.shape, dtype=x.dtype) if row is None else row.numpy())",
           "rows.append(row.numpy())", expect="does_not_reach_x"),
    Mutant("jacobian: calls f again for every row",
           "        (row,) = ag.autograd.grad(flat, x,", "        (row,) = ag.autograd.grad(f(x).reshape(-1), x,",
           expect="jacobian called f"),
    Mutant("jacobian: frees the graph after the first row",
           "retain_graph=not last", "retain_graph=False", expect="pass retain_graph=True to every"),
    Mutant("jacobian: one seed for all rows, never cleared",
           "        seed = np.zeros(flat.shape, dtype=out.dtype)\n",
           "        seed = np.zeros(flat.shape, dtype=out.dtype) if i == 0 else seed\n",
           expect="jacobian of"),
    Mutant("jacobian: seeds the output as it is, not flattened",
           "    flat = out.reshape(-1)\n", "    flat = out\n",
           expect="test_jacobian_equals_torchs[sum of squares]"),
    Mutant("jacobian: works on the caller's x",
           "    x = x.detach().requires_grad_()  # differentiate at x's value; the caller's x is untouched\n",
           "    x = x.requires_grad_()\n",
           expect="its requires_grad went from False to True"),
    Mutant("jacobian: rows through backward() and .grad",
           JACOBIAN_ROW,
           "        flat.backward(ag.tensor(seed), retain_graph=not last)\n"
           "        row, x.grad = x.grad, None\n",
           expect="its .grad was"),
    # blind round 1's b06: right numbers, an identity matrix of n x n made for each of n rows
    Mutant("jacobian: each seed a row of an identity made again per row",
           "        seed = np.zeros(flat.shape, dtype=out.dtype)\n        seed[i] = 1.0",
           "        seed = np.eye(flat.numel(), dtype=out.dtype)[i]",
           expect="slow on a Jacobian: looks cubic"),
    # hessian_vector_product
    Mutant("hvp: finite differences instead of a second derivative",
           HVP_BODY, FINITE_DIFFERENCES, expect="an approximation such as finite differences"),
    Mutant("hvp: no create_graph on the first gradient",
           "(g,) = ag.autograd.grad(out, x, create_graph=True, allow_unused=True)",
           "(g,) = ag.autograd.grad(out, x, allow_unused=True)",
           expect="the first autograd.grad needs create_graph=True"),
    Mutant("hvp: raises for a constant gradient",
           HVP_BODY,
           "    x = x.detach().requires_grad_()\n    (g,) = ag.autograd.grad(f(x), x, create_graph=True)\n"
           "    (hv,) = ag.autograd.grad(g, x, grad_outputs=v)\n    return hv.detach()\n",
           expect="f is linear in x here: its gradient does not depend on x"),
    Mutant("hvp: H @ ones instead of H @ v",
           "(hv,) = ag.autograd.grad(g, x, grad_outputs=v, allow_unused=True)",
           "(hv,) = ag.autograd.grad(g.sum(), x, allow_unused=True)", expect="hessian_vector_product of"),
    Mutant("hvp: the product keeps a graph",
           "(hv,) = ag.autograd.grad(g, x, grad_outputs=v, allow_unused=True)\n    return ag.zeros_like(x) if hv is None else hv.detach()",
           "(hv,) = ag.autograd.grad(g, x, grad_outputs=v, allow_unused=True, create_graph=True)\n"
           "    return ag.zeros_like(x) if hv is None else hv",
           expect="the product must not require grad"),
    Mutant("hvp: in float64 whatever x's dtype",
           "    return ag.zeros_like(x) if hv is None else hv.detach()",
           "    return ag.zeros_like(x) if hv is None else ag.tensor(hv.numpy().astype(np.float64))",
           expect="must be float32"),
    Mutant("hvp: works on the caller's x",
           "    x = x.detach().requires_grad_()\n    out = f(x)\n    if not out.requires_grad:  # f depends",
           "    x = x.requires_grad_()\n    out = f(x)\n    if not out.requires_grad:  # f depends",
           expect="its requires_grad went from False to True"),
    Mutant("hvp: the second gradient through backward() and .grad", HVP_BODY, HVP_BY_BACKWARD,
           expect="left a .grad on f's weight"),
    # gradient_penalty
    Mutant("penalty: alpha weighs the fake samples",
           "(alpha * real + (1 - alpha) * fake)", "(alpha * fake + (1 - alpha) * real)",
           expect="gradient_penalty on "),
    Mutant("penalty: one norm for the whole batch",
           "norms = (g * g).reshape(g.shape[0], -1).sum(dim=1).sqrt()", "norms = (g * g).sum().sqrt()",
           expect="gradient_penalty on "),
    Mutant("penalty: the squared norm, not the norm",
           "norms = (g * g).reshape(g.shape[0], -1).sum(dim=1).sqrt()",
           "norms = (g * g).reshape(g.shape[0], -1).sum(dim=1)",
           expect="gradient_penalty on "),
    Mutant("penalty: the sum over the batch, not the mean",
           "return ((norms - 1) ** 2).mean()", "return ((norms - 1) ** 2).sum()",
           expect="gradient_penalty on "),
    Mutant("penalty: |norm - 1| instead of its square",
           "return ((norms - 1) ** 2).mean()", "return (norms - 1).abs().mean()",
           expect="gradient_penalty on "),
    Mutant("penalty: the inner gradient without create_graph",
           "grad_outputs=ag.ones_like(scores), create_graph=True)", "grad_outputs=ag.ones_like(scores))",
           expect="must carry a graph back to the critic's weights"),
    Mutant("penalty: computed from a detached gradient",
           "    norms = (g * g)", "    g = g.detach()\n    norms = (g * g)",
           expect="must carry a graph back to the critic's weights"),
    Mutant("penalty: the inner gradient by backward(), into the weights' .grad",
           "    (g,) = ag.autograd.grad(scores, mixed, grad_outputs=ag.ones_like(scores), create_graph=True)\n",
           "    scores.backward(ag.ones_like(scores), create_graph=True)\n    g = mixed.grad\n",
           expect="gradient_penalty put a .grad on the critic's weights"),
]


@pytest.mark.parametrize("mutant", MUTANTS, ids=str)
def test_a_planted_mistake_is_not_done(checkout, mutant):
    assert_caught(checkout, KATA, FILE, SOURCE, mutant)


# The reference as a learner writes it and ALTERNATIVE are graded in test_kata_09.py.
CORRECT = {"rows of eye": ROWS}


@pytest.mark.parametrize("name", CORRECT)
def test_a_correct_variant_is_done(checkout, name):
    assert_correct_is_done(checkout, KATA, FILE, CORRECT[name])
