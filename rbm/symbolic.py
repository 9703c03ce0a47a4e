r"""Symbolic RBMs in SymPy, and the check that proves a symbolic step.

The chapters state each derivation step as an equation and then prove it
here: the two sides are built as SymPy expressions of symbolic parameters
and compared by :func:`check_equal`, which raises :class:`AssertionError`
when the claim is false and prints a one-line verdict when it holds.  The
numeric verdicts (closeness, inequalities, means of samples) are in
:mod:`rbm.checks`.

Conventions are those of :mod:`rbm.model`:

.. math::

    E(v, h) = -b^\top v - c^\top h - v^\top W h,

with ``W`` of shape ``(n_visible, n_hidden)``.  Sums over states run over
all binary vectors in the order of :func:`rbm.exact.all_states`.
"""

import itertools
from collections import namedtuple

import numpy as np
import sympy as sp

from rbm._validation import check_positive_int
from rbm.checks import verdict

__all__ = [
    "RBMSymbols",
    "rbm_symbols",
    "binary_states",
    "energy_expr",
    "energy_derivative",
    "sigmoid_expr",
    "softplus_expr",
    "free_energy_by_sum",
    "free_energy_closed_form",
    "log_partition_expr",
    "joint_prob_expr",
    "marginal_expr",
    "conditional_h_expr",
    "log_likelihood_expr",
    "data_average",
    "model_average",
    "check_equal",
]

# Symbolic sums enumerate every state; beyond this the expressions are too large to simplify.
MAX_SYMBOLIC_UNITS = 6

RBMSymbols = namedtuple("RBMSymbols", ["W", "b", "c", "v", "h"])
RBMSymbols.__doc__ = """Symbolic parameters and states of an RBM (fields W, b, c, v, h)."""


def _index(k, n):
    """Subscript of unit ``k`` (0-based) in a layer of ``n`` units."""
    return str(k + 1)


def rbm_symbols(n_visible, n_hidden):
    r"""Real SymPy symbols for the parameters and the states of an RBM.

    Parameters
    ----------
    n_visible, n_hidden : int
        Layer sizes, each between 1 and 6.

    Returns
    -------
    RBMSymbols
        ``W`` a :class:`sympy.Matrix` of shape (n_visible, n_hidden) with
        entries ``W_ij``; ``b`` of shape (n_visible, 1); ``c`` of shape
        (n_hidden, 1); ``v`` of shape (n_visible, 1) and ``h`` of shape
        (n_hidden, 1).  Indices start at 1, as in the text.

    Examples
    --------
    >>> s = rbm_symbols(2, 1)
    >>> s.W
    Matrix([
    [W_11],
    [W_21]])
    >>> s.b.T, s.h.T
    (Matrix([[b_1, b_2]]), Matrix([[h_1]]))
    """
    n_visible = check_positive_int(n_visible, "n_visible")
    n_hidden = check_positive_int(n_hidden, "n_hidden")
    if max(n_visible, n_hidden) > MAX_SYMBOLIC_UNITS:
        raise ValueError(
            f"symbolic RBMs have at most {MAX_SYMBOLIC_UNITS} units a layer, "
            f"got ({n_visible}, {n_hidden}); check larger sizes numerically"
        )

    def vector(name, n):
        return sp.Matrix(n, 1, [sp.Symbol(f"{name}_{k + 1}", real=True) for k in range(n)])

    W = sp.Matrix(n_visible, n_hidden,
                  lambda i, j: sp.Symbol(f"W_{i + 1}{j + 1}", real=True))
    return RBMSymbols(W, vector("b", n_visible), vector("c", n_hidden),
                      vector("v", n_visible), vector("h", n_hidden))


def binary_states(n):
    """Every binary vector of length `n` as a column :class:`sympy.Matrix`.

    The order is that of :func:`rbm.exact.all_states` (first unit most
    significant).

    Examples
    --------
    >>> [list(s) for s in binary_states(2)]
    [[0, 0], [0, 1], [1, 0], [1, 1]]
    """
    n = check_positive_int(n, "n")
    if n > 2 * MAX_SYMBOLIC_UNITS:
        raise ValueError(f"binary_states lists 2**n symbolic vectors; n must be at most "
                         f"{2 * MAX_SYMBOLIC_UNITS} (both layers of the largest symbolic RBM), "
                         f"got {n}")
    return [sp.Matrix(n, 1, bits) for bits in itertools.product([0, 1], repeat=n)]


def _column(x):
    return sp.Matrix(x).reshape(len(x), 1) if not isinstance(x, sp.MatrixBase) else x.reshape(
        len(x), 1)


def energy_expr(W, b, c, v, h):
    r"""The energy :math:`E(v, h) = -b^\top v - c^\top h - v^\top W h` as an expression.

    Parameters
    ----------
    W : sympy.Matrix of shape (n_visible, n_hidden)
    b, v : sequence or sympy.Matrix of length n_visible
    c, h : sequence or sympy.Matrix of length n_hidden

    Returns
    -------
    sympy.Expr

    Examples
    --------
    >>> s = rbm_symbols(1, 1)
    >>> energy_expr(s.W, s.b, s.c, s.v, s.h)
    -W_11*h_1*v_1 - b_1*v_1 - c_1*h_1
    """
    b, c, v, h = (_column(x) for x in (b, c, v, h))
    return sp.expand(-(b.T * v)[0] - (c.T * h)[0] - (v.T * W * h)[0])


def energy_derivative(W, b, c, v, h, theta):
    r""":math:`\partial E(v, h) / \partial \theta` for one symbolic parameter `theta`.

    Parameters
    ----------
    W, b, c, v, h
        As in :func:`energy_expr`.
    theta : sympy.Symbol
        One entry of `W`, `b` or `c`.

    Returns
    -------
    sympy.Expr

    Examples
    --------
    >>> s = rbm_symbols(1, 1)
    >>> energy_derivative(s.W, s.b, s.c, s.v, s.h, s.W[0, 0])
    -h_1*v_1
    """
    return sp.diff(energy_expr(W, b, c, v, h), theta)


def sigmoid_expr(x):
    r"""The logistic sigmoid :math:`\sigma(x) = 1 / (1 + e^{-x})`.

    Examples
    --------
    >>> sigmoid_expr(sp.Symbol("x"))
    1/(1 + exp(-x))
    """
    return 1 / (1 + sp.exp(-x))


def softplus_expr(x):
    r"""Softplus, :math:`\log(1 + e^{x})`.

    Examples
    --------
    >>> sp.diff(softplus_expr(sp.Symbol("x")), "x")
    exp(x)/(exp(x) + 1)
    """
    return sp.log(1 + sp.exp(x))


def free_energy_by_sum(W, b, c, v):
    r"""The free energy by its definition, :math:`F(v) = -\log \sum_h e^{-E(v, h)}`.

    The sum runs over all :math:`2^{n_\text{hidden}}` hidden states.

    Examples
    --------
    >>> s = rbm_symbols(1, 1)
    >>> free_energy_by_sum(s.W, s.b, s.c, s.v)
    -log(exp(b_1*v_1) + exp(W_11*v_1 + b_1*v_1 + c_1))
    """
    return -sp.log(sum(sp.exp(-energy_expr(W, b, c, v, h)) for h in binary_states(W.shape[1])))


def free_energy_closed_form(W, b, c, v):
    r"""The closed form :math:`F(v) = -b^\top v - \sum_j \operatorname{softplus}(c_j + (v^\top W)_j)`.

    Examples
    --------
    >>> s = rbm_symbols(1, 1)
    >>> free_energy_closed_form(s.W, s.b, s.c, s.v)
    -b_1*v_1 - log(exp(W_11*v_1 + c_1) + 1)
    """
    b, c, v = (_column(x) for x in (b, c, v))
    pre = c + W.T * v
    return -(b.T * v)[0] - sum(softplus_expr(sp.expand(x)) for x in pre)


def log_partition_expr(W, b, c):
    r""":math:`\log Z = \log \sum_{v, h} e^{-E(v, h)}`, summed over all joint states.

    Examples
    --------
    >>> s = rbm_symbols(1, 1)
    >>> log_partition_expr(s.W, s.b, s.c)
    log(exp(b_1) + exp(c_1) + exp(W_11 + b_1 + c_1) + 1)
    """
    n_visible, n_hidden = W.shape
    return sp.log(sum(sp.exp(-energy_expr(W, b, c, v, h))
                      for v in binary_states(n_visible) for h in binary_states(n_hidden)))


def joint_prob_expr(W, b, c, v, h):
    r"""The Boltzmann distribution :math:`p(v, h) = e^{-E(v, h)} / Z`.

    Examples
    --------
    >>> s = rbm_symbols(1, 1)
    >>> sp.simplify(sum(joint_prob_expr(s.W, s.b, s.c, v, h)
    ...                 for v in binary_states(1) for h in binary_states(1)))
    1
    """
    return sp.exp(-energy_expr(W, b, c, v, h) - log_partition_expr(W, b, c))


def marginal_expr(W, b, c, v):
    r"""The marginal :math:`p(v) = \sum_h e^{-E(v, h)} / Z = e^{-F(v)} / Z`.

    Examples
    --------
    >>> s = rbm_symbols(1, 1)
    >>> marginal_expr(s.W, s.b, s.c, [0])
    (exp(c_1) + 1)/(exp(b_1) + exp(c_1) + exp(W_11 + b_1 + c_1) + 1)
    """
    return sp.exp(-free_energy_by_sum(W, b, c, v) - log_partition_expr(W, b, c))


def conditional_h_expr(W, b, c, v, h):
    r"""The conditional :math:`p(h \mid v) = e^{-E(v, h)} / \sum_{h'} e^{-E(v, h')}`.

    Examples
    --------
    >>> s = rbm_symbols(1, 1)
    >>> conditional_h_expr(s.W, s.b, s.c, s.v, [1])
    exp(W_11*v_1 + b_1*v_1 + c_1)/(exp(b_1*v_1) + exp(W_11*v_1 + b_1*v_1 + c_1))
    """
    return sp.exp(-energy_expr(W, b, c, v, h) + free_energy_by_sum(W, b, c, v))


def log_likelihood_expr(W, b, c, data):
    r"""Mean log-likelihood :math:`\frac1N \sum_n \log p(v^{(n)})`, from the definitions.

    Uses :func:`free_energy_by_sum` and :func:`log_partition_expr`, so the
    expression holds no derived identity.

    Parameters
    ----------
    W, b, c : sympy.Matrix
    data : array_like of shape (n_samples, n_visible)
        Rows of zeros and ones (or symbols).

    Examples
    --------
    >>> s = rbm_symbols(1, 1)
    >>> log_likelihood_expr(s.W, s.b, s.c, [[0]])
    log(exp(c_1) + 1) - log(exp(b_1) + exp(c_1) + exp(W_11 + b_1 + c_1) + 1)
    """
    rows = [list(r) for r in data]
    if not rows:
        raise ValueError("data must hold at least one row")
    log_z = log_partition_expr(W, b, c)
    return sum(-free_energy_by_sum(W, b, c, r) - log_z for r in rows) / len(rows)


def data_average(f, W, b, c, data):
    r""":math:`\frac1N \sum_n \sum_h p(h \mid v^{(n)})\, f(v^{(n)}, h)`: the data term.

    Parameters
    ----------
    f : callable
        ``f(v, h)`` with column matrices ``v`` and ``h``, returning an expression.
    W, b, c : sympy.Matrix
    data : array_like of shape (n_samples, n_visible)

    Examples
    --------
    >>> s = rbm_symbols(1, 1)
    >>> data_average(lambda v, h: h[0], s.W, s.b, s.c, [[0]])
    exp(c_1)/(exp(c_1) + 1)
    """
    rows = [_column(list(r)) for r in data]
    hs = binary_states(W.shape[1])
    return sum(conditional_h_expr(W, b, c, v, h) * f(v, h) for v in rows for h in hs) / len(rows)


def model_average(f, W, b, c):
    r""":math:`\sum_{v, h} p(v, h)\, f(v, h)`: the model term.

    Examples
    --------
    >>> s = rbm_symbols(1, 1)
    >>> model_average(lambda v, h: 1, s.W, s.b, s.c).equals(1)
    True
    """
    n_visible, n_hidden = W.shape
    return sum(joint_prob_expr(W, b, c, v, h) * f(v, h)
               for v in binary_states(n_visible) for h in binary_states(n_hidden))


# -- checks ----------------------------------------------------------------


def _entries(x):
    if isinstance(x, sp.MatrixBase):
        return list(x)
    if isinstance(x, (list, tuple)):
        return [sp.sympify(e) for e in x]
    return [sp.sympify(x)]


def _numeric_difference(d, rng):
    """Largest |d| at a few random points that respect the symbols' signs (0 for constants)."""
    # Derivatives and undefined functions, as in (log(k/Z))', are independent unknowns here.
    for kind in (sp.Derivative, sp.core.function.AppliedUndef):
        d = d.xreplace({a: sp.Dummy(positive=a.is_positive)
                        for a in sorted(d.atoms(kind), key=sp.default_sort_key)})
    symbols = sorted(d.free_symbols, key=sp.default_sort_key)
    worst = 0.0
    for _ in range(3):
        point = {s: sp.Float(rng.uniform(0.1, 2.0) if s.is_nonnegative else rng.uniform(-1.5, 1.5),
                             30) for s in symbols}
        value = complex(sp.N(d.xreplace(point), 30))
        worst = max(worst, abs(value))
    return worst


def _exp_log_normal(d):
    r"""Rewrite `d` as a rational function, with every :math:`e^{m}` of a monomial as a power.

    ``expand_power_exp`` splits each exponential of a sum into a product of
    exponentials of monomials; naming :math:`e^{m} = u > 0` (and
    :math:`e^{k m} = u^k`) turns sums of exponentials into polynomials,
    whose logarithms SymPy can factor and split (valid since every argument
    is then positive); ``log(u)`` is put back as ``m``.  What remains is a
    rational function of the :math:`u` (and of any other atoms): it is zero
    exactly when the numerator of its ``together`` form, expanded as a
    polynomial (``sympy.Poly``), is zero.  Returns 0 in that case, and the
    numerator otherwise.
    """
    d = sp.expand_power_exp(d)
    names, back = {}, {}
    replace = {}
    for e in sorted(d.atoms(sp.exp), key=sp.default_sort_key):
        coeff, mono = e.args[0].as_coeff_Mul()
        if mono not in names:
            u = sp.Dummy(f"u{len(names)}", positive=True)
            names[mono] = u
            back[u] = mono
        replace[e] = names[mono] ** coeff
    d = d.xreplace(replace)

    def split_log(arg):
        return sp.expand_log(sp.log(sp.factor(arg)), force=False)

    d = d.replace(lambda e: isinstance(e, sp.log), lambda e: split_log(e.args[0]))
    d = d.xreplace({sp.log(u): m for u, m in back.items()})
    numerator, _ = sp.fraction(sp.together(d))
    try:
        return sp.Integer(0) if sp.Poly(numerator).is_zero else numerator
    except sp.polys.polyerrors.GeneratorsNeeded:  # a constant
        return sp.expand(numerator)


def check_equal(lhs, rhs, name, *, seed=0, label=None):
    r"""Prove ``lhs == rhs`` with SymPy, or raise :class:`AssertionError`; print a verdict.

    The difference is first evaluated at random real points (a false
    identity fails there at once); then it must reduce to exactly zero,
    either as a rational function after naming exponentials of monomials
    as positive symbols (``_exp_log_normal``) or by ``sympy.simplify``,
    tried in that order.  Numeric agreement alone never passes.

    Parameters
    ----------
    lhs, rhs : sympy.Expr, sympy.Matrix or sequence of expressions
        Entries are compared one by one; the shapes must agree.
    name : str
        What is being proved, for the verdict.
    seed : int, default 0
        Seed of the random points of the numeric pre-check.
    label : str, optional
        Names the check for the text that cites it (see :func:`rbm.checks.verdict`).

    Raises
    ------
    AssertionError
        If the two sides differ at a random point, or SymPy cannot reduce
        their difference to zero.

    Examples
    --------
    >>> x = sp.Symbol("x", real=True)
    >>> check_equal(sp.diff(softplus_expr(x), x), sigmoid_expr(x), "softplus' = sigmoid")
    verdict: softplus' = sigmoid holds (SymPy: rational normal form)
    >>> check_equal(sp.diff(softplus_expr(x), x), -sigmoid_expr(x), "a wrong sign")
    Traceback (most recent call last):
    ...
    AssertionError: a wrong sign is false: the sides differ by ... at a random point
    """
    left, right = _entries(lhs), _entries(rhs)
    if len(left) != len(right):
        raise AssertionError(f"{name}: the sides have {len(left)} and {len(right)} entries")
    rng = np.random.default_rng(seed)
    methods = []
    for a, b in zip(left, right):
        d = a - b
        gap = _numeric_difference(d, rng)
        if gap > 1e-12:
            raise AssertionError(f"{name} is false: the sides differ by {gap:.3g} at a random point")
        if d == 0:
            methods.append("identical")
        elif _exp_log_normal(d) == 0:
            methods.append("rational normal form")
        elif sp.simplify(d) == 0:
            methods.append("simplify")
        else:
            raise AssertionError(f"{name}: SymPy could not reduce the difference to zero")
    used = ", ".join(m for m in ("identical", "rational normal form", "simplify") if m in methods)
    entries = f"{len(left)} entries, " if len(left) > 1 else ""
    verdict(f"{name} holds ({entries}SymPy: {used})", label)
