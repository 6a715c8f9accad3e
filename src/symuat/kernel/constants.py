r"""Closed-form constants decided exactly: is ``d`` (a SymPy number without free symbols) zero?

A statement whose coefficients are constants (:math:`\pi/4`, :math:`\arctan\frac12`, √2) is
decided by three-valued zero recognition, never by a float that cannot resolve the difference:

* **zero, proved** — ``d`` is the rational 0, SymPy's ``simplify`` reduces it to 0 (a chain of
  valid rewrites), or ``d`` is algebraic and its minimal polynomial over ℚ is ``x``;
* **nonzero, certified** — interval arithmetic (mpmath's ``iv``, outward rounding) at rising
  precision (53, 106, … 1696 bits) gives an interval for ``d`` that excludes 0: its sign and
  magnitude are certified whatever the rounding;
* **undecided** — neither (Euler's :math:`\arctan\frac12+\arctan\frac13-\frac\pi4`, Machin's
  formula: every interval contains 0, and SymPy cannot reduce the difference). The statement is
  then ``numeric-only`` and the precision is stated (``|d| ≤ w`` at ``p`` bits).

SymPy's simplify and minimal polynomial can take minutes on radicals of high joint degree
(Ramanujan's :math:`\sqrt[3]{\sqrt[3]2-1}`, four cube roots): beyond :data:`MAX_RADICAL_DEGREE`
they are not attempted (*undecided*, at once and deterministically, after the intervals), and
below it they run once per constant up to a rational factor (cached), not once per entry.

Soundness: a refutation needs *nonzero, certified* (an interval excluding 0 is a proof); a proof
needs *zero, proved*; nothing else turns into either.

>>> import sympy as sp
>>> zero_status(sp.sqrt(2) * sp.sqrt(2) - 2)[0]
True
>>> zero_status(sp.pi - sp.Rational(355, 113))[0]
False
>>> zero_status(sp.atan(sp.Rational(1, 2)) + sp.atan(sp.Rational(1, 3)) - sp.pi / 4)[0] is None
True
"""

from __future__ import annotations

import functools

import numpy as np
import sympy as sp

#: precisions (bits) of the interval evaluations, rising
PRECISIONS = (53, 106, 212, 424, 848, 1696)


class _Unsupported(Exception):
    pass


def _iv(e, iv):
    """``e`` as an mpmath interval (outward rounded); :class:`_Unsupported` outside the fragment."""
    if e.is_Integer:
        return iv.mpf(int(e))
    if e.is_Rational:
        return iv.mpf(int(e.p)) / int(e.q)
    if isinstance(e, sp.Float):
        return iv.mpf(e._mpf_)
    if e is sp.pi:
        return iv.pi
    if e is sp.E:
        return iv.e
    if e is sp.EulerGamma:
        return iv.euler
    if e is sp.Catalan:
        return iv.catalan
    if e is sp.GoldenRatio:
        return iv.phi
    if e.is_Add:
        out = iv.mpf(0)
        for a in e.args:
            out = out + _iv(a, iv)
        return out
    if e.is_Mul:
        out = iv.mpf(1)
        for a in e.args:
            out = out * _iv(a, iv)
        return out
    if e.is_Pow:
        base, exp = e.args
        if exp.is_Integer:
            return _iv(base, iv) ** int(exp)
        b = _iv(base, iv)
        if exp == sp.Rational(1, 2):
            if b.a < 0:
                raise _Unsupported("square root of a possibly negative interval")
            return iv.sqrt(b)
        if b.a <= 0:
            raise _Unsupported("real power of a possibly nonpositive interval")
        return iv.exp(iv.log(b) * _iv(exp, iv))
    if len(e.args) == 1:
        x = _iv(e.args[0], iv)
        if isinstance(e, sp.exp):
            return iv.exp(x)
        if isinstance(e, sp.log):
            if x.a <= 0:
                raise _Unsupported("log of a possibly nonpositive interval")
            return iv.log(x)
        if isinstance(e, sp.sin):
            return iv.sin(x)
        if isinstance(e, sp.cos):
            return iv.cos(x)
        if isinstance(e, sp.tan):
            return iv.sin(x) / iv.cos(x)
        if isinstance(e, sp.atan):
            return iv.atan2(x, iv.mpf(1))
        if isinstance(e, (sp.asin, sp.acos)):
            if x.a < -1 or x.b > 1:
                raise _Unsupported("asin/acos outside [-1, 1]")
            c = 1 - x * x
            if c.a < 0:
                raise _Unsupported("asin/acos at ±1")
            s = iv.sqrt(c)
            return iv.atan2(x, s) if isinstance(e, sp.asin) else iv.atan2(s, x)
        if isinstance(e, (sp.sinh, sp.cosh, sp.tanh)):
            p, m = iv.exp(x), iv.exp(-x)
            return {sp.sinh: (p - m) / 2, sp.cosh: (p + m) / 2}.get(type(e), (p - m) / (p + m)) \
                if not isinstance(e, sp.tanh) else (p - m) / (p + m)
    raise _Unsupported(f"no interval rule for {type(e).__name__}")


def enclose(d, prec: int):
    """An interval ``(lo, hi)`` (mpmath ``mpf``) containing ``d`` at ``prec`` bits, or None."""
    import mpmath
    from mpmath import iv

    old = iv.prec
    iv.prec = prec
    try:
        x = _iv(sp.sympify(d), iv)
        lo, hi = x._mpi_
        return mpmath.mpf(lo), mpmath.mpf(hi)
    except (_Unsupported, ZeroDivisionError, ValueError, TypeError):
        return None
    finally:
        iv.prec = old


def zero_status(d) -> tuple[bool | None, str]:
    """``(True, how)``: ``d = 0`` proved; ``(False, how)``: ``d ≠ 0`` certified; ``(None, how)``:
    undecided, ``how`` stating the precision reached."""
    d = sp.sympify(d)
    if d.free_symbols:
        raise ValueError(f"not a constant: {d} has symbols {sorted(map(str, d.free_symbols))}")
    if d == 0:
        return True, "identical"
    if d.is_Rational:
        return False, f"a nonzero rational ({d})"
    if d.is_real is False or d.has(sp.I):
        re, im = d.as_real_imag()
        parts = [zero_status(sp.expand(re)), zero_status(sp.expand(im))]
        if any(p[0] is False for p in parts):
            return False, "; ".join(p[1] for p in parts if p[0] is False)
        if all(p[0] is True for p in parts):
            return True, "real and imaginary parts are 0"
        return None, "; ".join(p[1] for p in parts)

    def certified(prec):
        box = enclose(d, prec)
        if box is not None and (box[0] > 0 or box[1] < 0):
            return box
        return None if box is None else False

    first = certified(PRECISIONS[0])
    if first:
        return False, (f"certified nonzero: d ∈ [{_show(first[0])}, {_show(first[1])}] "
                       f"(interval arithmetic, {PRECISIONS[0]} bits)")
    return _beyond_double(_primitive(d))


@functools.lru_cache(maxsize=1024)
def _beyond_double(key) -> tuple[bool | None, str]:
    """:func:`zero_status` past the 53-bit interval, on ``key`` (``d`` up to a nonzero rational factor
    and sign, :func:`_primitive`): SymPy's simplify, interval arithmetic at rising precision, the
    minimal polynomial — taken once per constant, not once per entry of every instance."""

    def certified(prec):
        box = enclose(key, prec)
        if box is not None and (box[0] > 0 or box[1] < 0):
            return box
        return None if box is None else False

    degree = radical_degree(key)
    quick = degree <= MAX_RADICAL_DEGREE  # else SymPy's simplify / minimal polynomial can take minutes
    if quick and _simplifies_to_zero(key):
        return True, "SymPy simplify reduces the difference to 0"
    box = False
    for prec in PRECISIONS[1:]:
        box = certified(prec)
        if box:
            return False, (f"certified nonzero: d is a nonzero rational multiple of δ ∈ [{_show(box[0])}, "
                           f"{_show(box[1])}] (interval arithmetic, {prec} bits)")
        if box is None:
            break
    if not quick:
        return None, (f"undecided: the difference has radicals of joint degree up to {degree} > "
                      f"{MAX_RADICAL_DEGREE} (beyond what SymPy's zero recognition decides quickly), and "
                      + ("it has no interval rule here" if box is None else
                         f"interval arithmetic up to {PRECISIONS[-1]} bits does not exclude 0"))
    algebraic = _minimal_polynomial_is_x(key)
    if algebraic is True:
        return True, "algebraic, minimal polynomial x"
    if algebraic is False:
        return False, "algebraic with minimal polynomial ≠ x: nonzero"
    if box is None:
        return None, "undecided: SymPy cannot reduce the difference to 0 and it has no interval rule here"
    last = enclose(key, PRECISIONS[-1])
    width = max(abs(last[0]), abs(last[1])) if last else None
    return None, (f"undecided: SymPy cannot reduce the difference to 0; |d| ≤ {_show(width)} "
                  f"(interval arithmetic at {PRECISIONS[-1]} bits, up to a rational factor)")


#: above this bound on the degree of the radicals' field (:func:`radical_degree`) the difference is
#: not handed to SymPy's simplify / minimal polynomial (Ramanujan's ∛(∛2 − 1) identity, degree ≤ 243,
#: takes them from seconds to minutes depending on how SymPy normalised the terms): undecided,
#: deterministically, rather than a verdict that depends on the machine's load
MAX_RADICAL_DEGREE = 64


def radical_degree(d) -> int:
    """An upper bound on the degree over ℚ of the field the radicals of ``d`` generate: the product of
    the root indices ``q`` of its distinct radicals ``b^(p/q)`` (one per base and index).

    >>> radical_degree(sp.sqrt(2) + sp.sqrt(3) - sp.sqrt(5 + 2 * sp.sqrt(6)))
    16
    """
    seen = {(node.base, node.exp.q) for node in sp.preorder_traversal(sp.sympify(d))
            if isinstance(node, sp.Pow) and node.exp.is_Rational and not node.exp.is_Integer}
    out = 1
    for _, q in seen:
        out *= int(q)
    return out


def _primitive(d):
    """``d`` up to a nonzero rational factor and its sign, in one form (``3·c − 3·c′`` and ``c − c′``
    alike, though SymPy distributes the 3 into the radicals): zero and nonzero alike for all of them,
    so the dear steps below are taken once per constant, not once per entry of every instance."""
    content, prim = d.as_content_primitive()
    if content == 0:
        return sp.Integer(0)
    return -prim if prim.could_extract_minus_sign() else prim


@functools.lru_cache(maxsize=1024)
def _simplifies_to_zero(d) -> bool:
    return sp.simplify(d) == 0


@functools.lru_cache(maxsize=1024)
def _minimal_polynomial_is_x(d) -> bool | None:
    """``True``/``False``: ``d`` is algebraic and its minimal polynomial over ℚ is / is not ``x``;
    ``None``: not known algebraic, or SymPy cannot compute it."""
    if not d.is_algebraic:
        return None
    try:
        x = sp.Dummy("x")
        return sp.minimal_polynomial(d, x) == x
    except (NotImplementedError, sp.polys.polyerrors.PolynomialError):
        return None


def magnitude(x) -> float:
    """An upper bound of ``|x|`` as a float, for an exact scalar (an integer, a fraction or a SymPy
    constant): the interval enclosure's larger end (0.0 when it underflows float64; ``inf`` when
    ``x`` has no enclosure) — never an exception, never a comparison SymPy cannot decide."""
    from fractions import Fraction

    if isinstance(x, (int, Fraction, np.integer)):
        return abs(float(x))
    x = sp.sympify(x)
    if x.is_Rational:
        return abs(float(x))
    for prec in PRECISIONS[:3]:
        box = enclose(x, prec)
        if box is not None:
            return float(max(abs(box[0]), abs(box[1])))
    try:
        return abs(complex(x))
    except (TypeError, ValueError):
        return float("inf")


def _show(x) -> str:
    import mpmath

    return mpmath.nstr(x, 3) if x is not None else "?"


# -- undecided comparisons met while deciding one statement ----------------------------------------

import contextlib  # noqa: E402
import contextvars  # noqa: E402

_UNDECIDED: contextvars.ContextVar[list | None] = contextvars.ContextVar("symuat_undecided", default=None)


@contextlib.contextmanager
def collect_undecided():
    """Collect (in the yielded list) the undecided constant comparisons met inside the block: a
    procedure that met one cannot claim more than ``numeric-only``."""
    found: list[str] = []
    token = _UNDECIDED.set(found)
    try:
        yield found
    finally:
        _UNDECIDED.reset(token)


def note_undecided(how: str) -> None:
    found = _UNDECIDED.get()
    if found is not None and how not in found:
        found.append(how)


def constants_equal(x, y) -> bool:
    """Exact equality of two exact scalars for a counterexample search: ``False`` only when the
    difference is *certified* nonzero; an undecided comparison counts as equal (no refutation)
    and is recorded (:func:`collect_undecided`)."""
    d = sp.sympify(x) - sp.sympify(y)
    if d.free_symbols:  # symbolic entries (not a constant): SymPy's simplification, as before
        return sp.simplify(d) == 0
    status, how = zero_status(d)
    if status is None:
        note_undecided(how)
        return True
    return status


def polynomial_is_zero(d) -> bool:
    """Whether an expanded entry difference (a polynomial in symbolic entries with constant
    coefficients) is zero: each coefficient decided by :func:`zero_status`; an undecided
    coefficient counts as zero and is recorded. Non-polynomial differences (opaque σ) count as
    nonzero (the caller then looks for an exact witness)."""
    d = sp.expand(d)
    if d == 0:
        return True
    syms = sorted(d.free_symbols, key=str)
    try:
        coeffs = sp.Poly(d, *syms).coeffs() if syms else [d]
    except sp.polys.polyerrors.PolynomialError:
        return False
    if any(c.free_symbols for c in coeffs):
        return False
    statuses = [zero_status(c) for c in coeffs]
    if any(s is False for s, _ in statuses):
        return False
    for s, how in statuses:
        if s is None:
            note_undecided(how)
    return True
