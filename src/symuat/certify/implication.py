r"""Implications of linear real arithmetic with absolute values → Coq (A1's pruning inequalities).

:func:`symuat.kernel.decide.check_real_implication` decides ``∀ vars: H_1 ∧ … ∧ H_k ⇒ C`` (atoms:
strict or non-strict inequalities between linear expressions with rational coefficients, possibly
under nested absolute values) by a sign-case split and Fourier–Motzkin elimination, and records
what it concluded: an ``implication`` certificate (the variables, the hypotheses and the
conclusion as SymPy relations) when no case is satisfiable, an ``implication_refutation`` (the
same, and the rational model) when one is. They are stated here as symuat concluded them:

* :func:`export_implication` — ``forall vars : Q, H_1 -> … -> H_k -> C``, proved by
  ``symuat_linear`` (``coq/SymuatArith.v``): the same case split on the signs of the innermost
  ``Qabs`` arguments, then ``lra`` in each case (linear: no product of variables occurs, the
  kernel refuses one, so ``nra`` is never needed);
* :func:`export_implication_refutation` — ``~ (forall vars : Q, H_1 -> … -> C)``, proved by
  instantiating the counterexample's rationals and ``symuat_refute_point`` (each sign case of the
  instantiated statement closed by ``lra``): a point at which the conclusion holds is rejected.

Strict and non-strict inequalities, equations (``==``) and the nesting of ``|·|`` are written as
the check has them. **Why ℚ, not Coq's ℝ**: Coq's ``Reals`` rest on axioms (classical logic and
the Dedekind reals' ``sig_forall_dec``, …), while the tier admits none (``Print Assumptions``,
coqchk); ``Q`` and ``lra`` over it are axiom-free. The check's statement is about every real; a
formula of linear arithmetic with rational coefficients (``|e|`` being ``e`` or ``−e`` by the sign
of ``e``) holds for every real iff it holds for every rational — its negation is a finite
disjunction of systems of strict and non-strict linear inequalities with rational coefficients,
and such a system with a real solution has a rational one (Fourier–Motzkin's back-substitution,
the kernel's own procedure, picks one). So the theorem over ``Q`` is the check's statement, read
in the ordered field where Coq checks it without axioms. The theorems need ``SymuatArith`` and
not the section's ring ``R``: they are placed after the section (:attr:`Exported.requires`).

>>> import sympy as sp
>>> x, e = sp.symbols(r"x \varepsilon", real=True)
>>> t = export_implication("a1", {"variables": [x, e], "hypotheses": [sp.Abs(x) < e],
...                               "conclusion": sp.Abs(x - 1) < e + 1})[0]
>>> print(t.statement)
Theorem a1 :
  forall x varepsilon : Q, (Qabs x < varepsilon)%Q -> (Qabs (x - 1) < varepsilon + 1)%Q.
>>> r = export_implication_refutation("r", {"variables": [x, e], "hypotheses": [e > 0],
...     "conclusion": sp.Abs(x) < e, "model": {x: sp.Rational(-3, 2), e: sp.Integer(1)}})[0]
>>> print(r.statement)
Theorem r :
  ~ (forall x varepsilon : Q, (varepsilon > 0)%Q -> (Qabs x < varepsilon)%Q).
>>> r.proof
'intro H; specialize (H (-(3 # 2))%Q (1)%Q); symuat_refute_point.'
"""

from __future__ import annotations

import sympy as sp

from symuat.certify.coq_terms import Unsupported, ident
from symuat.certify.export import Exported

#: the library file the theorems need (after the section: :attr:`Exported.requires`)
LIBRARY = "SymuatArith"

#: Coq names a variable must not take (the type and the operations the statements use)
_TAKEN = frozenset({"Q", "Qabs", "Qlt", "Qle", "Qeq", "Qplus", "Qminus", "Qmult", "Qopp", "H", "True", "False"})

_RELATIONS = {sp.StrictLessThan: "<", sp.LessThan: "<=", sp.StrictGreaterThan: ">", sp.GreaterThan: ">=",
              sp.Equality: "=="}


def names(variables) -> dict:
    r"""SymPy variable → its Coq name (a LaTeX name without its backslash: ``\varepsilon`` →
    ``varepsilon``; off the library's names, ``delta`` → ``delta_``), distinct; :class:`Unsupported` if two would coincide.

    >>> names(sp.symbols(r"S_1 \delta"))
    {S_1: 'S_1', \delta: 'delta_'}
    """
    out = {}
    for v in variables:
        name = ident(str(v.name).lstrip("\\"))
        if name in _TAKEN:
            name += "_"
        if name in out.values():
            raise Unsupported(f"two variables are written {name} in Coq")
        out[v] = name
    return out


def rational(q) -> str:
    """A rational constant as a ``Q`` term (within ``%Q``; ``#`` binds looser than ``*``).

    >>> rational(sp.Integer(2)), rational(sp.Rational(-1, 3)), rational(sp.Integer(-4))
    ('2', '-(1 # 3)', '-(4)')
    """
    q = sp.Rational(q)
    body = str(abs(q.p)) if q.q == 1 else f"({abs(q.p)} # {q.q})"
    return body if q >= 0 else f"-{body}" if q.q != 1 else f"-({body})"


def q_term(e, written: dict) -> str:
    """A linear expression (rational coefficients, variables, ``Abs``) as a ``Q`` term; anything
    else is :class:`Unsupported`, naming it."""
    e = sp.sympify(e)
    if e in written:
        return written[e]
    if e.is_Rational:
        return rational(e)
    if isinstance(e, sp.Abs):
        return f"Qabs {_atom(e.args[0], written)}"
    if isinstance(e, sp.Add):
        out = ""
        for k, part in enumerate(e.as_ordered_terms()):
            c, rest = part.as_coeff_Mul()
            if c < 0:
                text = q_term(-part, written)
                out += (" - " if k else "- ") + (text if k or not text.startswith("-") else f"({text})")
            else:
                out += (" + " if k else "") + q_term(part, written)
        return out
    if isinstance(e, sp.Mul):
        c, rest = e.as_coeff_Mul()
        if c.is_Rational and c != 1 and not rest.is_Rational and not isinstance(rest, sp.Mul):
            if c == -1:
                return f"- {_atom(rest, written)}"
            return f"{_atom(c, written)} * {_atom(rest, written)}"
    raise Unsupported(f"{e} is not a linear term over the rationals (variables, rational coefficients, |·|)")


def _atom(e, written: dict) -> str:
    text = q_term(e, written)
    plain = (e in written and " " not in text) or (sp.sympify(e).is_Rational and sp.sympify(e) >= 0 and "#" not in text)
    return text if plain else f"({text})"


def q_prop(rel, written: dict) -> str:
    """A relation (``<``, ``≤``, ``>``, ``≥``, ``=``; a conjunction; a truth value) as a ``Q``
    proposition, each atom delimited by ``%Q``."""
    if rel is sp.true or rel is True:
        return "True"
    if rel is sp.false or rel is False:
        return "False"
    if isinstance(rel, sp.And):
        return " /\\ ".join(q_prop(a, written) for a in rel.args)
    op = next((o for cls, o in _RELATIONS.items() if type(rel) is cls), None)
    if op is None:
        raise Unsupported(f"{rel} is not an inequality or an equation of linear arithmetic")
    return f"({q_term(rel.lhs, written)} {op} {q_term(rel.rhs, written)})%Q"


def _statement(data: dict) -> tuple[list, dict, str]:
    """(variables, their Coq names, ``forall vars : Q, H_1 -> … -> C``)."""
    variables = list(data["variables"])
    if not variables:
        raise Unsupported("an implication with no variables")
    written = names(variables)
    parts = [q_prop(h, written) for h in data["hypotheses"]] + [q_prop(data["conclusion"], written)]
    return variables, written, f"forall {' '.join(written[v] for v in variables)} : Q, " + " -> ".join(parts)


def export_implication(name: str, data: dict) -> list[Exported]:
    """``forall vars : Q, H_1 -> … -> H_k -> C`` (the ``implication`` certificate), proved by the
    sign-case split and ``lra`` (``symuat_linear``)."""
    _, _, body = _statement(data)
    return [Exported(name, f"Theorem {name} :\n  {body}.", "symuat_linear.", requires=LIBRARY)]


def export_implication_refutation(name: str, data: dict) -> list[Exported]:
    """``~ (forall vars : Q, H_1 -> … -> C)`` at the recorded rational model (the
    ``implication_refutation`` certificate): instantiated there, each sign case closed by ``lra``."""
    variables, _, body = _statement(data)
    model = {str(k): v for k, v in data["model"].items()}
    missing = [str(v) for v in variables if str(v) not in model]
    if missing:
        raise Unsupported(f"the counterexample gives no value for {', '.join(missing)}")
    point = " ".join(f"({rational(model[str(v)])})%Q" for v in variables)
    return [Exported(name, f"Theorem {name} :\n  ~ ({body}).",
                     f"intro H; specialize (H {point}); symuat_refute_point.", requires=LIBRARY)]


def export_uniform_limit(name: str, data: dict) -> list[Exported]:
    r"""The limit reading of a bound proved for every δ > 0 (A1.prune[hyp=S2,to0=limit]): along a
    sequence of networks ``m``, at every point ``x`` of a type ``X`` (the points of
    :math:`\mathbf I_n`), the ``hypotheses`` hold for every ``m`` and ``x`` and the ``small``
    quantity is bounded by ``d m`` (``d m`` = its sup over ``x``, or any bound above it) with
    ``d m → 0``; then ``kept ≤ limit + η`` for every η > 0 from some ``M`` on, at every ``x``:
    :math:`\limsup_m\sup_x \mathrm{kept} \le \mathrm{limit}`. ``data``: ``sequence`` (the
    variables that depend on ``m`` and ``x``), ``point`` (on ``x``), ``constants``,
    ``hypotheses``, ``small`` (``|e| ≤ bound``), ``bound`` (the variable that becomes ``d m``),
    ``kept``, ``limit``. Proved by taking ``M`` from ``d → 0`` at η and the sign-case split and
    ``lra`` at ``m``, ``x``.

    >>> S1, S2, f, e, d = sp.symbols(r"S_1 S_2 f \varepsilon \delta")
    >>> t = export_uniform_limit("u", {"sequence": [S1, S2], "point": [f], "constants": [e],
    ...     "hypotheses": [sp.Abs(S1 + S2 - f) < e], "small": sp.Abs(S2) <= d, "bound": d,
    ...     "kept": sp.Abs(S1 - f), "limit": e})[0]
    >>> print(t.statement)
    Theorem u :
      forall (X : Type) (S_1 S_2 : nat -> X -> Q) (f : X -> Q) (varepsilon : Q) (d : nat -> Q),
      (forall (m : nat) (x : X), (Qabs (S_1 m x + S_2 m x - f x) < varepsilon)%Q) ->
      (forall (m : nat) (x : X), (Qabs (S_2 m x) <= d m)%Q) ->
      (forall eta : Q, (eta > 0)%Q -> exists M : nat, forall m : nat, (M <= m)%nat -> (d m <= eta)%Q) ->
      forall eta : Q, (eta > 0)%Q -> exists M : nat, forall m : nat, (M <= m)%nat -> forall x : X, (Qabs (S_1 m x - f x) <= varepsilon + eta)%Q.
    """
    sequence, point, constants = list(data["sequence"]), list(data["point"]), list(data["constants"])
    plain = names(sequence + point + constants)
    taken = {"X", "d", "m", "x", "eta", "M"} & set(plain.values())
    if taken:
        raise Unsupported(f"a variable is written {', '.join(sorted(taken))}, a name the limit statement binds")
    written = {v: f"{plain[v]} m x" for v in sequence} | {v: f"{plain[v]} x" for v in point} | {
        v: plain[v] for v in constants} | {data["bound"]: "d m"}
    small = data["small"]
    if not (isinstance(small, sp.LessThan) and small.rhs == data["bound"]):
        raise Unsupported(f"the smallness {small} is not |e| ≤ its bound")
    uniform = [h for h in data["hypotheses"] if h.free_symbols & set(sequence + point)]
    fixed = [h for h in data["hypotheses"] if h not in uniform]
    binders = " ".join(plain[v] for v in sequence)
    parts = ([f"(forall (m : nat) (x : X), {q_prop(h, written)})" for h in uniform] + [q_prop(h, written) for h in fixed]
             + [f"(forall (m : nat) (x : X), {q_prop(small, written)})",
                "(forall eta : Q, (eta > 0)%Q -> exists M : nat, forall m : nat, (M <= m)%nat -> (d m <= eta)%Q)"])
    goal = ("forall eta : Q, (eta > 0)%Q -> exists M : nat, forall m : nat, (M <= m)%nat -> forall x : X, "
            f"({q_term(data['kept'], written)} <= {q_term(data['limit'], written)} + eta)%Q")
    head = (f"forall (X : Type) ({binders} : nat -> X -> Q)"
            + (f" ({' '.join(plain[v] for v in point)} : X -> Q)" if point else "")
            + (f" ({' '.join(plain[v] for v in constants)} : Q)" if constants else "") + " (d : nat -> Q),")
    statement = f"Theorem {name} :\n  {head}\n  " + " ->\n  ".join(parts + [goal]) + "."
    # H0…: the uniform hypotheses, the fixed ones, the smallness, d → 0 (the last); at m ≥ M and x
    # every uniform one and the smallness are instantiated, d m ≤ η taken from d → 0
    at = [n for n in range(len(uniform))] + [len(uniform) + len(fixed)]
    last = len(parts) - 1
    proof = (f"intros X {binders} {' '.join(plain[v] for v in point + constants)} d "
             f"{' '.join(f'H{n}' for n in range(len(parts)))} eta Heta; "
             f"destruct (H{last} eta Heta) as [M HM]; exists M; intros m Hm x; "
             + "".join(f"specialize (H{n} m x); " for n in at) + f"specialize (HM m Hm); clear H{last}; symuat_linear.")
    return [Exported(name, statement, proof, requires=LIBRARY)]
