"""Kata 05: the gradients a backward pass starts from (the seeds).

Read README.md first. Run this kata alone with:  pytest --kata 5

`y.backward(gradient)`, `ag.autograd.backward(tensors, grad_tensors)` and
`ag.autograd.grad(outputs, inputs, grad_outputs)` all call your function first, before
anything else happens: it turns what the user gave (or did not give) into one starting
gradient per output. The engine then runs the backward pass from those seeds.

Tensors here have torch's API: `t.shape` (a tuple), `t.numel()`, `t.dtype`,
`t.requires_grad`, `t.new_ones(shape)`, and `ag.ones_like(t)` from the import below.
"""
from plugin import engine as ag  # noqa: F401  (the engine's public API: ag.ones_like, ...)


def make_root_grads(outputs, grad_outputs):
    """Return a list of seeds, one per output, in the order of `outputs`.

    outputs       a tuple of tensors (the roots of the backward pass).
    grad_outputs  None, or a sequence (tuple or list) holding a tensor or None per output.
                  None as a whole means "None for every output".

    For output number i, with g = grad_outputs[i]:
    - g is a tensor: g must have exactly the output's shape (no broadcasting), else
          RuntimeError("Mismatch in shape: grad_output[i] has a shape of torch.Size([...])
          and output[i] has a shape of torch.Size([...]).")  (one line, sizes as lists,
          e.g. torch.Size([2, 3]), torch.Size([]) for shape ()). The seed is g itself, cast
          to the output's dtype when the two differ (g.to(dtype=output.dtype), as torch
          does: a float64 gradient for a float32 output gives a float32 seed).
    - g is None and the output requires grad: the output must have exactly one element
          (shape (), (1,), (1, 1), ...), else
          RuntimeError("grad can be implicitly created only for scalar outputs").
          The seed is a new tensor of ones with the output's shape, dtype and device, which
          does not require grad (ag.ones_like(output) or output.new_ones(output.shape)), made
          afresh for every call: a hook may change a seed in place.
    - g is None and the output does not require grad: no error here (see below).
    - g is anything else (a number, a list): TypeError("gradients can be either Tensors or
          None, but got float"), with the name of g's type.
    Entries of grad_outputs beyond the last output are not looked at (torch zips the two).

    Then, only after every seed has been made (torch's order), each output must require
    grad, else RuntimeError("element i of tensors does not require grad and does not have
    a grad_fn"). And when grad_outputs is a sequence with fewer entries than outputs:
    RuntimeError("got N tensors and M gradients") (N outputs, M gradients).

    The messages are torch's, word for word: the tests compare them with torch's own.
    """
    raise NotImplementedError("make_root_grads: see katas/05_seeding/README.md")
