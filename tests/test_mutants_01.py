"""Kata 01's mutation suite: one plausible mistake per sentence of the rules' contract (the
stub docstrings and the lesson), each planted in the reference rules and graded: the kata must
not come out done. Correct solutions written differently must come out done."""
import pytest

from kit import assert_stubs_all_todo, learner_source
from mutation import Mutant, assert_caught, assert_correct_is_done

KATA = "01_elementwise_rules"
FILE = "rules.py"
SOURCE = "import numpy as np\n\nfrom plugin import engine as ag\n" + learner_source("rules")

MUTANTS = [
    # "the chain rule: grad times the local derivative"
    Mutant("forgets the chain rule in mul", "grad_a = grad * b if", "grad_a = b if", expect="a * b"),
    Mutant("forgets the chain rule in log", "return (grad / x,)", "return (1 / x,)", expect="x.log()"),
    Mutant("multiplies grad by the exponent first in pow (a blind round's b09)", "(grad * (exponent * base ** (exponent - 1)))",
           "(grad * exponent * base ** (exponent - 1))", expect="the derivative first, then times grad"),
    Mutant("multiplies log's gradient by 1 / x", "return (grad / x,)", "return (grad * (1 / x),)",
           expect="tiny float32"),  # blind round 3's 01 b10: 1 / x overflows where grad / x does not
    Mutant("multiplies div's gradient by 1 / b", "grad_a = grad / b if", "grad_a = grad * (1 / b) if",
           expect="tiny float32"),
    Mutant("forgets the chain rule in pow", "(grad * (exponent * base ** (exponent - 1)))",
           "(exponent * base ** (exponent - 1))", expect="x ** "),
    # "for out = a * b, a's gradient is grad * b and b's is grad * a"
    Mutant("swaps the operands in mul", "grad_a = grad * b if", "grad_a = grad * a if", expect="a * b"),
    Mutant("forgets the minus of sub", "    return grad, -grad\n", "    return grad, grad\n", expect="a - b"),
    # blind round 2's b11: -x as 0 - x, so a zero gradient keeps its sign (1 / x.grad: inf, not -inf)
    Mutant("negates as 0 - grad in neg", "    return (-grad,)\n", "    return (0.0 - grad,)\n",
           expect="The piece at fault: `neg_backward`"),
    Mutant("forgets the minus of neg", "return (-grad,)", "return (grad,)", expect="x.neg()"),
    Mutant("forgets the minus of div's b", "grad_b = -grad * (a / b / b)", "grad_b = grad * (a / b / b)",
           expect="a / b"),
    Mutant("forgets the square in div's b", "grad_b = -grad * (a / b / b)", "grad_b = -grad * (a / b)",
           expect="a / b"),
    # "torch computes it as -(a / b) / b: b * b overflows float32 from |b| = 2e19 on"
    Mutant("squares b in div's b (overflows for a large b)", "grad_b = -grad * (a / b / b)",
           "grad_b = -grad * a / (b * b)", expect="a / b with a large b"),
    Mutant("takes exp of the saved output again", "return (grad * out,)", "return (grad * out.exp(),)",
           expect="x.exp()"),
    Mutant("applies sigmoid to the saved output again", "return (grad * out * (1 - out),)",
           "return (grad * out.sigmoid() * (1 - out.sigmoid()),)", expect="x.sigmoid()"),
    Mutant("forgets the square in tanh", "return (grad * (1 - out * out),)", "return (grad * (1 - out),)",
           expect="x.tanh()"),
    Mutant("masks relu with the gradient's sign", "where(out <= 0, grad)",
           "where(grad <= 0, grad)", expect="x.relu()"),
    # "needs_input_grad[i] is False for a constant input": None only there
    Mutant("reads the wrong needs_input_grad in mul", "grad_a = grad * b if ctx.needs_input_grad[0]",
           "grad_a = grad * b if ctx.needs_input_grad[1]", expect="is None, torch's is set"),
    Mutant("inverts needs_input_grad in div", "grad_a = grad / b if ctx.needs_input_grad[0]",
           "grad_a = grad / b if not ctx.needs_input_grad[0]", expect="a / b"),
    # "for 0 ** e the second is 0 * ln(0) = nan, where torch gives 0. Yours should too."
    Mutant("takes ln(0) in pow's exponent gradient", "grad * (out * base.log()).where(keep, 0.0)", "grad * out * base.log()",
           expect="with zeros in the base"),
    # "Polynomial features, x ** ag.arange(n), meet this corner at x = 0, and so do the tests."
    Mutant("leaves 0 ** 0's base gradient to the formula (nan)", "(grad * (exponent * base ** (exponent - 1))).where(exponent != 0, 0.0)",
           "(grad * (exponent * base ** (exponent - 1)))", expect="a zero exponent"),
    Mutant("divides by the base in pow", "(grad * (exponent * base ** (exponent - 1)))",
           "(grad * exponent * out / base)", expect="with zeros in the base"),
    # "its gradient passes where out > 0"
    Mutant("leaves relu's blocked zeros -0.0 where out is -0.0", "(0 * out + 0.0)", "(0 * out)",
           expect="signs of the zeros"),  # blind round 3's 01 b13, the automatic score's survivors
    Mutant("lets relu's gradient through where out is 0", "where(out <= 0, grad)", "where(out < 0, grad)",
           expect="x.relu()"),
    # "write rules with tensor operations: second derivatives", with the rule in the middle of
    # a graph, where its incoming gradient is part of the graph
    Mutant("detaches the gradient in add", "    return grad, grad\n", "    return grad.detach(), grad.detach()\n",
           expect="middle_of_a_graph[add-"),
    Mutant("detaches the gradient in sub", "    return grad, -grad\n", "    return grad, -grad.detach()\n",
           expect="middle_of_a_graph[sub-"),
    Mutant("detaches the gradient in neg", "return (-grad,)", "return (-grad.detach(),)",
           expect="second derivative through neg"),
    Mutant("goes through numpy in sub", "    return grad, -grad\n", "    return grad, ag.tensor(-grad.numpy())\n",
           expect="sub"),
    Mutant("detaches the saved input in mul", "grad_a = grad * b if", "grad_a = grad * b.detach() if",
           expect="second derivative through mul"),
    Mutant("detaches the exponent in pow", "(grad * (exponent * base ** (exponent - 1)))",
           "(grad * exponent.detach() * base ** (exponent.detach() - 1))", expect="second derivative through pow"),
    Mutant("reads the saved output's data in exp", "return (grad * out,)", "return (grad * out.data,)",
           expect="test_second_derivatives[exp]"),
    Mutant("computes tanh's derivative in numpy", "return (grad * (1 - out * out),)",
           "return (grad * ag.tensor(1 - out.numpy() ** 2),)", expect="tanh"),
    # "a number takes the tensor's dtype, so float32 stays float32", and the GPU keeps its tensors
    Mutant("makes sigmoid's ones with numpy (float64)", "return (grad * out * (1 - out),)",
           "return (grad * out * (ag.tensor(np.ones(out.shape)) - out),)", expect="float32"),
    Mutant("makes tanh's ones on the CPU", "return (grad * (1 - out * out),)",
           "return (grad * (ag.ones_like(out.cpu()).to(out.dtype) - out * out),)", expect="on the GPU"),
    Mutant("builds relu's mask in numpy", "where(out <= 0, grad)",
           "where(ag.tensor(out.detach().cpu().numpy() <= 0), grad)",
           expect="on the GPU"),
    # "never change grad in place"
    Mutant("scales the gradient in place in neg", "return (-grad,)", "return (grad.mul_(-1),)",
           expect="changed its incoming gradient in place"),
]


def test_the_shipped_stubs_are_all_to_dos(checkout):
    outcomes = assert_stubs_all_todo(checkout.runpytest("-p", "no:randomly"), KATA)
    assert outcomes.get("todo", 0) >= 100, outcomes


@pytest.mark.parametrize("mutant", MUTANTS, ids=str)
def test_a_planted_mistake_is_caught(checkout, mutant):
    assert_caught(checkout, KATA, FILE, SOURCE, mutant)


# Correct, and written differently from reference/solutions/rules.py: gradients for every input whatever
# needs_input_grad says, derivatives from x rather than from the output where both work, a
# comparison mask for relu, the pow corners with arithmetic instead of where().
DERIVATIVES_FROM_FORMULAS = '''
from plugin import engine as ag


def add_backward(ctx, grad):
    return grad * 1.0, grad * 1.0


def sub_backward(ctx, grad):
    return grad * 1.0, grad * -1.0


def mul_backward(ctx, grad):
    a, b = ctx.saved_tensors
    return b * grad, a * grad


def div_backward(ctx, grad):
    a, b = ctx.saved_tensors
    return grad / b, grad * ((-a) / b / b)  # divided: 1 / b overflows float32 for a tiny b, b * b for a large b


def neg_backward(ctx, grad):
    return (grad * -1.0,)  # not 0.0 - grad: a zero gradient would come out +0.0 where torch gives -0.0


def pow_backward(ctx, grad):
    base, exponent, out = ctx.saved_tensors
    zero = (base == 0) * 1.0
    # d/dbase is 0 where the exponent is 0, even for an infinite incoming gradient: selected
    grad_base = (grad * 0).where(exponent == 0, grad * (exponent * base ** (exponent - 1)))
    # ln(0) is replaced only where 0 ** e is finite (e >= 0): 0 ** -1 keeps inf * ln(0) = -inf
    grad_exponent = grad * out * (base + zero * (exponent >= 0)).log()
    return grad_base, grad_exponent


def exp_backward(ctx, grad):
    (out,) = ctx.saved_tensors
    return (out * grad,)


def log_backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return (grad / x,)  # not grad * x ** -1: 1 / x overflows float32 for a tiny x


def sigmoid_backward(ctx, grad):
    (out,) = ctx.saved_tensors
    return (grad * (out - out * out),)


def tanh_backward(ctx, grad):
    (out,) = ctx.saved_tensors
    return (grad * (1 - out) * (1 + out),)


def relu_backward(ctx, grad):
    (out,) = ctx.saved_tensors
    return ((out - out).where(out <= 0, grad),)
'''

# Correct, and written with the engine's where() and the needs_input_grad shortcut everywhere.
WITH_WHERE = '''
from plugin import engine as ag


def _wanted(ctx, *grads):
    return tuple(g if need else None for g, need in zip(grads, ctx.needs_input_grad))


def add_backward(ctx, grad):
    return _wanted(ctx, grad, grad)


def sub_backward(ctx, grad):
    return _wanted(ctx, grad, -grad)


def mul_backward(ctx, grad):
    a, b = ctx.saved_tensors
    return _wanted(ctx, grad * b, grad * a)


def div_backward(ctx, grad):
    a, b = ctx.saved_tensors
    grad_a = grad / b
    return _wanted(ctx, grad_a, -grad_a * a / b)


def neg_backward(ctx, grad):
    return (-grad,)


def pow_backward(ctx, grad):
    base, exponent, out = ctx.saved_tensors
    zero = (base == 0) * (exponent >= 0) > 0  # 0 ** e finite: its exponent's gradient is 0
    safe = ag.ones_like(base).where(zero, base)
    grad_base = ag.zeros_like(base).where(exponent == 0, grad * (exponent * base ** (exponent - 1)))
    grad_exponent = ag.zeros_like(out).where(zero, grad * out * safe.log())
    return _wanted(ctx, grad_base, grad_exponent)


def exp_backward(ctx, grad):
    return (grad * ctx.saved_tensors[0],)


def log_backward(ctx, grad):
    return (grad / ctx.saved_tensors[0],)


def sigmoid_backward(ctx, grad):
    (out,) = ctx.saved_tensors
    return (grad * out * (1.0 - out),)


def tanh_backward(ctx, grad):
    (out,) = ctx.saved_tensors
    return (grad * (1 - out ** 2),)


def relu_backward(ctx, grad):
    (out,) = ctx.saved_tensors
    return ((out * 0 + 0.0).where(out <= 0, grad),)
'''

VARIANTS = {"derivatives from formulas": DERIVATIVES_FROM_FORMULAS, "with where": WITH_WHERE}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_a_correct_solution_written_differently_is_done(checkout, name):
    assert_correct_is_done(checkout, KATA, FILE, VARIANTS[name])
