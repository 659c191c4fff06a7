"""Kata 09 tests: jacobian, hessian_vector_product and gradient_penalty against torch.

Each function under test is built twice from the same code, once on torch and once on the
engine (`lib`), so that torch.autograd.functional gives the expected answer."""
import numpy as np
import pytest
# torch: imported in the tests, after your code ran (a kata not started never waits for it)

RNG = np.random.default_rng(9)

# f(lib) -> a function of one tensor; the same code for torch and the engine
VECTOR_FUNCTIONS = {
    "sigmoid(x) * x": lambda lib: (lambda x: x.sigmoid() * x),
    "exp(x[:2]) * 2": lambda lib: (lambda x: (x[0:2] * x[1:3]).exp() * 2),
    "tanh(W @ x)": lambda lib: (lambda x: (lib.tensor(np.arange(12.0).reshape(4, 3) / 10) @ x).tanh()),
    "sum of squares": lambda lib: (lambda x: (x * x).sum()),
    "a matrix: x x^T": lambda lib: (lambda x: x.reshape(3, 1) @ x.tanh().reshape(1, 3)),
    "a constant (x unused)": lambda lib: (lambda x: lib.ones(2) * 3),
    "x * x.sum() (x's shape, not elementwise)": lambda lib: (lambda x: x * x.sum()),
}
SCALAR_FUNCTIONS = {
    "sum(x**3)": lambda lib: (lambda x: (x ** 3).sum()),
    "sum(sigmoid(x) * exp(x))": lambda lib: (lambda x: (x.sigmoid() * x.exp()).sum()),
    "log(sum(exp(x)))": lambda lib: (lambda x: x.exp().sum().log()),
    "matrix: sum(tanh(x) @ x.T)": lambda lib: (lambda x: (x.tanh() @ x.T).sum()),
}


def values(t):
    return t.detach().numpy()


def assert_close(actual, expected, what):
    __tracebackhide__ = True
    expected = expected.detach().numpy()
    assert hasattr(actual, "detach") and hasattr(actual, "shape"), (
        f"{what} must return an engine tensor, not {type(actual).__name__}"
    )
    assert tuple(actual.shape) == tuple(expected.shape), (
        f"{what}: shape {tuple(actual.shape)}, torch's is {tuple(expected.shape)}"
    )
    mine = values(actual)
    assert mine.dtype == expected.dtype, f"{what}: dtype {mine.dtype}, torch's is {expected.dtype}"
    if expected.dtype == np.float64 and mine.dtype == np.float64:
        # Both exact up to rounding: an approximation (finite differences) is not enough.
        rtol, atol = 1e-12, 1e-13 * max(1.0, float(np.abs(expected).max(initial=0.0)))
    else:
        rtol, atol = 1e-6, 1e-9
    assert np.allclose(mine, expected, rtol=rtol, atol=atol), (
        f"{what} differs from torch's: expected {np.array2string(expected, precision=5, separator=', ')}, "
        f"got {np.array2string(mine, precision=5, separator=', ')}"
        + (f" (largest difference {np.abs(mine - expected).max():.2g}: the result must be exact up to "
           "rounding, as torch's; an approximation such as finite differences is not)"
           if mine.shape == expected.shape and np.allclose(mine, expected, rtol=1e-6, atol=1e-9) else "")
    )


def call(what, function, *args):
    """Call a learner function; torch's "backward a second time" error gets the kata's advice."""
    __tracebackhide__ = True
    try:
        return function(*args)
    except RuntimeError as error:
        if "Trying to backward through the graph a second time" in str(error):
            pytest.fail(f"{what}: the graph was freed after the first vector-Jacobian product; "
                        "pass retain_graph=True to every autograd.grad call but the last "
                        f"(torch: {str(error)[:51].strip()})", pytrace=False)
        if "does not require grad and does not have a grad_fn" in str(error):
            pytest.fail(f"{what}: {_why_no_graph(*args)} (torch: {error})", pytrace=False)
        raise


def _why_no_graph(f, x, *rest):
    """Why a gradient had no graph to differentiate, checked on the model solution's engine:
    f linear in x (its gradient is a constant, with no graph even under create_graph=True),
    else a first autograd.grad without create_graph=True."""
    from plugin import engine

    point = engine.tensor(x.detach().cpu().numpy(), requires_grad=True)
    try:
        (g,) = engine.autograd.grad(f(point), point, create_graph=True, allow_unused=True)
    except RuntimeError:
        g = None
    if g is None or not g.requires_grad:
        return ("f is linear in x here: its gradient does not depend on x, so it has no graph even "
                "with create_graph=True, and differentiating it again fails. The answer is zeros "
                "(torch.autograd.functional gives zeros): check g.requires_grad before the second call")
    return "a gradient without a graph was differentiated again; the first autograd.grad needs create_graph=True"


# --- jacobian ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", VECTOR_FUNCTIONS)
def test_jacobian_equals_torchs(ag, solution, name):
    x = RNG.normal(size=3)
    actual = call("jacobian", solution.jacobian, VECTOR_FUNCTIONS[name](ag), ag.tensor(x, requires_grad=True))
    import torch
    expected = torch.autograd.functional.jacobian(VECTOR_FUNCTIONS[name](torch), torch.tensor(x))
    assert_close(actual, expected, f"jacobian of {name}")


@pytest.mark.parametrize("shape", [(2, 3), (), (4, 1)])
def test_jacobian_keeps_both_shapes(ag, solution, shape):
    x = RNG.normal(size=shape)

    def f(lib):
        return lambda t: (t.exp() * 0.5).reshape(-1) if t.ndim else (t * lib.tensor([1.0, -2.0, 3.0]))

    actual = call("jacobian", solution.jacobian, f(ag), ag.tensor(x))
    import torch
    expected = torch.autograd.functional.jacobian(f(torch), torch.tensor(x))
    assert_close(actual, expected, f"jacobian at an x of shape {shape}")


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_jacobian_of_a_function_that_does_not_reach_x_is_zero(ag, solution, dtype):
    """f(x) = w * 2, w a weight: f's output requires grad, but its graph never reaches x, so
    autograd.grad finds no gradient for x (None with allow_unused). torch's jacobian: zeros,
    in x's dtype."""
    x, w = RNG.normal(size=3).astype(dtype), RNG.normal(size=2).astype(dtype)

    def f(lib, weight):
        return lambda t: weight * 2

    weight = ag.tensor(w, requires_grad=True)
    actual = call("jacobian", solution.jacobian, f(ag, weight), ag.tensor(x))
    import torch
    expected = torch.autograd.functional.jacobian(f(torch, torch.tensor(w, requires_grad=True)), torch.tensor(x))
    assert_close(actual, expected, "jacobian of w * 2 (a weight's, not x's)")


def test_jacobian_of_a_float32_function_is_float32(ag, solution):
    x = ag.tensor(RNG.normal(size=3).astype(np.float32))
    J = call("jacobian", solution.jacobian, lambda t: t.tanh() * t, x)
    assert J.dtype == ag.float32, f"the Jacobian at a float32 x must be float32 (as torch's), got {J.dtype}"


def test_jacobian_calls_f_once_and_reuses_its_graph(ag, solution):
    calls = []

    def f(t):
        calls.append(1)
        return (t.sigmoid() * t).exp()  # saves tensors: a freed graph cannot run again

    call("jacobian", solution.jacobian, f, ag.tensor(RNG.normal(size=4), requires_grad=True))
    assert len(calls) == 1, (
        f"jacobian called f {len(calls)} times: call it once and take every row from its one graph "
        "(retain_graph=True)"
    )


def test_jacobian_leaves_x_alone(ag, solution):
    x = ag.tensor(RNG.normal(size=3), requires_grad=True)
    J = call("jacobian", solution.jacobian, lambda t: t.exp() * t, x)
    assert x.grad is None, "jacobian left a .grad on x: use ag.autograd.grad, which returns gradients"
    assert not J.requires_grad, "the Jacobian must not require grad (torch's create_graph=False default)"


def test_a_jacobian_grows_like_its_number_of_entries(ag, solution, counted_growth):
    """n outputs of n inputs: n vector-Jacobian products of n entries each, so 8x the outputs
    may cost about 64x the work (the Jacobian has 64x the entries), not 512x: a seed row built
    from an identity matrix made again for each row is. The work is counted, not timed:
    lines of Python and the memory they allocate."""
    call("jacobian", solution.jacobian, lambda t: t * 2.0, ag.tensor([1.0]))  # a stub stops here

    def make(n):
        x = ag.tensor(np.linspace(-1.0, 1.0, n))
        # through call(): a freed graph gets the kata's advice here too (the sixth walk)
        return lambda: call("jacobian", solution.jacobian, lambda t: (t * 0.5).tanh(), x)

    counted_growth(make, 12, what="outputs", graph="a Jacobian", memory=True, looks="cubic",
                   reference=lambda: solution.using("reference"))


# --- hessian_vector_product -------------------------------------------------------------------

@pytest.mark.parametrize("name", SCALAR_FUNCTIONS)
def test_hvp_equals_torchs(ag, solution, name):
    shape = (2, 3) if name.startswith("matrix") else (4,)
    x, v = RNG.normal(size=shape), RNG.normal(size=shape)
    actual = call("hessian_vector_product", solution.hessian_vector_product,
                  SCALAR_FUNCTIONS[name](ag), ag.tensor(x), ag.tensor(v))
    import torch
    _, expected = torch.autograd.functional.hvp(SCALAR_FUNCTIONS[name](torch), torch.tensor(x), torch.tensor(v))
    if hasattr(actual, "detach") and not values(actual).any() and expected.abs().max() > 0:
        pytest.fail(f"hessian_vector_product of {name} gave zeros, torch's is not zero: the first "
                    "autograd.grad needs create_graph=True, or the gradient has no graph of its own "
                    "and looks constant (a zero Hessian)", pytrace=False)
    assert_close(actual, expected, f"hessian_vector_product of {name}")


def test_hvp_is_a_plain_tensor_and_leaves_x_alone(ag, solution):
    x = ag.tensor(RNG.normal(size=3), requires_grad=True)
    hv = call("hessian_vector_product", solution.hessian_vector_product,
              lambda t: (t ** 3).sum(), x, ag.tensor(RNG.normal(size=3)))
    assert x.grad is None, "hessian_vector_product left a .grad on x: use ag.autograd.grad"
    assert not hv.requires_grad, "the product must not require grad (torch's create_graph=False default)"


def test_hvp_calls_f_once(ag, solution):
    """torch's hvp calls f once: f may draw at random or count its calls, and each call
    builds a graph again (twice the work)."""
    calls = []

    def f(t):
        calls.append(1)
        return (t ** 3).sum()

    call("hessian_vector_product", solution.hessian_vector_product, f,
         ag.tensor(RNG.normal(size=3)), ag.tensor(RNG.normal(size=3)))
    assert len(calls) == 1, (
        f"hessian_vector_product called f {len(calls)} times, torch's hvp once: take both "
        "gradients from the graph of one call (create_graph=True on the first)"
    )


# --- gradient_penalty -------------------------------------------------------------------------

def make_critic(lib, weights):
    w1, b1, w2 = weights

    def critic(x):
        h = (x.reshape(x.shape[0], -1) @ w1 + b1).tanh()
        return h @ w2  # (batch, 1)

    return critic


def penalty_case(shape, alpha_shape):
    features = int(np.prod(shape[1:]))
    return {
        "real": RNG.normal(size=shape), "fake": RNG.normal(size=shape),
        "alpha": RNG.uniform(size=alpha_shape),
        "weights": [RNG.normal(size=(features, 5)) * 0.5, RNG.normal(size=5) * 0.1, RNG.normal(size=(5, 1))],
    }


def torch_penalty(case):
    import torch
    weights = [torch.tensor(w, requires_grad=True) for w in case["weights"]]
    critic = make_critic(torch, weights)
    real, fake, alpha = (torch.tensor(case[k]) for k in ("real", "fake", "alpha"))
    mixed = (alpha * real + (1 - alpha) * fake).requires_grad_()
    scores = critic(mixed)
    (g,) = torch.autograd.grad(scores, mixed, torch.ones_like(scores), create_graph=True)
    penalty = ((g.reshape(g.shape[0], -1).norm(dim=1) - 1) ** 2).mean()
    return penalty, torch.autograd.grad(penalty, weights)


def engine_penalty(ag, solution, case):
    weights = [ag.tensor(w, requires_grad=True) for w in case["weights"]]
    real, fake, alpha = (ag.tensor(case[k]) for k in ("real", "fake", "alpha"))
    penalty = call("gradient_penalty", solution.gradient_penalty, make_critic(ag, weights), real, fake, alpha)
    return penalty, weights


CASES = {"vectors (8, 3)": ((8, 3), (8, 1)), "images (4, 2, 3)": ((4, 2, 3), (4, 1, 1))}


@pytest.mark.parametrize("case_name", CASES)
def test_penalty_equals_torchs(ag, solution, case_name):
    case = penalty_case(*CASES[case_name])
    penalty, _ = engine_penalty(ag, solution, case)
    expected, _ = torch_penalty(case)
    assert penalty.numel() == 1, f"the penalty must be one number, got shape {tuple(penalty.shape)}"
    assert_close(penalty.reshape(()), expected, f"gradient_penalty on {case_name}")


@pytest.mark.parametrize("case_name", CASES)
def test_penalty_gradients_reach_the_critics_weights(ag, solution, case_name):
    case = penalty_case(*CASES[case_name])
    penalty, weights = engine_penalty(ag, solution, case)
    assert penalty.requires_grad, (
        "the penalty does not require grad: it is part of the critic's loss and must carry a graph "
        "back to the critic's weights (create_graph=True on the inner gradient; not under no_grad, "
        "not detached)"
    )
    grads = ag.autograd.grad(penalty.sum(), weights, allow_unused=True)
    _, expected = torch_penalty(case)
    for name, mine, theirs in zip(("w1", "b1", "w2"), grads, expected):
        assert mine is not None, (f"the penalty's gradient for the critic's {name} is None ({case_name}): it "
                                  "must reach every weight")
        assert_close(mine, theirs, f"the penalty's gradient for the critic's {name} ({case_name})")


def test_penalty_leaves_the_weights_grad_alone(ag, solution):
    case = penalty_case((6, 2), (6, 1))
    _, weights = engine_penalty(ag, solution, case)
    assert all(w.grad is None for w in weights), (
        "gradient_penalty put a .grad on the critic's weights: use ag.autograd.grad for the inner "
        "gradient (backward() accumulates into every weight)"
    )


# --- edges: constant gradients, float32, the caller's tensors ----------------------------------

CONSTANT_GRADIENT = {
    "sum(2x)": lambda lib, w: (lambda x: (x * 2).sum()),
    "sum(x * w), w a weight": lambda lib, w: (lambda x: (x * w).sum()),
}


@pytest.mark.parametrize("name", CONSTANT_GRADIENT)
def test_hvp_of_a_function_with_a_constant_gradient_is_zero(ag, solution, name):
    """f linear in x: its gradient does not depend on x (it may have no graph at all, or a
    graph that does not reach x). The product is zero, as torch.autograd.functional.hvp says."""
    x, v, w = RNG.normal(size=3), RNG.normal(size=3), RNG.normal(size=3)
    weight = ag.tensor(w, requires_grad=True)
    actual = call("hessian_vector_product", solution.hessian_vector_product,
                  CONSTANT_GRADIENT[name](ag, weight), ag.tensor(x), ag.tensor(v))
    import torch
    _, expected = torch.autograd.functional.hvp(
        CONSTANT_GRADIENT[name](torch, torch.tensor(w, requires_grad=True)), torch.tensor(x), torch.tensor(v))
    assert_close(actual, expected, f"hessian_vector_product of {name}")
    assert weight.grad is None, "hessian_vector_product left a .grad on f's weight: use ag.autograd.grad"


def test_hvp_at_a_float32_x_is_float32(ag, solution):
    x = ag.tensor(RNG.normal(size=3).astype(np.float32))
    v = ag.tensor(RNG.normal(size=3).astype(np.float32))
    hv = call("hessian_vector_product", solution.hessian_vector_product, lambda t: (t.tanh() * t).sum(), x, v)
    assert hv.dtype == ag.float32, f"the product at a float32 x must be float32 (as torch's), got {hv.dtype}"


def snapshot(t):
    """What the caller can see of a tensor: its values, requires_grad, and its .grad (object
    and values)."""
    grad = t.grad
    return (values(t).copy(), t.requires_grad, grad, None if grad is None else values(grad).copy())


def assert_unchanged(before, t, what):
    __tracebackhide__ = True
    data, requires_grad, grad, grad_values = before
    assert np.array_equal(values(t), data), f"{what}: its values changed"
    assert t.requires_grad == requires_grad, (
        f"{what}: requires_grad was {requires_grad}, it is {t.requires_grad} now: work on a copy "
        "(x.detach().requires_grad_()), never on the caller's tensor"
    )
    assert t.grad is grad, (
        f"{what}: its .grad was {'None' if grad is None else 'set'} and was replaced "
        f"({'None' if t.grad is None else 'a tensor'} now): use ag.autograd.grad, which touches no .grad"
    )
    if grad is not None:
        assert np.array_equal(values(t.grad), grad_values), f"{what}: its .grad was changed in place"


@pytest.mark.parametrize("requires_grad", [True, False], ids=["x requires grad", "x does not"])
@pytest.mark.parametrize("function", ["jacobian", "hessian_vector_product"])
def test_the_callers_tensors_are_left_as_they_were(ag, solution, function, requires_grad):
    """Twice in a row, with .grad already set on x and on f's weight: the same answer, and
    x, v and the weight exactly as they were (values, requires_grad, .grad)."""
    x0, w0, v0 = RNG.normal(size=3), RNG.normal(size=3), RNG.normal(size=3)
    x = ag.tensor(x0, requires_grad=requires_grad)
    if requires_grad:
        x.grad = ag.tensor(np.array([1.0, 2.0, 3.0]))
    w = ag.tensor(w0, requires_grad=True)
    w.grad = ag.tensor(np.array([4.0, 5.0, 6.0]))
    v = ag.tensor(v0)

    def f(lib, weight):
        if function == "jacobian":
            return lambda t: (t * weight).tanh() * t
        return lambda t: ((t * weight).tanh() * t).sum()

    def run():
        if function == "jacobian":
            return call(function, solution.jacobian, f(ag, w), x)
        return call(function, solution.hessian_vector_product, f(ag, w), x, v)

    before = {"x": snapshot(x), "f's weight": snapshot(w), "v": snapshot(v)}
    first, second = run(), run()
    for name, t in (("x", x), ("f's weight", w), ("v", v)):
        assert_unchanged(before[name], t, f"{function}: {name}")
    import torch
    tw = torch.tensor(w0, requires_grad=True)
    if function == "jacobian":
        expected = torch.autograd.functional.jacobian(f(torch, tw), torch.tensor(x0))
    else:
        _, expected = torch.autograd.functional.hvp(f(torch, tw), torch.tensor(x0), torch.tensor(v0))
    assert_close(first, expected, f"{function} (first call)")
    assert_close(second, expected, f"{function} (the same call again)")


def test_the_penalty_leaves_the_callers_tensors_as_they_were(ag, solution):
    case = penalty_case((6, 2), (6, 1))
    weights = [ag.tensor(w, requires_grad=True) for w in case["weights"]]
    for w in weights:
        w.grad = ag.ones_like(w)
    real, fake, alpha = (ag.tensor(case[k]) for k in ("real", "fake", "alpha"))
    tensors = {"real": real, "fake": fake, "alpha": alpha, "w1": weights[0], "b1": weights[1], "w2": weights[2]}
    before = {name: snapshot(t) for name, t in tensors.items()}
    critic = make_critic(ag, weights)
    penalties = [call("gradient_penalty", solution.gradient_penalty, critic, real, fake, alpha) for _ in range(2)]
    for name, t in tensors.items():
        assert_unchanged(before[name], t, f"gradient_penalty: {name}")
    expected, _ = torch_penalty(case)
    for penalty in penalties:
        assert_close(penalty.reshape(()), expected, "gradient_penalty (called twice)")


# --- random cases (runs last, once every test above passes) ------------------------------------

def test_random_cases_agree_with_torch(fuzz, solution):
    """Random cases of your three functions against torch.autograd.functional and a torch
    gradient penalty: shapes, both float dtypes, batch size 1, functions that are linear, that
    do not use x or use nothing that requires grad, a v of the wrong shape; the caller's
    tensors checked before and after. A failure shows the case."""
    fuzz.check(solution)
