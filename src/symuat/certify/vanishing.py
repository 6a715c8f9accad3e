r"""A2's vanishing contributions: ReLU units over ℚ in Coq, and why the others are not stated (the reason).

:func:`symuat.kernel.decide.check_vanishing` decides ":math:`\forall\eta>0\ \exists\delta>0`:
parameters within δ ⇒ :math:`\sup_{\mathbf I_n}|\text{contribution}|\le\eta`" for one activation
σ: ``proved`` by a bound :math:`B(\delta)\to0` resting on an envelope
:math:`|\sigma(t)|\le c_0+c_1|t|` of the real function σ, ``refuted`` by a family of parameters
within δ whose contribution tends (SymPy limit) to a nonzero value or ∞. It records a
``vanishing`` / ``vanishing_refutation`` certificate (the bound and its facts, or the family's
value and limit, and σ). A unit's bound is stated in Coq for ReLU (over ℚ, below) and for
logistic, tanh and GELU (:func:`envelope_theorems`, ``coq/SymuatEnv.v``): over any ordered field
(MathComp's ``realFieldType``; ℝ is one) with σ a function ``s`` and the envelope the bound rests
on as the theorem's one premise (``|s t| ≤ 1`` or ``|s t| ≤ |t|``, true of the real σ: the
comment and the record's reason, :func:`premises`, say why), since Coq's ``Reals`` (``exp``,
limits) rest on axioms (classical logic, the Dedekind reals' ``sig_forall_dec``) the tier admits
none of (``Print Assumptions``, coqchk), MathComp 1.15 has neither ``exp``, ``erf`` nor limits,
and the bound uses nothing else of σ. A logistic unit's refuting family for the inner
parameters (the unit is σ(0) = 1/2) is stated the same way with ``s 0 = 1/2`` the premise
(:func:`logistic_unit_refutation`); the other refuting families through those σ (their values are
σ's at δ-dependent points) with the lower bounds of σ they use as premises
(:mod:`symuat.certify.family`). For anything else :func:`reason` says what a statement would need, per σ:

* logistic and tanh are the real exponential's: Coq's ``Reals`` define ``exp`` and limits, but
  rest on axioms, and the tier admits none; MathComp 1.15 has neither ``exp`` nor limits;
* GELU is ``erf``'s, in neither library;
* ReLU (``max(t, 0)``) is piecewise linear, so over ℚ (:mod:`symuat.certify.implication`'s
  setting, ``coq/SymuatSmall.v``) a **unit**'s bound is stated (:func:`export_vanishing`), for
  every ``n`` — the check's ``n`` is symbolic —, with ``w x : nat -> Q`` and
  :math:`\mathbf w^T\mathbf x` the sum ``qsum n (fun i => w i * x i)`` over the coordinates
  ``i < n`` (a recursion on ``n``; its lemmas proved by induction once in the library), ReLU as
  ``Qmax 0``: two theorems, ``…_bound`` (for every δ > 0, every parameter within δ and every
  point of :math:`\mathbf I_n`, ``|α·Qmax 0 (wᵀx + θ)| ≤ B(δ)``: the bound the check proved)
  and the check's own statement (``forall n`` [the fixed parameters, for ``rest=fixed``] ``eta,
  0 < eta -> exists delta, 0 < delta /\\ forall`` [the other parameters] ``x, … -> |…| <= eta``,
  δ := η/(C + 1 + η) for a coefficient ``C`` with ``B(δ) ≤ C·δ`` on ``(0, 1]``). Over ℚ, not ℝ
  (ℝ's axioms, :mod:`symuat.certify.implication`), and the theorems say the same over ℝ: a real
  counterexample to the bound (premises non-strict, ``|unit| > B(δ)`` strict) gives a rational
  one — a rational δ' > δ, then rationals within δ' of slack near the parameters and in
  ``[0, 1]`` near ``x``, both sides continuous —; a real η has a rational η' ∈ (0, η) below it
  and the ∀η ∃δ statement follows; a refutation's rational δ' ≤ a real δ gives its family within δ. A unit's refuting family (``α = 1/δ, w = δ``; ``α = δ, w = 1/δ²``) is stated as
  ``~`` (the check's statement), proved at the family (:func:`relu_unit_refutation`: ``n = 1``,
  ``x = 1``, δ shrunk to ``e``, ``1/δ`` an ``i`` with ``e·i = 1``, then ``nra``). A deep
  reading's family (residual layers with ``K = 1/δ``), and a tanh or GELU unit's, are stated by
  :mod:`symuat.certify.family` (``coq/SymuatFamily.v``: over any ordered field, SymuatDepth's
  residual network of every depth and width, σ's lower bounds as premises).

>>> import sympy as sp
>>> t = sp.Symbol("t")
>>> print(reason({"sigma": 1 / (1 + sp.exp(-t)), "bound": sp.Symbol("delta")}))  # doctest: +NORMALIZE_WHITESPACE
a limit as δ → 0⁺ of the bound delta on a contribution through σ(t) = 1/(1 + exp(-t)), which uses the
real exponential: Coq's Reals define it but rest on axioms (the tier admits none), MathComp 1.15 has
neither exp nor limits
"""

from __future__ import annotations

import sympy as sp

from symuat.certify.coq_terms import Unsupported
from symuat.certify.export import Exported


def _why_sigma(sigma, family: bool = False) -> str:
    """What stating σ in Coq would need (see the module); ``family``: for a refuting family."""
    if sigma is None:
        return "an activation the certificate does not name"
    sigma = sp.sympify(sigma)
    kinds = {type(f).__name__ for f in sigma.atoms(sp.Function)} | (
        {"Max"} if sigma.has(sp.Max) else set())
    if kinds & {"exp", "tanh"}:
        return ("uses the real exponential: Coq's Reals define it but rest on axioms (the tier admits none), "
                "MathComp 1.15 has neither exp nor limits")
    if "erf" in kinds:
        return "uses erf, in neither Coq's standard library nor MathComp 1.15"
    if kinds <= {"Max"} and family:
        return ("is piecewise linear (a unit's family is stated over ℚ), but a deep reading's statement is about a "
                "residual network — every depth L, widths D, F, the removed layer k among the others, the output "
                "through the later layers — which is not stated over ℚ (its family is at D = F = 1, two layers); "
                "a statement fixing that network would be a different claim")
    if kinds <= {"Max"}:
        return ("is piecewise linear (a unit's bound is stated over ℚ), but this bound is not a unit's (a deep "
                "reading's network is not stated over ℚ)")
    return f"uses {', '.join(sorted(kinds))}, which the Coq library does not define"


def reason(data: dict) -> str:
    """Why the ``vanishing`` (bound) or ``vanishing_refutation`` (family) certificate ``data`` is
    not stated in Coq: the limit, and what σ would need."""
    sigma = data.get("sigma")
    through = f"σ(t) = {sp.sstr(sp.sympify(sigma))}" if sigma is not None else "σ"
    if "bound" in data:
        head = f"a limit as δ → 0⁺ of the bound {sp.sstr(data['bound'])} on a contribution through {through}"
    else:
        head = (f"a family within δ whose contribution {sp.sstr(data['value'])} tends to {data['limit']} as δ → 0⁺ "
                f"(SymPy limit), through {through}")
    return f"{head}, which {_why_sigma(sigma, family='bound' not in data)}"


#: the library file the ReLU theorems need (after the section: :attr:`Exported.requires`)
LIBRARY = "SymuatSmall"

#: a unit's parameters: Coq binder, its smallness hypothesis (``delta`` the bound)
_PARAMETERS = {"alpha": ("(alpha : Q)", "(Qabs alpha <= delta)%Q"),
               "w": ("(w : nat -> Q)", "(forall i, lt i n -> (Qabs (w i) <= delta)%Q)"),
               "theta": ("(theta : Q)", "(Qabs theta <= delta)%Q")}
#: the parameters each reading constrains (``smallness.unit_bound``: ``inner`` = w, θ; ``outer`` = α)
_CONSTRAINED = {"inner": ("w", "theta"), "outer": ("alpha",), "all": ("alpha", "w", "theta")}
_UNIT = "Qabs (alpha * Qmax 0 (qsum n (fun i => w i * x i) + theta))"
_POINT = "(forall i, lt i n -> (0 <= x i <= 1)%Q)"


def _is_relu(sigma) -> bool:
    t = next(iter(sp.sympify(sigma).free_symbols), None) if sigma is not None else None
    return t is not None and sp.simplify(sp.sympify(sigma) - sp.Max(t, 0)) == 0


def _bound_names(bound) -> dict:
    """The bound's symbols (``smallness``: δ, n, α, W = ‖w‖₁ + |θ|) → their ``Q`` terms."""
    from symuat.expr import smallness

    return {smallness.delta: "delta", smallness.n: "qnat n", smallness.alpha: "alpha",
            smallness.Wn: "(qsum n (fun i => Qabs (w i)) + Qabs theta)"}


def q_poly(e, written: dict) -> str:
    """A polynomial in the bound's symbols (and ``|·|`` of them) with rational coefficients as a
    ``Q`` term; anything else is :class:`Unsupported`.

    >>> from symuat.expr import smallness as s
    >>> q_poly(s.delta ** 2 * (s.n + 1), _bound_names(None))
    'delta ^ 2 * (qnat n + 1)'
    """
    from symuat.certify.implication import rational

    e = sp.sympify(e)
    if e in written:
        return written[e]
    if e.is_Rational and e >= 0:
        return rational(e)
    if isinstance(e, sp.Abs) and e.args[0] in written:
        return f"Qabs {written[e.args[0]]}"
    if isinstance(e, sp.Add):
        return " + ".join(q_poly(a, written) for a in sorted(e.args, key=lambda a: (a.is_Number, sp.default_sort_key(a))))
    if isinstance(e, sp.Mul):
        parts = sorted(e.args, key=lambda a: (not a.is_Number, sp.default_sort_key(a)))
        return " * ".join(f"({q_poly(a, written)})" if isinstance(a, sp.Add) else q_poly(a, written) for a in parts)
    if isinstance(e, sp.Pow) and e.exp.is_Integer and e.exp > 0 and e.base in written:
        return f"{written[e.base]} ^ {e.exp}"
    raise Unsupported(f"the bound's term {sp.sstr(e)} is not a polynomial of δ, n, α, W with nonnegative rational coefficients")


def _coefficient(bound, delta):
    """``C`` with ``B(δ) ≤ C·δ`` for ``0 < δ ≤ 1``: ``B = δ·P(δ)`` with ``P`` a polynomial in δ
    whose coefficients are nonnegative, ``C = P(1)`` (Coq checks the inequality, :coq:`nra`)."""
    P = sp.cancel(bound / delta)
    if not P.is_polynomial(delta) or sp.simplify(bound.subs(delta, 0)) != 0:
        raise Unsupported(f"the bound {sp.sstr(bound)} is not δ times a polynomial in δ")
    coefficients = sp.Poly(sp.expand(P), delta).all_coeffs()
    if not all(c.is_nonnegative for c in coefficients):
        raise Unsupported(f"the bound {sp.sstr(bound)} has a coefficient in δ not known to be nonnegative")
    return sp.factor(P.subs(delta, 1))


def _limit_statement(reading: dict) -> tuple[list, str]:
    """(the parameters quantified before η, the check's statement ``forall n … eta, 0 < eta ->
    exists delta, 0 < delta /\\ forall …, … -> |unit| <= eta``) for a unit's ``reading``: with
    ``rest=fixed`` the parameters the reading does not constrain come before η (δ may depend on
    them), with ``rest=any`` after δ (one δ for all of them)."""
    constrained = _CONSTRAINED[reading["params"]]
    fixed = [p for p in _PARAMETERS if p not in constrained] if reading.get("rest") == "fixed" else []
    uniform = [p for p in _PARAMETERS if p not in fixed]
    small = [_PARAMETERS[p][1] for p in constrained]
    return fixed, ("forall (n : nat) " + "".join(f"{_PARAMETERS[p][0]} " for p in fixed)
                   + "(eta : Q), (0 < eta)%Q -> exists delta : Q, (0 < delta)%Q /\\\n  forall "
                   + " ".join(_PARAMETERS[p][0] for p in uniform) + " (x : nat -> Q),\n  "
                   + " -> ".join(small) + f" ->\n  {_POINT} ->\n  ({_UNIT} <= eta)%Q")


def relu_unit_theorems(name: str, data: dict) -> list[Exported]:
    """A ReLU unit's ``vanishing`` certificate over ℚ: ``name_bound`` (the bound for every δ > 0)
    and ``name`` (the check's ∀η ∃δ statement); see the module."""
    reading, bound, delta = data.get("reading") or {}, sp.sympify(data["bound"]), data["delta"]
    if reading.get("part") != "units" or reading.get("params") not in _CONSTRAINED:
        raise Unsupported(f"a ReLU bound on a {reading.get('part', 'part the certificate does not name')} "
                          "contribution: only a unit's is stated")
    constrained = _CONSTRAINED[reading["params"]]
    written = _bound_names(bound)
    b = q_poly(bound, written)
    c = q_poly(_coefficient(bound, delta), written)
    small = [_PARAMETERS[p][1] for p in constrained]
    every = " ".join(_PARAMETERS[p][0] for p in _PARAMETERS)
    statement = (f"Theorem {name}_bound :\n  forall (n : nat) (delta : Q) {every} (x : nat -> Q),\n  (0 < delta)%Q -> "
                 + " -> ".join(small) + f" ->\n  {_POINT} ->\n  ({_UNIT} <= {b})%Q.")
    fixed, body = _limit_statement(reading)
    limit = f"Theorem {name} :\n  {body}."
    proof = f"intros n {' '.join(fixed)}{' ' if fixed else ''}eta He; symuat_relu_limit ({c})%Q (fun delta => {b})%Q."
    return [Exported(f"{name}_bound", statement, "symuat_relu.", requires=LIBRARY),
            Exported(name, limit, proof, requires=LIBRARY)]


# --------------------------------------------------------------------------------------------
# logistic, tanh, GELU: over any ordered field, σ a function with its envelope as the premise
# --------------------------------------------------------------------------------------------

#: the library file of the envelope theorems (MathComp's ``realFieldType``)
ENVELOPE_LIBRARY = "SymuatEnv"

#: an envelope ``|σ(t)| ≤ c0 + c1|t|`` → (its name, the premise on ``s``)
_ENVELOPES = {(1, 0): ("bounded", "(forall t, `|s t| <= 1)"),
              (0, 1): ("contracting", "(forall t, `|s t| <= `|t|)")}

#: (σ's name in ``smallness.sigma``, envelope) → why the premise is a true fact of the real function
_WHY = {("logistic", "bounded"): "1/(1 + e^(−t)) ∈ (0, 1) as e^(−t) > 0",
        ("tanh", "bounded"): "1 ∓ tanh t = 2e^(∓t)/(e^t + e^(−t)) > 0",
        ("tanh", "contracting"): "(t − tanh t)' = tanh² t ≥ 0, 0 at 0; odd",
        ("gelu", "contracting"): "GELU t = t(1 + erf(t/√2))/2, erf ∈ (−1, 1)"}

#: a unit's parameters over ``R``: binder, smallness hypothesis, its name in the proofs
_R_PARAMETERS = {"alpha": ("(alpha : R)", "`|alpha| <= delta", "Ha"),
                 "w": ("(w : nat -> R)", "(forall i, (i < n)%nat -> `|w i| <= delta)", "Hw"),
                 "theta": ("(theta : R)", "`|theta| <= delta", "Ht")}
_R_UNIT = "`|alpha * s (\\sum_(i < n) w i * x i + theta)|"
_R_POINT = "(forall i, (i < n)%nat -> 0 <= x i <= 1)"
_R_W = "(\\sum_(i < n) `|w i| + `|theta|)"


def _sigma_name(sigma):
    """logistic, tanh or gelu (``smallness.sigma``), or None."""
    from symuat.expr import smallness

    if sigma is None:
        return None
    sigma = sp.sympify(sigma)
    t = next(iter(sigma.free_symbols), None)
    for name in ("logistic", "tanh", "gelu"):
        if t is not None and sp.simplify(sigma - smallness.sigma(name, t)) == 0:
            return name
    return None


def _envelope(data: dict):
    """(c0, c1) of the envelope ``|σ(t)| ≤ c0 + c1|t|`` the bound rests on (the certificate's first fact)."""
    import re

    m = re.match(r"\|σ\(t\)\| ≤ (\d+) \+ (\d+)\|t\|", (data.get("facts") or [""])[0])
    return (int(m.group(1)), int(m.group(2))) if m else None


def _r_limit(reading: dict) -> tuple[list, list, str]:
    """(the fixed parameters, the uniform ones, the check's ∀η ∃δ statement over ``R``) for a unit's reading."""
    constrained = _CONSTRAINED[reading["params"]]
    fixed = [p for p in _PARAMETERS if p not in constrained] if reading.get("rest") == "fixed" else []
    uniform = [p for p in _PARAMETERS if p not in fixed]
    small = " -> ".join(_R_PARAMETERS[p][1] for p in constrained)
    return fixed, uniform, ("forall (n : nat) " + "".join(f"{_R_PARAMETERS[p][0]} " for p in fixed)
                            + "(eta : R), 0 < eta -> exists delta : R, 0 < delta /\\\n  forall "
                            + " ".join(_R_PARAMETERS[p][0] for p in uniform) + " (x : nat -> R),\n  "
                            + f"{small} ->\n  {_R_POINT} ->\n  {_R_UNIT} <= eta")


def envelope_theorems(name: str, data: dict) -> list[Exported]:
    """A unit's ``vanishing`` certificate for logistic, tanh or GELU (see the module): over any
    ``realFieldType`` ``R`` (an ordered field: ℝ is one), σ a function ``s : R -> R`` with the
    envelope the bound rests on as the premise (``|s t| <= 1`` or ``|s t| <= |t|``, a true fact
    of the real σ, justified in the comment); ``name_bound`` (the bound for every δ) and ``name``
    (the check's ∀η ∃δ statement), from ``coq/SymuatEnv.v``'s lemmas."""
    from symuat.expr import smallness

    reading, bound = data.get("reading") or {}, sp.sympify(data["bound"])
    sigma, env = _sigma_name(data.get("sigma")), _ENVELOPES.get(_envelope(data))
    if sigma is None or env is None or (sigma, env[0]) not in _WHY:
        raise Unsupported(reason(data))
    if reading.get("part") != "units" or reading.get("params") not in _CONSTRAINED:
        raise Unsupported(reason(data) + " (only a unit's bound is stated)")
    params, kind = reading["params"], env[0]
    d, nn, a, W = smallness.delta, smallness.n, smallness.alpha, smallness.Wn
    # (the bound the check proved, its Coq term, the library lemma, a coefficient C with B(δ) ≤ C δ)
    shapes = {("bounded", "all"): (d, "delta", "env_bounded_outer", None),
              ("bounded", "outer"): (d, "delta", "env_bounded_outer", None),
              ("contracting", "all"): (d ** 2 * (nn + 1), "delta ^+ 2 * (n%:R + 1)", "env_contracting_all", "n%:R + 1"),
              ("contracting", "inner"): (d * (nn + 1) * sp.Abs(a), "delta * (n%:R + 1) * `|alpha|",
                                         "env_contracting_inner", "(n%:R + 1) * `|alpha|"),
              ("contracting", "outer"): (W * d, f"{_R_W} * delta", "env_contracting_outer", _R_W)}
    shape = shapes.get((kind, params))
    if shape is None or sp.simplify(bound - shape[0]) != 0 or (
            kind == "contracting" and params != "all" and reading.get("rest") != "fixed"):
        raise Unsupported(f"a bound {sp.sstr(bound)} through a {kind} σ for the {params} parameters: not a shape "
                          "coq/SymuatEnv.v states")
    _, b, lemma, coefficient = shape
    constrained = _CONSTRAINED[params]
    hyps = " ".join(_R_PARAMETERS[p][2] for p in constrained)
    # the lemma's hypotheses: a bounded σ's needs |α| ≤ δ only
    used = "Ha" if lemma == "env_bounded_outer" else f"{hyps} Hx"
    small = " -> ".join(_R_PARAMETERS[p][1] for p in constrained)
    comment = f"  (* s is {sigma}, R any ordered field (e.g. ℝ); premise true of {sigma}: {_WHY[(sigma, kind)]} *)\n"
    short = f"  (* s is {sigma} (see below) *)\n"
    # in ring_scope (%R): a batch may have imported SymuatSmall's Q notations
    head = f"(forall (R : realFieldType) (s : R -> R), {env[1]} ->\n  "
    statement = (f"Theorem {name}_bound :\n{short}  {head}forall (n : nat) (delta alpha theta : R) (w x : nat -> R),\n  "
                 f"{small} ->\n  {_R_POINT} ->\n  {_R_UNIT} <= {b})%R.")
    bound_proof = f"move=> R s Hs n delta alpha theta w x {hyps} Hx; exact: ({lemma} Hs {used})."
    fixed, uniform, body = _r_limit(reading)
    limit = f"Theorem {name} :\n{comment}  {head}{body})%R."
    intro = f"move=> R s Hs n {' '.join(fixed)}{' ' if fixed else ''}eta He; "
    names = f"{' '.join(uniform)} x {hyps} Hx"
    if coefficient is None:  # δ := η
        proof = intro + f"exists eta; split=> // {names}; exact: ({lemma} Hs {used})."
    else:  # δ := η / (C + 1 + η) (env_choice): B(δ) ≤ C δ ≤ η
        proof = (intro + f"symuat_env_limit (({coefficient})%R : R) He H0 H1 H2; move=> {names}; "
                 f"apply: env_le_trans ({lemma} Hs {used}) _; symuat_env_close H0 H1 H2.")
    return [Exported(f"{name}_bound", statement, bound_proof, requires=ENVELOPE_LIBRARY),
            Exported(name, limit, proof, requires=ENVELOPE_LIBRARY)]


def premises(certificates: list) -> str:
    """What a ``vanishing`` theorem over an ordered field assumes of σ (the record's reason), or ``""``."""
    for kind, data in certificates:
        if kind == "vanishing" and not _is_relu(data.get("sigma")):
            env, sigma = _ENVELOPES.get(_envelope(data)), _sigma_name(data.get("sigma"))
            if env and (sigma, env[0]) in _WHY:
                return (f"stated over any ordered field (realFieldType: ℝ is one) with σ = {sigma} a function s and "
                        f"the envelope {env[1].strip('()')} as a premise, the only fact of σ the bound uses (true of "
                        f"the real {sigma}: {_WHY[(sigma, env[0])]})")
    return ""


def refutation_premises(certificates: list) -> str:
    """What a logistic unit's refutation assumes of σ (the record's reason), or ``""``."""
    for kind, data in certificates:
        if (kind == "vanishing_refutation" and _sigma_name(data.get("sigma")) == "logistic"
                and (data.get("reading") or {}).get("part") == "units"):
            return ("stated over any ordered field (realFieldType: ℝ is one) with σ = logistic a function s and "
                    "s 0 = 1/2 as a premise (true of 1/(1 + e^(−t)) at 0), the only fact of σ the family uses")
    from symuat.certify import family

    return family.premises(certificates)  # the deep readings, tanh and GELU units


def export_vanishing(name: str, data: dict) -> list[Exported]:
    """The ``vanishing`` certificate: a ReLU unit's bound and limit over ℚ
    (:func:`relu_unit_theorems`); a logistic, tanh or GELU unit's over any ordered field, σ's
    envelope a premise (:func:`envelope_theorems`); anything else is not stated
    (:class:`Unsupported`, :func:`reason`)."""
    if _is_relu(data.get("sigma")):
        return relu_unit_theorems(name, data)
    return envelope_theorems(name, data)


#: the family's parameter names (``smallness.unit_witness``) → the unit's
_FAMILY = {"α": "alpha", "w": "w", "θ": "theta"}


def _family_term(value, delta) -> str:
    """A family's value, a sum of rational multiples of powers of δ, as a ``Q`` term of ``e`` (δ
    shrunk) and ``i`` (its inverse: ``1/δ²`` is ``i * i``)."""
    from symuat.certify.implication import rational

    terms = []
    for term in sp.Add.make_args(sp.expand(sp.sympify(value))):
        c, k = term.as_coeff_exponent(delta)
        if not (c.is_Rational and k.is_Integer):
            raise Unsupported(f"the family's value {sp.sstr(value)} is not a sum of rational multiples of powers of δ")
        factors = ([] if c == 1 and k else [f"({rational(c)})"]) + ["e" if k > 0 else "i"] * abs(int(k))
        terms.append(" * ".join(factors))
    return " + ".join(terms)


def relu_unit_refutation(name: str, data: dict) -> list[Exported]:
    """A ReLU unit's ``vanishing_refutation`` certificate over ℚ: ``~`` (the check's ∀η ∃δ
    statement), at the family: ``n = 1``, ``x = 1``, η half the family's limit (``1`` for a limit
    ∞), the δ the statement gives shrunk to ``e ≤ 1`` (``1/2`` for a limit ∞), ``i = 1/e``, each
    parameter its value at ``e``; the contradiction ``|unit| > η`` by ``nra`` (``coq/SymuatSmall.v``)."""
    reading, delta, limit = data.get("reading") or {}, data["delta"], sp.sympify(data["limit"])
    if reading.get("part") != "units" or reading.get("params") not in _CONSTRAINED:
        raise Unsupported(reason(data) + " (a deep reading: the network of layers is not stated over ℚ)")
    if reading.get("rest") == "fixed":
        raise Unsupported("a family for a reading with fixed parameters (none is refuted for ReLU units)")
    family = {_FAMILY.get(k): v for k, v in data.get("family", {}).items()}
    if None in family or set(family) != set(_PARAMETERS) or "n = 1" not in str(data.get("point", "x = 1 (n = 1)")):
        raise Unsupported(f"the family {data.get('family')} does not give every parameter of a unit at n = 1")
    if limit == sp.oo:
        eta, c = sp.Integer(1), sp.Rational(1, 2)
    elif limit.is_Rational and limit > 0:
        eta, c = limit / 2, sp.Integer(1)
    else:
        raise Unsupported(f"the family's limit {limit} is not a positive rational or ∞")
    from symuat.certify.implication import rational

    _, body = _limit_statement(reading)
    at = " ".join(f"({_family_term(family[p], delta)})" if p != "w" else f"(fun _ => {_family_term(family[p], delta)})"
                  for p in _PARAMETERS)
    proof = (f"intro H; destruct (H 1%nat ({rational(eta)})%Q ltac:(lra)) as (delta & Hd & Hall); "
             f"destruct (shrink delta ({rational(c)})%Q Hd ltac:(lra)) as (e & He & Hle & Hc); "
             "destruct (inverse e He) as (i & Hi & Hei); "
             f"pose proof (Hall {at} (fun _ => 1)) as Hu; clear Hall H; symuat_refute_unit Hu.")
    return [Exported(name, f"Theorem {name} :\n  ~ ({body}).", proof, requires=LIBRARY)]


def logistic_unit_refutation(name: str, data: dict) -> list[Exported]:
    """A logistic unit's refuting family for the inner parameters (w = 0, θ = 0, α = 1: the unit is
    σ(0) = 1/2 at every δ): for every ``realFieldType`` and every ``s`` with ``s 0 = 1/2`` (the
    premise, true of 1/(1 + e^(−t)) at 0), ``~`` (the check's ∀η ∃δ statement), at η = 1/4."""
    reading = data.get("reading") or {}
    family = {_FAMILY.get(k): sp.sympify(v) for k, v in data.get("family", {}).items()}
    if (_sigma_name(data.get("sigma")) != "logistic" or reading.get("part") != "units"
            or reading.get("params") != "inner" or family != {"w": 0, "theta": 0, "alpha": 1}
            or sp.sympify(data.get("limit")) != sp.Rational(1, 2)):
        raise Unsupported(reason(data))
    fixed, _, body = _r_limit(reading)
    statement = (f"Theorem {name} :\n  (* s is logistic, R any ordered field (e.g. ℝ); the premise s 0 = 1/2 is "
                 f"1/(1 + e^0); the family w = 0, θ = 0, α = 1 *)\n"
                 f"  (forall (R : realFieldType) (s : R -> R), s 0 = 2%:R^-1 ->\n  ~ ({body}))%R.")
    proof = ("move=> R s Hs H; have [d [Hd Hall]] := H 1%nat " + ("1%R " if fixed else "")
             + "(4%:R^-1)%R (env_quarter_pos R); "
             + "have Hu := Hall " + ("" if fixed else "1%R ") + "(fun _ => 0%R) 0%R (fun _ => 1%R); "
             "symuat_env_refute_half Hs Hu.")
    return [Exported(name, statement, proof, requires=ENVELOPE_LIBRARY)]


def export_vanishing_refutation(name: str, data: dict) -> list[Exported]:
    """The ``vanishing_refutation`` certificate: a ReLU unit's family over ℚ
    (:func:`relu_unit_refutation`); a deep reading's, a tanh or GELU unit's over any ordered field
    (:func:`symuat.certify.family.export_family`); a logistic unit's (:func:`logistic_unit_refutation`);
    anything else is not stated (:class:`Unsupported`, :func:`reason`)."""
    from symuat.certify import family

    if _is_relu(data.get("sigma")) and (data.get("reading") or {}).get("part") == "units":
        return relu_unit_refutation(name, data)
    if family.handles(data):  # the deep readings, tanh and GELU units (coq/SymuatFamily.v)
        unit = data["reading"].get("part") == "units"
        return family.export_family(name, data, _r_limit(data["reading"])[2] if unit else "")
    return logistic_unit_refutation(name, data)
