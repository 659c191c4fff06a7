"""Kata 05, model solution: the gradients a backward pass starts from.

backward() computes a vector-Jacobian product: the gradient of sum(output * seed). For a
one-element output the seed can only be 1, so it may be left out; for any other output
torch refuses to guess and asks for `gradient=` (a seed of the output's shape).
"""

__all__ = ["make_root_grads"]


def make_root_grads(outputs, grad_outputs):
    """One seed per output: the given gradient, or ones for a one-element output."""
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    seeds = []
    for index, (output, grad) in enumerate(zip(outputs, grad_outputs)):
        if grad is None:
            if output.requires_grad and output.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            grad = output.new_ones(output.shape)
        elif not isinstance(grad, type(output)):  # a Tensor, like the output
            raise TypeError(f"gradients can be either Tensors or None, but got {type(grad).__name__}")
        elif grad.shape != output.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{index}] has a shape of {_size(grad.shape)} "
                f"and output[{index}] has a shape of {_size(output.shape)}."
            )
        elif grad.dtype != output.dtype:
            grad = grad.to(dtype=output.dtype)  # torch casts a seed to its output's dtype
        seeds.append(grad)
    # Checked after the seeds, in torch's order, so the same mistake gives the same message.
    if len(seeds) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(seeds)} gradients")
    for index, output in enumerate(outputs):
        if not output.requires_grad:
            raise RuntimeError(
                f"element {index} of tensors does not require grad and does not have a grad_fn"
            )
    return seeds


def _size(shape):
    return f"torch.Size({list(shape)})"
