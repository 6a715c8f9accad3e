r"""A2's refuting families through σ in Coq: the deep readings (a residual network of every depth)
and the units through tanh and GELU (``coq/SymuatFamily.v``).

:func:`symuat.kernel.decide.check_vanishing` refutes a reading of A2 (":math:`\forall\eta>0\
\exists\delta>0`: the chosen parameters within δ ⇒ the contribution is at most η on
:math:`\mathbf I_n`") by a family within δ whose contribution tends (SymPy limit) to ∞ or to a
nonzero value; it records a ``vanishing_refutation`` certificate (the family, its value and limit,
σ, the reading). The theorems here state ``~`` (the check's statement) and prove it at the family,
over any ``realFieldType`` ``R`` (an ordered field: ℝ is one; Coq's ``Reals`` rest on axioms the
tier admits none of, MathComp 1.15 has neither ``exp``, ``erf`` nor limits), with σ a function
``s : R -> R`` and, as premises, the lower bounds of the real σ the family's value uses — each a
true fact of the real function, justified in the theorem's comment and in the record's reason
(:func:`premises`) —, or σ = ReLU itself (``Num.max 0 t``), with no premise:

* **deep** (``layers=deep``: a layer :math:`x\mapsto x+W_3\sigma(W_2x+b_2)+b_3` of a residual
  network, removed = replaced by the identity): the statement is about ``SymuatDepth``'s ``net``
  with ``W1 = 1`` at every layer, every depth ``L``, widths ``D``, ``F``, removed layer ``k < L``
  and every entry of the output's change ``forward … - forward_without …``; the smallness of a
  matrix is of every entry. ``rest=any``: one δ for every network (δ before ``D F L k N``);
  ``rest=fixed``: the network (its other parameters) comes before η and the removed layer's inner
  parameters ``W2``, ``b2`` after δ (``with_inner N k W2 b2``). The family is the kernel's
  (:func:`symuat.expr.smallness.deep_witness`): at ``D = F = 1``, ``x₀ = 1``, two layers (layer 0
  every parameter δ, layer 1 ``w = K, θ = −K, a = K, b = 0``, ``K = 1/δ``), its change at least
  ``c/δ`` once ``s t ≥ 0`` for ``t ≥ 0`` and ``s t ≥ s 0 + c`` for ``t ≥ 1``; or, with the outer
  parameters fixed (``a = b = 1``, one layer), ``1 + s(2δ) ≥ 1`` once ``s t ≥ 0`` for ``t ≥ 0``.
* **units** (``coq/SymuatEnv.v``'s statement, :func:`symuat.certify.vanishing._r_limit`): ``w = δ,
  θ = 0, α = 1/δ`` (``s(δ)/δ ≥ 1/2`` once ``s t ≥ t/2`` on ``[0, 1]``) and ``α = δ, w = 1/δ², θ = 0``
  (``δ s(1/δ²) ≥ 1/(2δ)`` once ``s t ≥ t/2`` for ``t ≥ 0``), at ``n = 1``, ``x = 1``.

The δ the statement gives is shrunk to ``e`` (``e ≤ δ``, and ``e ≤ c/2`` or ``e ≤ 1``): the family's
member at ``e`` is within δ and its contribution exceeds η (``1``, ``1/2``, ``1/4``).

>>> import sympy as sp
>>> t = sp.Symbol("t")
>>> print(premises_text("tanh", "deep", "any"))  # doctest: +NORMALIZE_WHITESPACE
s t >= 0 for t >= 0 (tanh t = (e^(2t) − 1)/(e^(2t) + 1)), s t >= s 0 + 1/2 for t >= 1 (tanh is increasing,
tanh 0 = 0, tanh 1 = (e² − 1)/(e² + 1) ≥ 1/2 as e² ≥ 3)
"""

from __future__ import annotations

import sympy as sp

from symuat.certify.coq_terms import Unsupported
from symuat.certify.export import Exported

#: the library file of these theorems
LIBRARY = "SymuatFamily"

NONNEG = "(forall t, 0 <= t -> 0 <= s t)"
#: σ → (the constant c of ``s t >= s 0 + c`` for ``t >= 1`` as a Coq term, as text)
STEP = {"tanh": ("2%:R^-1", "1/2"), "gelu": ("2%:R^-1", "1/2"), "logistic": ("6%:R^-1", "1/6")}
HALF_01 = "(forall t, 0 <= t <= 1 -> t / 2%:R <= s t)"
HALF_POS = "(forall t, 0 <= t -> t / 2%:R <= s t)"

#: why each premise is a true fact of the real σ
_WHY_NONNEG = {"tanh": "tanh t = (e^(2t) − 1)/(e^(2t) + 1)", "logistic": "1/(1 + e^(−t)) > 0",
               "gelu": "GELU t = tΦ(t)"}
_WHY_STEP = {"tanh": "tanh is increasing, tanh 0 = 0, tanh 1 = (e² − 1)/(e² + 1) ≥ 1/2 as e² ≥ 3",
             "logistic": "logistic is increasing, logistic 0 = 1/2, logistic 1 = 1/(1 + e^(−1)) ≥ 2/3 as e ≥ 2",
             "gelu": "GELU t = tΦ(t) is increasing for t ≥ 0, GELU 0 = 0, GELU 1 = Φ(1) ≥ 1/2"}
_WHY_HALF = {"tanh": "tanh is concave on [0, ∞) with tanh 0 = 0, so tanh t ≥ t·tanh 1 ≥ t/2 on [0, 1]",
             "gelu": "GELU t = tΦ(t) with Φ(t) ≥ 1/2 for t ≥ 0"}

RELU = "(fun t => Num.max 0 t)"

#: the removed layer's constrained parameters (the deep reading) → their smallness hypotheses
_DEEP_SMALL = {"inner": ("nW2", "nb2"), "outer": ("nW3", "nb3"), "all": ("nW2", "nb2", "nW3", "nb3")}


def _sigma(data: dict) -> str | None:
    """relu, logistic, tanh or gelu (``smallness.sigma``, as written first, else up to simplification), or None."""
    from symuat.expr import smallness

    sigma = data.get("sigma")
    if sigma is None or len(sp.sympify(sigma).free_symbols) != 1:
        return None
    sigma = sp.sympify(sigma)
    (t,) = sigma.free_symbols
    for same in (lambda a, b: a == b, lambda a, b: sp.simplify(a - b) == 0):
        for name in smallness.ACTIVATIONS:
            if same(sigma, smallness.sigma(name, t)):
                return name
    return None


def _equal(a, b) -> bool:
    a, b = sp.sympify(a), sp.sympify(b)
    return a == b or sp.expand(a - b) == 0 or sp.simplify(a - b) == 0


def _shape(data: dict) -> str | None:
    """Which family of the library the certificate is, checked against its family and value
    (``deep-any``, ``deep-fixed``, ``unit-inner``, ``unit-outer``), or None."""
    from symuat.expr import smallness

    reading, sigma = data.get("reading") or {}, _sigma(data)
    d = data.get("delta")
    if sigma is None or d is None:
        return None
    fam = {str(k): sp.sympify(v) for k, v in (data.get("family") or {}).items()}
    s = lambda x: smallness.sigma(sigma, x)
    value, limit = sp.sympify(data.get("value")), sp.sympify(data.get("limit"))
    K = 1 / d
    if reading.get("part") == "deep" and reading.get("params") in _DEEP_SMALL and reading.get("rest") == "any":
        expected = {"w_1": d, "θ_1": d, "a_1": d, "b_1": d, "w_2": K, "θ_2": -K, "a_2": K, "b_2": 0}
        x1 = 1 + d * s(2 * d) + d
        change = x1 + K * s(K * x1 - K) - (1 + K * s(sp.Integer(0)))
        if fam == expected and limit == sp.oo and _equal(value, change):
            return "deep-any"
    if reading.get("part") == "deep" and reading.get("params") == "inner" and reading.get("rest") == "fixed":
        expected = {"w_1": d, "θ_1": d, "a_1": 1, "b_1": 1}
        if fam == expected and limit.is_nonzero and _equal(value, s(2 * d) + 1):
            return "deep-fixed"
    if reading.get("part") == "units" and reading.get("rest") == "any" and sigma in ("tanh", "gelu"):
        if (reading.get("params") == "inner" and fam == {"w": d, "θ": 0, "α": K}
                and limit.is_nonzero and _equal(value, s(d) / d)):
            return "unit-inner"
        if (reading.get("params") == "outer" and sigma == "gelu" and fam == {"α": d, "w": d ** -2, "θ": 0}
                and limit == sp.oo and _equal(value, d * s(d ** -2))):
            return "unit-outer"
    return None


def handles(data: dict) -> bool:
    """Whether the ``vanishing_refutation`` certificate ``data`` is one of this module's families."""
    return _shape(data) is not None


def _premises(sigma: str, shape: str) -> list[tuple[str, str]]:
    """(the premise on ``s``, why it holds of the real σ) for a family ``shape``; none for ReLU."""
    if sigma == "relu":
        return []
    if shape == "deep-any":
        c, text = STEP[sigma]
        return [(NONNEG, _WHY_NONNEG[sigma]), (f"(forall t, 1 <= t -> s 0 + {c} <= s t)", _WHY_STEP[sigma])]
    if shape == "deep-fixed":
        return [(NONNEG, _WHY_NONNEG[sigma])]
    if shape == "unit-inner":
        return [(HALF_01, _WHY_HALF[sigma])]
    return [(HALF_POS, _WHY_HALF[sigma])]


def _plain(premise: str) -> str:
    """A premise as the reason says it: ``s t >= 0 for t >= 0``."""
    import re

    m = re.fullmatch(r"\(forall t, (.*) -> (.*)\)", premise)
    cond, concl = m.group(1), m.group(2)
    concl = concl.replace("2%:R^-1", "1/2").replace("6%:R^-1", "1/6").replace("t / 2%:R", "t/2")
    cond = "0 <= t <= 1" if cond == "0 <= t <= 1" else cond
    where = {"0 <= t": "for t >= 0", "1 <= t": "for t >= 1", "0 <= t <= 1": "on [0, 1]"}[cond]
    rel = concl.split(" <= ")
    return f"s t >= {rel[0]} {where}" if rel[1] == "s t" else f"{concl} {where}"


def premises_text(sigma: str, part: str, rest: str, params: str = "inner") -> str:
    """The premises of a family's theorem as the record's reason says them."""
    shape = {("deep", "any"): "deep-any", ("deep", "fixed"): "deep-fixed"}.get(
        (part, rest), "unit-inner" if params == "inner" else "unit-outer")
    return ", ".join(f"{_plain(p)} ({why})" for p, why in _premises(sigma, shape))


def premises(certificates: list) -> str:
    """What a family's theorem assumes of σ (the record's reason), or ``""``."""
    for kind, data in certificates:
        if kind != "vanishing_refutation" or not handles(data):
            continue
        sigma, shape = _sigma(data), _shape(data)
        where = ("the network of coq/SymuatDepth.v (W1 = 1, every depth, widths, removed layer), its family at "
                 "D = F = 1, " + ("two layers" if shape == "deep-any" else "one layer") if shape.startswith("deep")
                 else "a unit of D1's sum, its family at n = 1, x = 1")
        if sigma == "relu":
            return (f"stated over any ordered field (realFieldType: ℝ is one) with σ = Num.max 0 itself (no premise); "
                    f"{where}")
        said = "; ".join(f"{_plain(p)} ({why})" for p, why in _premises(sigma, shape))
        return (f"stated over any ordered field (realFieldType: ℝ is one) with σ = {sigma} a function s and, as "
                f"premises, the lower bounds of σ the family's value uses, true of the real {sigma}: {said}; {where}")
    return ""


def _deep_body(reading: dict, s: str) -> str:
    """The deep reading's ∀η ∃δ statement (``rest=any``: δ for every network) or, for ``rest=fixed``,
    with the network before η and the removed layer's inner parameters after δ."""
    point = "(forall i j, 0 <= x0 i j <= 1) ->\n     "
    if reading.get("rest") == "fixed":
        net = "with_inner N k W2 b2"
        return ("forall (D F L k : nat) (N : net R D F), (k < L)%nat -> (forall l, nW1 N l =m idm [:: D]) ->\n     "
                "forall eta : R, 0 < eta -> exists delta : R, 0 < delta /\\\n     "
                "forall (W2 : mx R [:: F] [:: D]) (b2 : mx R [:: F] [::]) (x0 : mx R [:: D] [::]),\n     "
                "(forall i j, `|W2 i j| <= delta) -> (forall i j, `|b2 i j| <= delta) ->\n     " + point +
                f"forall i j, `|forward {s} ({net}) x0 L i j - forward_without {s} ({net}) x0 k L i j| <= eta")
    small = " -> ".join(f"(forall i j, `|{m} N k i j| <= delta)" for m in _DEEP_SMALL[reading["params"]])
    return ("forall eta : R, 0 < eta -> exists delta : R, 0 < delta /\\\n     "
            "forall (D F L k : nat) (N : net R D F) (x0 : mx R [:: D] [::]),\n     "
            "(k < L)%nat -> (forall l, nW1 N l =m idm [:: D]) ->\n     " + small + " ->\n     " + point +
            f"forall i j, `|forward {s} N x0 L i j - forward_without {s} N x0 k L i j| <= eta")


def export_family(name: str, data: dict, unit_statement: str = "") -> list[Exported]:
    """The ``vanishing_refutation`` certificate of a deep reading, or of a tanh or GELU unit: ``~``
    (the check's statement: a unit's is ``unit_statement``, :func:`symuat.certify.vanishing._r_limit`'s,
    ``coq/SymuatEnv.v``'s), proved at the family (see the module); anything else is :class:`Unsupported`."""
    shape, sigma = _shape(data), _sigma(data)
    if shape is None or (shape.startswith("unit") and not unit_statement):
        raise Unsupported("not a family coq/SymuatFamily.v states")
    reading = data["reading"]
    hyps = _premises(sigma, shape)
    relu = sigma == "relu"
    s = RELU if relu else "s"
    binders = "(R : realFieldType)" + ("" if relu else " (s : R -> R)")
    head = f"(forall {binders}, " + "".join(f"{p} ->\n  " for p, _ in hyps)
    if shape.startswith("deep"):
        body = _deep_body(reading, s)
        family = ("two layers, layer 0 every parameter e <= delta, layer 1 (W2, b2, W3, b3) = (1/e, -1/e, 1/e, 0)"
                  if shape == "deep-any" else "one layer, (W3, b3) = (1, 1) fixed, W2 = b2 = delta")
        what = ("the residual network of SymuatDepth (W1 = 1), forward_without: layer k replaced by the identity; "
                f"the family at D = F = 1, x0 = 1, {family}")
    else:
        body = unit_statement
        what = ("the family w = e, theta = 0, alpha = 1/e" if shape == "unit-inner"
                else "the family alpha = e, w = 1/e^2, theta = 0") + ", n = 1, x = 1"
    said = ("σ = max(0, t) itself" if relu else f"s is {sigma}; its premises, true of the real {sigma}: "
            + "; ".join(f"{_plain(p)} ({w})" for p, w in hyps))
    statement = (f"Theorem {name} :\n  (* {said}; R any ordered field (e.g. ℝ); {what} *)\n"
                 f"  {head}~ ({body}))%R.")
    intro = "move=> R " + ("" if relu else "s " + " ".join(f"H{n + 1}" for n in range(len(hyps))) + " ") + "H; "
    if shape == "deep-any":
        c = "1" if relu else STEP[sigma][0]
        h1, h2 = ("(@relu_nonneg R)", "(@relu_step R)") if relu else ("H1", "H2")
        proof = (intro + "have [d [Hd Hall]] := H _ fam_one_pos.\n"
                 f"have Hc : (0 < {c} / 2%:R :> R)%R by symuat_fam_pos.\n"
                 "have [e [He [Hed Hec]]] := fam_shrink Hd Hc.\n"
                 f"apply: (deep_any_contra {h1} {h2} He Hec); apply: Hall; symuat_fam_premises He Hed Hd.")
    elif shape == "deep-fixed":
        h1 = "(@relu_nonneg R)" if relu else "H1"
        proof = (intro + "have [d [Hd Hall]] := H 1%nat 1%nat 1%nat 0%nat (fam2 0%R 0%R 1%R 1%R 0%R) erefl "
                 "(fam2_W1 _ _ _ _ _) _ fam_half_pos.\n"
                 f"apply: (deep_fixed_contra {h1} Hd); apply: Hall; symuat_fam_premises Hd Hd Hd.")
    else:
        lemma, at = (("unit_inner_contra", "(e^-1)%R (fun _ => e) 0%R (fun _ => 1%R)") if shape == "unit-inner"
                     else ("unit_outer_contra", "e (fun _ => ((e * e)^-1)%R) 0%R (fun _ => 1%R)"))
        proof = (intro + "have [d [Hd Hall]] := H 1%nat _ fam_quarter_pos.\n"
                 "have [e [He [Hed He1]]] := fam_shrink Hd fam_one_pos.\n"
                 f"apply: ({lemma} H1 He He1); apply: (Hall {at}); symuat_fam_premises He Hed Hd.")
    return [Exported(name, statement, proof, requires=LIBRARY)]
