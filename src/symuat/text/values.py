r"""How an exact value is shown: one line of Unicode for the terminal, LaTeX for the docs.

Counterexamples carry exact values: integers, rationals (``"p/q"`` in JSON), and closed forms
that SymPy writes in Python syntax (``288*e**12/((e**4 + 1)*(e**8 - e**4 + 1))``, where ``e`` is
Euler's number kept as a transcendental symbol, :mod:`symuat.kernel.decide.softcap`). A reader wants
``288·e¹²/((e⁴ + 1)(e⁸ − e⁴ + 1))`` in a terminal and :math:`\frac{288 e^{12}}{\dots}` on a page,
and a rational of 47 digits shown by its size, not its digits.

>>> show_value("288*e**12/((e**4 + 1)*(e**8 - e**4 + 1))")
'288·e¹²/((e⁴ + 1)·(e⁸ − e⁴ + 1))'
>>> show_value("-3/4"), show_value(7)
('−3/4', '7')
>>> show_value("78044723649049168632448849445619071937699865277/3011906202392024610515742296066095131861433578")
'≈ 25.9121 (exact: 47/46 digits)'
>>> value_latex("288*e**12/((e**4 + 1)*(e**8 - e**4 + 1))")
'\\frac{288 e^{12}}{\\left(e^{4} + 1\\right) \\left(e^{8} - e^{4} + 1\\right)}'
>>> show_array([[1, "1/2"], [0, "-2"]])
'[[1, 1/2], [0, −2]]'
"""

from __future__ import annotations

import re
from fractions import Fraction

#: a rational longer than this (numerator and denominator digits together) is shown by its value
#: to six figures and its size; the exact value stays in JSON
LONG = 14

_SUP = dict(zip("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻"))
_RATIONAL = re.compile(r"-?\d+(/\d+)?")


def _rational(v) -> Fraction | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, Fraction)):
        return Fraction(v)
    if isinstance(v, str) and _RATIONAL.fullmatch(v.strip()):
        return Fraction(v.strip())
    try:  # numpy and SymPy integers and rationals
        import sympy as sp

        if isinstance(v, sp.Basic) and v.is_Rational:
            return Fraction(int(v.p), int(v.q))
    except ImportError:  # pragma: no cover
        pass
    if type(v).__module__ == "numpy" and hasattr(v, "dtype") and v.dtype.kind in "iu":
        return Fraction(int(v))
    return None


def _long_rational(q: Fraction) -> str | None:
    digits = len(str(abs(q.numerator))) + (len(str(q.denominator)) if q.denominator != 1 else 0)
    if digits <= LONG:
        return None
    size = (f"{len(str(abs(q.numerator)))}/{len(str(q.denominator))} digits" if q.denominator != 1
            else f"{digits} digits")
    return f"≈ {float(q):.6g} (exact: {size})".replace("-", "−")


def _expression(text: str):
    """The SymPy expression a value's text names, or None (plain words stay words)."""
    if not re.search(r"[A-Za-z]", text) or re.search(r"[^\w\s+\-*/().,]", text):
        return None
    try:
        import sympy as sp
        from sympy.parsing.sympy_parser import parse_expr

        names = {n: sp.Symbol(n, positive=(n == "e")) for n in set(re.findall(r"[A-Za-z_]\w*", text))
                 if n not in ("cos", "sin", "tan", "tanh", "exp", "log", "sqrt", "erf", "Abs", "pi")}
        return parse_expr(text, local_dict=names, evaluate=False)
    except Exception:
        return None


def _unicode(text: str) -> str:
    """Python syntax of a closed form → one line of Unicode (powers as superscripts, · for ×)."""
    s = re.sub(r"\*\*\((-?\d+)\)", lambda m: "".join(_SUP[c] for c in m[1]), text)
    s = re.sub(r"\*\*(-?\d+)", lambda m: "".join(_SUP[c] for c in m[1]), s)
    s = s.replace("**", "^").replace(")*(", ")·(").replace("*", "·")
    s = re.sub(r"sqrt\(", "√(", s)
    s = re.sub(r"(?<![\w)])-", "−", s).replace(" - ", " − ")
    return s


def show_value(v) -> str:
    """One exact value as one line of Unicode (see the module docstring)."""
    q = _rational(v)
    if q is not None:
        return _long_rational(q) or str(q).replace("-", "−")
    if isinstance(v, float):
        return f"{v:.6g}".replace("-", "−")
    text = str(v)
    if _expression(text) is not None:
        return _unicode(text)
    return text


def show_array(v) -> str:
    """A nested list (or array) of exact values, each by :func:`show_value`."""
    if hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, dict):  # named values (a witness's first instance)
        return "{" + ", ".join(f"{k} = {show_array(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(show_array(x) for x in v) + "]"
    return show_value(v)


def value_latex(v) -> str:
    """One exact value as LaTeX: ``\\tfrac{p}{q}``, a closed form by SymPy's printer, a long
    rational by its approximate value."""
    q = _rational(v)
    if q is not None:
        if _long_rational(q):
            return rf"\approx {float(q):.6g}\ (\text{{exact: }}{len(str(abs(q.numerator)))}/{len(str(q.denominator))}\text{{ digits}})"
        if q.denominator == 1:
            return str(q.numerator)
        return ("-" if q < 0 else "") + rf"\tfrac{{{abs(q.numerator)}}}{{{q.denominator}}}"
    if isinstance(v, float):
        return f"{v:.4g}"
    expr = _expression(str(v))
    if expr is not None:
        from sympy import latex

        return latex(expr)
    return str(v)


def readable(text: str) -> str:
    """A line of prose with Python-syntax math in it made readable: long rationals by their size
    (:func:`shorten_numbers`), ``x**2`` as ``x²``, ``a*b`` as ``a·b``, ``oo`` as ``∞``.

    >>> readable("lim delta**2*(erf(sqrt(2)*delta) + 1) = oo")
    'lim delta²·(erf(√(2)·delta) + 1) = ∞'
    """
    s = shorten_numbers(text)
    s = re.sub(r"\*\*\((-?\d+)\)|\*\*(-?\d+)", lambda m: "".join(_SUP[c] for c in (m[1] or m[2])), s)
    s = re.sub(r"(?<=[\w)²³⁴⁵⁶⁷⁸⁹⁰¹])\*(?=[\w(])", "·", s)
    s = re.sub(r"\bsqrt\(", "√(", s)
    if "·" in s or "²" in s:  # math was rewritten: its minus signs too
        s = s.replace(" - ", " − ")
    return re.sub(r"\boo\b", "∞", s)


def shorten_numbers(text: str) -> str:
    """``text`` with every long rational in it shown by :func:`show_value` (a re-check line that
    quotes a 120-digit difference reads ``≈ −7.1372 (exact: 64/63 digits)``).

    >>> shorten_numbers("entry (0, 0) differs by -31006201349999030799454441042695/434431099493662642135")
    'entry (0, 0) differs by ≈ −7.1372e+10 (exact: 31/20 digits)'
    """
    return re.sub(r"-?\d+(?:/\d+)?", lambda m: show_value(m[0]) if len(m[0]) > LONG else m[0], text)
