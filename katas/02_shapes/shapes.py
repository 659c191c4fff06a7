"""Kata 02: gradients that change shape.

Read README.md first. Run this kata alone with:  pytest --kata 2

Here each output has a different shape from its input: broadcasting, reductions (sum, mean,
max), reshape and transpose, matrix products, indexing. A rule receives
    ctx   the operation's node: `ctx.input_shapes[0]` is the input's shape, and each
          operation leaves what its backward needs on it (listed in each docstring);
    grad  the gradient of the loss with respect to the output, in the OUTPUT's shape;
and returns a tuple with one gradient per input, each in that INPUT's shape and dtype (or
None for an input that needs no gradient). Use tensor operations (.sum, .reshape,
.transpose, @, *, comparisons, .index_put), never numpy: with create_graph=True the engine
records them, which is how second derivatives work. The tests also run on a simulated GPU:
make new tensors on grad's device (grad.new_zeros(shape), ag.arange(n, device=grad.device)).

`unbroadcast` is not a rule: the engine calls it on the gradient of every binary
elementwise operation (+ - * / **) whose operand was broadcast.
"""
from plugin import engine as ag  # noqa: F401  (the engine's public API: ag.arange, ag.zeros, ...)


def unbroadcast(grad, shape):
    """Sum `grad` down to `shape`, the shape of an operand that broadcasting stretched.

    - `grad` is a Tensor in the broadcast (output) shape; `shape` is a tuple of ints that
      broadcasts to `grad.shape`: it may have fewer dimensions (missing leading ones) and
      size-1 dimensions where `grad` has more.
    - Return a Tensor of exactly `shape` and `grad`'s dtype, where each element is the sum
      of `grad` over every position its value was copied to (torch: `grad.sum_to_size`).
    - `shape` may be `()` (a 0-d operand: sum everything). If `grad` already has `shape`,
      return it as it is.
    """
    raise NotImplementedError("unbroadcast: see katas/02_shapes/README.md")


def sum_backward(ctx, grad):
    """out = x.sum(dim, keepdim). Return (grad_x,).

    - `ctx.input_shapes[0]`: x's shape.
    - `ctx.dim`: the reduced axes as a sorted tuple of non-negative ints (every axis when the
      forward had dim=None; `-1` has already become `x.ndim - 1`).
    - `ctx.keepdim`: whether the reduced axes stayed in `out` as size 1.
    - `grad` has out's shape. Every element of x went into the sum once, so each gets the
      gradient of the output element it fed: grad_x has x's shape and grad's dtype.
    - As torch's, grad_x is grad expanded to x's shape (a view that repeats each value, not
      a copy): changing it in place (`autograd.grad(x.sum(), x)[0].add_(1)`) is torch's
      error "unsupported operation: more than one element of the written-to tensor ...".
    """
    raise NotImplementedError("sum_backward: see katas/02_shapes/README.md")


def mean_backward(ctx, grad):
    """out = x.mean(dim, keepdim). Return (grad_x,).

    The same ctx as sum_backward (`ctx.input_shapes[0]`, `ctx.dim`, `ctx.keepdim`). The mean
    is the sum divided by the number of elements reduced into each output element.
    """
    raise NotImplementedError("mean_backward: see katas/02_shapes/README.md")


def max_backward(ctx, grad):
    """out = x.max() or out, indices = x.max(dim, keepdim). Return (grad_x,).

    - `ctx.dim is None`: out = x.max(), a 0-d tensor. `x, out = ctx.saved_tensors`. Like
      torch, share the gradient EVENLY between all elements equal to the max (a tie of k
      elements gives each grad / k). If x holds a nan, the max is nan, and the nan elements
      share the gradient (nan == nan is False: `x != x` finds them).
    - otherwise `ctx.dim` is the reduced axis (a non-negative int), `ctx.keepdim` a bool, and
      `ctx.indices` an int64 Tensor of out's shape: for each output element, the position
      along `ctx.dim` of the element max picked. The gradient goes to that element only; all
      other elements get 0.
    - grad_x has x's shape (`ctx.input_shapes[0]`) and grad's dtype.
    """
    raise NotImplementedError("max_backward: see katas/02_shapes/README.md")


def reshape_backward(ctx, grad):
    """out = x.reshape(...) or x.view(...). Return (grad_x,) in x's shape, `ctx.input_shapes[0]`."""
    raise NotImplementedError("reshape_backward: see katas/02_shapes/README.md")


def transpose_backward(ctx, grad):
    """out = x.transpose(dim0, dim1), or x.T for a 2-D x. Return (grad_x,) in x's shape.

    `ctx.dim0` and `ctx.dim1` are the two swapped axes, as non-negative ints.
    """
    raise NotImplementedError("transpose_backward: see katas/02_shapes/README.md")


def matmul_backward(ctx, grad):
    """out = a @ b. Return (grad_a, grad_b).

    - `a, b = ctx.saved_tensors`; each is at least 1-D. As in torch: a 1-D `a` is a row
      vector (its dimension disappears from out), a 1-D `b` a column vector (likewise), and
      the dimensions before the last two are batch dimensions, broadcast between a and b.
    - `grad` has out's shape. grad_a must have a's shape and grad_b b's shape: the engine
      does NOT unbroadcast matmul's gradients for you (call `unbroadcast` yourself).
    - `ctx.needs_input_grad[i]` is False for an operand that needs no gradient; you may
      return None in its place.
    """
    raise NotImplementedError("matmul_backward: see katas/02_shapes/README.md")


def getitem_backward(ctx, grad):
    """out = x[index]. Return (grad_x,).

    - `ctx.index` is the index as numpy takes it: an int, a slice, a numpy int array, or a
      tuple of those (index tensors have become numpy arrays).
    - `ctx.input_shapes[0]` is x's shape; `grad` has out's shape.
    - grad_x is zero where x was not read, and where an element was read several times (an
      index that repeats) its gradients ADD UP. `grad.new_zeros(shape)` and
      `t.index_put(index, values, accumulate=True)` are the two tensor operations you need.
    """
    raise NotImplementedError("getitem_backward: see katas/02_shapes/README.md")
