"""Kata 02's mutation suite: one plausible mistake per sentence of the shape pieces' contract
(the stub docstrings and the lesson), each planted in the reference pieces and graded: the
kata must not come out done. Correct solutions written differently must come out done."""
import pytest

from kit import learner_source
from mutation import Mutant, assert_caught, assert_correct_is_done
from test_kata_02 import ALTERNATIVE

KATA = "02_shapes"
FILE = "shapes.py"
SOURCE = "from plugin import engine as ag\n" + learner_source("shapes")

LEADING_SUM = "return grad.sum(dim=tuple(range(leading)))"
STRETCHED_SUM = "return grad.sum(dim=tuple(range(leading)) + stretched, keepdim=True).reshape(shape)"
GRAD_A = "grad_a = unbroadcast(grad2 @ b2.transpose(-1, -2), a2.shape).reshape(a.shape)"
GRAD_B = "grad_b = unbroadcast(a2.transpose(-1, -2) @ grad2, b2.shape).reshape(b.shape)"
SCATTER = "return (zeros.index_put(ctx.index, grad, accumulate=True),)"

MUTANTS = [
    # unbroadcast: "each element is the sum of grad over every position its value was copied to"
    Mutant("averages the leading dimensions in unbroadcast", LEADING_SUM, LEADING_SUM.replace("sum", "mean"),
           expect="broadcast"),
    Mutant("averages the stretched dimensions in unbroadcast", STRETCHED_SUM, STRETCHED_SUM.replace("sum", "mean"),
           expect="test_binary_operations_broadcast"),
    Mutant("forgets the size-1 dimensions in unbroadcast", "if not stretched:", "if True:", expect="test_binary_operations_broadcast"),
    Mutant("thinks the same rank needs no unbroadcast", "if grad.shape == shape:", "if grad.ndim == len(shape):",
           expect="test_binary_operations_broadcast"),
    Mutant("sums the batch in numpy in unbroadcast", LEADING_SUM,
           "return ag.tensor(grad.detach().cpu().numpy().sum(axis=tuple(range(leading))))",
           expect="second derivative through"),
    # sum: "without keepdim, put a 1 back where each reduced axis was, then broadcast"
    Mutant("broadcasts sum's gradient without putting the axes back", "if not ctx.keepdim and grad.ndim > 0:",
           "if False:"),
    Mutant("puts back only the first reduced axis", "return tuple(1 if i in ctx.dim else n",
           "return tuple(1 if i == ctx.dim[0] else n", expect="test_reductions[sum-"),
    Mutant("detaches the gradient in sum", "return (grad.expand(ctx.input_shapes[0]),)",
           "return (grad.detach().expand(ctx.input_shapes[0]),)", expect="test_second_derivatives["),
    # mean: "divided by the number of elements reduced into each output (not by x.numel())"
    Mutant("divides mean's gradient by numel", "count = math.prod(ctx.input_shapes[0][d] for d in ctx.dim)",
           "count = math.prod(ctx.input_shapes[0])", expect="mean(dim="),
    Mutant("forgets to divide in mean", "return (expanded / count,)", "return (expanded,)",
           expect="mean(dim="),
    # max: "share the gradient EVENLY between all elements equal to the max"
    # blind round 3's escapes (02 b06, b17)
    Mutant("multiplies max's gradient by the winners' mask", "return ((grad / winners.sum().item()).where(winners, 0.0),)",
           "return (grad * winners / winners.sum().item(),)", expect="infinite gradient"),
    Mutant("makes sum's gradient a tensor of its own", "return (grad.expand(ctx.input_shapes[0]),)",
           "return (grad.expand(ctx.input_shapes[0]) * 1.0,)",
           expect="more than one element of the written-to tensor"),
    Mutant("gives every tied element the whole gradient", "return ((grad / winners.sum().item()).where(winners, 0.0),)",
           "return (grad.where(winners, 0.0),)", expect="three-way tie"),
    # "if x holds a nan, ... the nan elements share the gradient"
    Mutant("compares with a nan max (no element wins)",
           "winners = x != x if math.isnan(out.item()) else x == out", "winners = x == out",
           expect="two nans"),
    Mutant("forgets the chain rule in max", "return ((grad / winners.sum().item()).where(winners, 0.0),)",
           "return (winners / winners.sum().item(),)", expect="x.max()"),
    # max(dim): "the gradient goes to the element max picked" ... "ctx.indices"
    Mutant("lines max's gradient up with the last axis", "    if not ctx.keepdim:\n        grad = grad.reshape(kept)\n",
           "", expect="x.max(dim="),  # (test_max_along_a_dim, or the infinite-gradient test before it)
    Mutant("makes max's positions on the CPU", "arange(shape[ctx.dim], device=grad.device)", "arange(shape[ctx.dim])",
           expect="on the GPU"),
    # reshape and transpose: "undone"
    Mutant("flattens in reshape", "return (grad.reshape(ctx.input_shapes[0]),)", "return (grad.reshape(-1),)",
           expect="reshape"),
    Mutant("reshapes through numpy", "return (grad.reshape(ctx.input_shapes[0]),)",
           "return (ag.tensor(grad.detach().cpu().numpy().reshape(ctx.input_shapes[0])),)",
           expect="test_second_derivatives[reshape]"),
    Mutant("transposes the last two axes whatever was swapped", "return (grad.transpose(ctx.dim0, ctx.dim1),)",
           "return (grad.transpose(-1, -2),)", expect="transpose("),
    # matmul: "grad_a = grad @ b.T, grad_b = a.T @ grad"
    Mutant("forgets to transpose b in matmul", "grad_a = grad @ b.T if", "grad_a = grad @ b if", expect="a @ b"),
    Mutant("multiplies in the wrong order in matmul", "grad_b = a.T @ grad if", "grad_b = grad.T @ a if",
           expect="a @ b"),
    Mutant("reads the wrong needs_input_grad in matmul", "grad_a = grad @ b.T if ctx.needs_input_grad[0]",
           "grad_a = grad @ b.T if ctx.needs_input_grad[1]", expect="constant"),
    # matmul: "a 1-D b is a column vector", "the engine does NOT unbroadcast matmul's gradients"
    Mutant("takes a 1-D b for a row", "b2 = b.reshape(-1, 1) if b.ndim == 1 else b",
           "b2 = b.reshape(1, -1) if b.ndim == 1 else b", expect="1-D"),
    Mutant("leaves a shared operand's gradient batched", GRAD_B,
           "grad_b = (a2.transpose(-1, -2) @ grad2).reshape(b.shape)", expect="a @ b"),
    Mutant("sums matmul's batch dimensions in numpy", GRAD_B,
           "grad_b = ag.tensor((a2.transpose(-1, -2) @ grad2).detach().cpu().numpy()"
           ".sum(axis=tuple(range(grad2.ndim - b2.ndim)))).reshape(b.shape)",
           expect="second derivative through"),
    Mutant("detaches the incoming gradient of a batched matmul", GRAD_A,
           "grad_a = unbroadcast(grad2.detach() @ b2.transpose(-1, -2), a2.shape).reshape(a.shape)",
           expect="second derivative through"),
    # getitem: "where an element was read several times its gradients ADD UP"
    Mutant("assigns in getitem", SCATTER, "return (zeros.index_put(ctx.index, grad, accumulate=False),)",
           expect="repeat"),
    Mutant("detaches the gradient in getitem", SCATTER,
           "return (zeros.index_put(ctx.index, grad.detach(), accumulate=True),)",
           expect="second derivative through"),
    # blind round 1's b11: right numbers, one zeros tensor of x's shape per index read
    Mutant("scatters each read of an index array into a zeros tensor of its own", SCATTER,
           "total = zeros\n    if getattr(ctx.index, 'ndim', 0) == 1:  # each read is a use: add them up\n"
           "        for k, position in enumerate(ctx.index.tolist()):\n"
           "            total = total + grad.new_zeros(ctx.input_shapes[0]).index_put(position, grad[k])\n"
           "        return (total,)\n"
           "    return (zeros.index_put(ctx.index, grad, accumulate=True),)",
           expect="slow on an embedding lookup: looks quadratic"),
    # "grad_x has x's shape and grad's dtype", on grad's device
    Mutant("makes getitem's zeros with ag.zeros (float32)", "zeros = grad.new_zeros(ctx.input_shapes[0])",
           "zeros = ag.zeros(ctx.input_shapes[0])", expect="your getitem_backward returned a float32 gradient for input 0 of"),
    Mutant("makes getitem's zeros on the CPU", "zeros = grad.new_zeros(ctx.input_shapes[0])",
           "zeros = ag.zeros(ctx.input_shapes[0], dtype=grad.dtype)", expect="on the GPU"),
    # "never change grad in place"
    Mutant("scales the gradient in place in mean", "(expanded,) = sum_backward(ctx, grad)",
           "(expanded,) = sum_backward(ctx, grad.mul_(1.0 / count))", expect="in place"),
]


@pytest.mark.parametrize("mutant", MUTANTS, ids=str)
def test_a_planted_mistake_is_caught(checkout, mutant):
    assert_caught(checkout, KATA, FILE, SOURCE, mutant)


# Correct, and written differently from reference/solutions/shapes.py: unbroadcast by a reshape to the
# kept shape, reductions by multiplying with ones, max by comparisons with the result, matmul
# with 1-D operands made 2-D, indexing the same scatter-add.
BY_ONES_AND_COMPARISONS = '''
from plugin import engine as ag


def unbroadcast(grad, shape):
    shape = tuple(shape)
    extra = grad.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(extra + i for i, n in enumerate(shape) if n == 1 and grad.shape[extra + i] != 1)
    if not axes:
        return grad
    return grad.sum(dim=axes).reshape(shape)


def _back(ctx, grad):
    shape = ctx.input_shapes[0]
    kept = [n for n in shape]
    for d in ctx.dim:
        kept[d] = 1
    return grad.reshape(tuple(kept)) * grad.new_ones(shape)


def sum_backward(ctx, grad):
    kept = [1 if d in ctx.dim else n for d, n in enumerate(ctx.input_shapes[0])]
    return (grad.reshape(tuple(kept)).expand(ctx.input_shapes[0]),)  # a view, as torch's


def mean_backward(ctx, grad):
    count = 1
    for d in ctx.dim:
        count = count * ctx.input_shapes[0][d]
    return (_back(ctx, grad) / count,)


def max_backward(ctx, grad):
    shape = ctx.input_shapes[0]
    if ctx.dim is None:
        x, out = ctx.saved_tensors
        ties = ((x == out) + (x != x)).to(dtype=x.dtype)  # a nan max: the nans
        return ((grad / ties.sum()).where(ties > 0, 0.0),)  # select: inf * 0 would be nan
    kept = tuple(1 if i == ctx.dim else n for i, n in enumerate(shape))
    where = [1] * len(shape)
    where[ctx.dim] = shape[ctx.dim]
    positions = ag.arange(shape[ctx.dim], device=grad.device).reshape(tuple(where))
    chosen = positions == ctx.indices.reshape(kept)
    return (grad.reshape(kept).where(chosen, 0.0),)


def reshape_backward(ctx, grad):
    return (grad.reshape(tuple(ctx.input_shapes[0])),)


def transpose_backward(ctx, grad):
    return (grad.transpose(ctx.dim1, ctx.dim0),)


def matmul_backward(ctx, grad):
    a, b = ctx.saved_tensors
    a3 = a.reshape((1,) + tuple(a.shape)) if a.ndim == 1 else a
    b3 = b.reshape(tuple(b.shape) + (1,)) if b.ndim == 1 else b
    g = grad
    if b.ndim == 1:
        g = g.reshape(tuple(g.shape) + (1,))
    if a.ndim == 1:
        g = g.reshape(tuple(g.shape[:-1]) + (1,) + tuple(g.shape[-1:]))
    grad_a = grad_b = None
    if ctx.needs_input_grad[0]:
        grad_a = unbroadcast(g @ b3.transpose(-1, -2), a3.shape).reshape(a.shape)
    if ctx.needs_input_grad[1]:
        grad_b = unbroadcast(a3.transpose(-1, -2) @ g, b3.shape).reshape(b.shape)
    return grad_a, grad_b


def getitem_backward(ctx, grad):
    return (grad.new_zeros(ctx.input_shapes[0]).index_put(ctx.index, grad, accumulate=True),)
'''

VARIANTS = {"loops and scatters (test_kata_02)": ALTERNATIVE, "by ones and comparisons": BY_ONES_AND_COMPARISONS}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_a_correct_solution_written_differently_is_done(checkout, name):
    assert_correct_is_done(checkout, KATA, FILE, VARIANTS[name])
