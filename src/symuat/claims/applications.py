r"""Claims A1–A6: the applications the papers draw — pruning (A1, A2), LoRA (A3, A4), in-context
learning (A5) and the multi-function claims (A6).

* **A1** — real arithmetic with absolute values (:mod:`symuat.expr.pruning`), decided by sign cases and
  Fourier–Motzkin elimination (:func:`symuat.kernel.decide.check_real_implication`).
* **A2** — per reading and per σ, a proved vanishing bound or a witness family whose contribution
  does not vanish (:mod:`symuat.expr.smallness`, :func:`~symuat.kernel.decide.check_vanishing`).
* **A3** — the lift of a LoRA update, for symbolic dimensions; the rank of the lifted increment
  from its Kronecker structure, cross-checked by exact ranks (:mod:`symuat.numeric.lora`).
* **A4** — Eq. 18 under every reading against the fine-tuned network's own unrolled form
  (``to_duat`` and an exact rational Transformer), and the corrected Eq. 18 (T7's induction).
* **A5** — which token blocks of :math:`(\mathbf W'_{HVO})^T` are nonzero, from the index-level
  normal form (:func:`symuat.kernel.structure.generic_density`).
* **A6** — links to H9, L2.9 and T10; the rest informal.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import partial

import numpy as np
import sympy as sp
from sympy import Identity, MatrixSymbol

from symuat.numeric import lora
from symuat.expr import pruning, smallness
from symuat.expr.algebra import T, add, dims, kron, mul
from symuat.expr.attention import MASKS, PROJECTIONS, mha_symbols
from symuat.expr.elementwise import Sigma
from symuat.expr.heads import BlockSymbol
from symuat.claims import _named as named
from symuat.kernel import certificates, decide
from symuat.kernel.registry import REGISTRY
from symuat.kernel.status import Status
from symuat.kernel.structure import generic_density, generic_support
from symuat.expr.linear import lift_right
from symuat.text.printing import latex
from symuat.expr.residual import RawLayer
from symuat.expr.vec import Vec

GROUP = "applications"

# --------------------------------------------------------------------------------------------
# A1 — pruning inequalities
# --------------------------------------------------------------------------------------------

A1 = REGISTRY.claim(
    "A1", "Pruning inequalities", where="UAT §4.3 Eq. 9–12; AAAI §4.3 Eq. 12–15; DUAT §4.3 Eq. 13–16",
    statement=r"\Big|\sum_{j\in\Lambda}\alpha_j\sigma(\mathbf W_j^{T}\mathbf x+\theta_j)-f(\mathbf x)\Big|<\varepsilon,\ "
    r"|S_k|\to0\ \Rightarrow\ \big||S_1-f|-|S_2|\big|<\varepsilon,\quad |S_1-f|<\varepsilon+|S_2|",
    group=GROUP,
    remarks=r"$S_k(\mathbf x)=\sum_{j\in\Lambda_k}\alpha_j\sigma(\mathbf W_j^T\mathbf x+\theta_j)$ for a partition "
    r"$\Lambda_1\sqcup\Lambda_2=\Lambda$. Pointwise the values $S_1,S_2,f$ are arbitrary reals (a constant network "
    r"attains any), so each item is a formula of linear real arithmetic with absolute values, decided exactly for an "
    r"arbitrary partition; a counterexample is realised as a constant logistic network and re-checked exactly. "
    r"A limit hypothesis constrains no finite member of a sequence, so it is decided as no hypothesis.",
)
_A1_READINGS = [("S1", "uniform"), ("S1", "limit"), ("S2", "uniform"), ("S2", "limit"), ("none", None)]


def _a1_tags(hyp, to0, sums=None):
    tags = [f"hyp={hyp}"] + ([f"to0={to0}"] if to0 else []) + ([f"sums={sums}"] if sums else [])
    return tuple(tags)


def _a1_pruning_bound(hyp: str = "S2"):
    kept, small = (pruning.S1, pruning.S2) if hyp == "S2" else (pruning.S2, pruning.S1)
    return decide.check_real_implication(
        pruning.VARIABLES, pruning.setup() + [sp.Abs(small) <= pruning.delta, pruning.delta > 0],
        sp.Abs(kept - pruning.f) < pruning.eps + pruning.delta, sample=pruning.sample)


_PRUNE_LATEX = {"S2": r"\sup_{\mathbf I_n}|S_2|\le\delta\ \Rightarrow\ \sup_{\mathbf I_n}|S_1-f|<\varepsilon+\delta",
                "S1": r"\sup_{\mathbf I_n}|S_1|\le\delta\ \Rightarrow\ \sup_{\mathbf I_n}|S_2-f|<\varepsilon+\delta"}


def _a1(item: str, hyp: str, to0, sums: str = "Λ"):
    # a limit constrains no finite member of the sequence: the same formula as no hypothesis
    key = (item, "none" if to0 == "limit" else hyp, None if to0 == "limit" else to0, sums)
    # the certificates the decision recorded go with the memoised verdict (each reading rests on them)
    return certificates.memoised(_A1_MEMO, key, partial(_a1_decide, *key))


_A1_MEMO: dict = {}


def _a1_decide(item: str, hyp: str, to0, sums: str):
    concl = pruning.a1_i() if item == "i" else pruning.a1_ii()
    corrected = None
    if sums == "Λ":
        hyps = pruning.setup() + pruning.smallness(hyp, to0 or "uniform")
        realise = lambda m: pruning.realise(m, (1,), (2,), hyp, to0 or "uniform", concl,
                                            {1: m[pruning.S1], 2: m[pruning.S2]})
        return decide.check_real_implication(pruning.VARIABLES, hyps, concl, realise=realise, sample=pruning.sample)
    corrected = (r"|S_{\Lambda_1}-f|<\varepsilon+|S_{\Lambda_2}|\ \text{(sums over }\Lambda_1,\Lambda_2)",
                 partial(_a1, "ii", hyp, to0, "Λ"))
    verdicts, sizes = [], []
    for N in (2, 3):
        for lam1, lam2 in pruning.partitions(N):
            variables, hyps, c = pruning.literal_statement(N, lam1, lam2, hyp, to0 or "uniform")
            t = pruning.term_symbols(N)
            realise = (lambda m, lam1=lam1, lam2=lam2, c=c, t=t:
                       pruning.realise(m, lam1, lam2, hyp, to0 or "uniform", c, {j + 1: m[t[j]] for j in range(len(t))}))
            v = decide.check_real_implication(variables, hyps, c, realise=realise, corrected=corrected)
            if v.status is Status.REFUTED:
                v.counterexample.sizes = {"N": N, "N_1": len(lam1), "N_2": len(lam2)}
                v.detail = f"Λ₁ = {set(lam1)}, Λ₂ = {set(lam2)}: the literal sums are over j = 1..{len(lam1)} and j = 1..{len(lam2)}"
                return v
            verdicts.append(v)
            sizes.append({"N": N, "N_1": len(lam1)})
    return decide.at_listed_sizes(verdicts, sizes, "N and partition")


for _hyp, _to0 in _A1_READINGS:
    A1.check("i", _a1_tags(_hyp, _to0), r"|S_1+S_2-f|<\varepsilon" + ("" if _hyp == "none" else rf",\ |S_{{{_hyp[1]}}}|\to0")
             + r"\ \Rightarrow\ \big||S_1-f|-|S_2|\big|<\varepsilon", partial(_a1, "i", _hyp, _to0),
             note="arbitrary partition; every real S_1, S_2, f, ε" + (", δ" if _to0 == "uniform" else ""))
for _sums in ("Λ", "literal"):
    for _hyp, _to0 in _A1_READINGS:
        _lhs = r"\Big|\sum_{j=1}^{N_1}\alpha_j\sigma(\cdot)-f\Big|" if _sums == "literal" else r"|S_1-f|"
        _rhs = r"\varepsilon+\Big|\sum_{j=1}^{N_2}\alpha_j\sigma(\cdot)\Big|" if _sums == "literal" else r"\varepsilon+|S_2|"
        _pre = r"|S_1+S_2-f|<\varepsilon" + ("" if _hyp == "none" else rf",\ |S_{{{_hyp[1]}}}|\to0") + r"\ \Rightarrow\ "
        A1.check("ii", _a1_tags(_hyp, _to0, _sums), _pre + _lhs + "<" + _rhs, partial(_a1, "ii", _hyp, _to0, _sums),
                 note="literal ranges: decided for every partition at N = 2, 3" if _sums == "literal" else
                 "arbitrary partition")
for _hyp in ("S2", "S1"):
    A1.check("prune", (f"hyp={_hyp}",), _PRUNE_LATEX[_hyp], partial(_a1_pruning_bound, _hyp),
             polarity=None, role="extension",
             note="the corrected pruning bound: removing the small part costs at most its sup, δ, on top of ε "
                  "(under the UAT hypothesis the small part is Λ₁, so it is Λ₁ that can be removed)")


def _a1_pruning_limit():
    if certificates.listened():  # the limit statement itself (certify/implication.py: export_uniform_limit)
        S1, S2, f, eps, delta = pruning.VARIABLES
        certificates.record("uniform_limit", sequence=[S1, S2], point=[f], constants=[eps],
                            hypotheses=pruning.setup(), small=sp.Abs(S2) <= delta, bound=delta,
                            kept=sp.Abs(S1 - f), limit=eps)
    uniform = REGISTRY.verdict("A1.prune[hyp=S2]")
    out = decide.combine_all([uniform], ["∀δ > 0: sup|S_2| ≤ δ ⇒ sup|S_1 − f| < ε + δ"])
    out.method = ("from the uniform bound, proved for every δ > 0 (A1.prune[hyp=S2]): along a sequence with "
                  "δ_m = sup|S_2^(m)| → 0, sup|S_1^(m) − f| < ε + δ_m, so limsup ≤ ε; " + out.method)
    return out


A1.check("prune", ("hyp=S2", "to0=limit"),
         r"\sup_{\mathbf I_n}|S_2^{(m)}|\to0\ \Rightarrow\ \limsup_m\sup_{\mathbf I_n}|S_1^{(m)}-f|\le\varepsilon",
         _a1_pruning_limit, polarity=None, role="extension",
         note="the limit reading of the corrected bound: only ≤ ε survives the limit (each member has < ε + δ_m)")
A1.check("prune.tight", ("hyp=S2",),
         r"\sup|S_2|\le\delta\ \Rightarrow\ |S_1-f|<\varepsilon+\delta/2",
         lambda: decide.check_real_implication(
             pruning.VARIABLES, pruning.setup() + [sp.Abs(pruning.S2) <= pruning.delta, pruning.delta > 0],
             sp.Abs(pruning.S1 - pruning.f) < pruning.eps + pruning.delta / 2),
         polarity=None, role="extension", note="the bound ε + δ cannot be halved in δ (a refutation is expected)")


def _a1_networks():
    def trial(sizes, seed):
        worst = pruning.numeric_network_check(seed, N=sizes["N"], n=sizes["n"])
        return worst < 0, f"max over the grid of |S₁−f|−(ε+|S₂|) and ||S₁−f|−|S₂||−ε: {worst:.3g} < 0", {"worst": worst}
    return decide.check_numeric(trial, [{"N": 8, "n": 2}, {"N": 16, "n": 3}], seeds=(0, 1),
                                what="random logistic networks, random partitions, f within ε of G, 64 points of I_n")


A1.check("net", None, r"\max_{\mathbf x}\big(|S_1-f|-(\varepsilon+|S_2|)\big)<0\ \text{and}\ \max_{\mathbf x}\big(\big||S_1-f|-|S_2|\big|-\varepsilon\big)<0\ \text{(random networks, float64)}", _a1_networks, role="step",
         note="numeric confirmation on networks: 20 networks per instance, random partitions")

# --------------------------------------------------------------------------------------------
# A2 — small parameters
# --------------------------------------------------------------------------------------------

A2 = REGISTRY.claim(
    "A2", "“Small parameters, so those parts can be removed”", where="UAT §4.3; AAAI §4.3; DUAT §4.3 (closing sentence)",
    statement=r"\forall\eta>0\ \exists\delta>0:\ |\text{parameters of a part}|\le\delta\ \Rightarrow\ "
    r"\sup_{\mathbf I_n}|\text{contribution of the part}|\le\eta",
    group=GROUP,
    remarks="Readings: parameters = inner (w_j, θ_j) / outer (α_j) / all; layers = units (a term of D1's sum) / deep "
    "(one residual layer x ↦ x + aσ(wx+θ) + b among others; removed = replaced by the identity); σ = logistic, tanh, "
    "ReLU, GELU; symuat adds rest = any (δ uniform in the other parameters of the network) / fixed (the rest of the "
    "trained network fixed, δ may depend on it). A proved bound |ασ(wᵀx+θ)| ≤ |α|(c₀ + c₁(‖w‖₁+|θ|)) from a proved envelope |σ(t)| ≤ c₀ + c₁|t|, or "
    "an explicit family with the constrained parameters within δ whose contribution tends to a positive limit or ∞.",
)


def _a2(part, params, name, rest):
    if part == "units":
        witness, bound = smallness.unit_witness(name, params, rest), smallness.unit_bound(name, params, rest=rest)
        corrected = (r"|\alpha|,\|\mathbf w\|_\infty,|\theta|\le\delta\ \Rightarrow\ |\alpha\sigma(\mathbf w^T\mathbf x+\theta)|\le"
                     r"\delta(c_0+c_1(n+1)\delta)\to0",
                     lambda: REGISTRY.verdict(f"A2[layers=units,parameters=all,σ={name},rest=any]"))
    else:
        witness, bound = smallness.deep_witness(name, params, rest), smallness.deep_bound(name, params, rest)
        corrected = (r"\text{the later layers fixed: }\|\Delta\text{output}\|\le\Lambda\,\delta\,(1+c_0+c_1(n+1)\delta),\ "
                     r"\Lambda=\prod_{m>k}\mathrm{Lip}_m,\ \mathrm{Lip}_m\le\|W1_m\|+\|W3_m\|\|W2_m\|\mathrm{Lip}(\sigma)",
                     lambda: REGISTRY.verdict(f"A2[layers=deep,parameters=all,σ={name},rest=fixed]"))
    return decide.check_vanishing(smallness.delta, witness=witness, bound=bound, sigma=smallness.sigma(name, smallness.t),
                                  what=f"{part}, {params}, {name}, rest {rest}", corrected=corrected,
                                  reading={"part": part, "params": params, "rest": rest})


_A2_PARAMS = {"inner": r"\mathbf w,\theta", "outer": r"\alpha", "all": r"\alpha,\mathbf w,\theta"}
for _part in smallness.PARTS:
    for _params in smallness.PARAMETERS:
        for _name in smallness.ACTIVATIONS:
            for _rest in smallness.RESTS:
                A2.check(None, (f"layers={_part}", f"parameters={_params}", f"σ={_name}", f"rest={_rest}"),
                         r"|" + _A2_PARAMS[_params] + r"|\le\delta\Rightarrow\sup_{\mathbf I_n}|"
                         + (r"\alpha\sigma(\mathbf w^T\mathbf x+\theta)" if _part == "units" else r"\Delta\,\text{output}")
                         + r"|\to0" + (r"\ \text{(other parameters fixed)}" if _rest == "fixed"
                                        else r"\ \text{(uniformly in the other parameters)}"),
                         partial(_a2, _part, _params, _name, _rest),
                         note="rest=any: one δ for every value of the other parameters; rest=fixed: δ may depend on them")


# --------------------------------------------------------------------------------------------
# A3 — LoRA and its lift
# --------------------------------------------------------------------------------------------

A3 = REGISTRY.claim(
    "A3", "LoRA update and its matrix-vector lift (Eq. 17)", where="DUAT §4.4 Eq. 17; AAAI §4.4 Eq. 16; UAT §4.4 (Fig. 7)",
    statement=r"\mathbf h=\mathbf W_0\mathbf x+\Delta\mathbf W\mathbf x,\ \Delta\mathbf W=\mathbf B\mathbf A",
    group=GROUP,
    remarks=r"$\mathbf W_0\in\mathbb R^{p\times q}$, $\mathbf B\in\mathbb R^{p\times r}$, $\mathbf A\in\mathbb R^{r\times q}$; "
    r"a Linear layer on tokens $X\in\mathbb R^{N\times p}$, $X\mapsto XW$, lifted as in M1. What the rank means: the lifted "
    r"increment $I_N\otimes(BA)^T$ has rank $Nr$, not $r$ — the same fraction $r/\min(p,q)$ of full rank as $\Delta W$, so "
    r"it is a low-rank update of the lifted parameters only in that relative sense; it is moreover block-diagonal "
    r"(one copy of $\Delta W$ per token), a structured update, not a generic rank-$Nr$ one.",
)
_N, _p, _q, _r = dims("N p q r")
_W0, _B, _A = MatrixSymbol("W_0", _p, _q), MatrixSymbol("B", _p, _r), MatrixSymbol("A", _r, _q)
_xq, _X = MatrixSymbol("x", _q, 1), MatrixSymbol("X", _N, _p)
_dW = mul(_B, _A)
A3.check("eq", None, r"\mathbf W_0\mathbf x+\Delta\mathbf W\mathbf x=(\mathbf W_0+\Delta\mathbf W)\mathbf x",
         partial(decide.check_identity, add(mul(_W0, _xq), mul(_dW, _xq)), mul(add(_W0, _dW), _xq)))
for _o in ("col", "row"):
    A3.check("lift", (_o,), r"(\mathbf W_0+\Delta\mathbf W)'=\mathbf W_0'+\Delta\mathbf W'",
             partial(decide.check_identity, lift_right(add(_W0, _dW), _N, _o),
                     add(lift_right(_W0, _N, _o), lift_right(_dW, _N, _o))),
             note=f"lift of X ↦ XW: {latex(lift_right(_W0, _N, _o))}")
    A3.check("lift.apply", (_o,), r"T_D(X(\mathbf W_0+\Delta\mathbf W))=\mathbf W_0'T_D(X)+\Delta\mathbf W'T_D(X)",
             partial(decide.check_identity, Vec(mul(_X, add(_W0, _dW)), _o),
                     add(mul(lift_right(_W0, _N, _o), Vec(_X, _o)), mul(lift_right(_dW, _N, _o), Vec(_X, _o)))),
             role="step")

_LORA_HYP = {sp.Min(_p, _q, _r): _r}  # LoRA: r ≤ min(p, q)
_RANK_GRID = [{_N: N, _p: p, _q: q, _r: r} for N, p, q, r in
              [(2, 3, 2, 1), (3, 3, 3, 2), (2, 4, 3, 2), (1, 3, 2, 2), (3, 2, 4, 1), (2, 3, 3, 3)]]


def _rank_count(order, sizes):
    from symuat.kernel.evaluate import Evaluator

    expr = lift_right(_dW, _N, order)
    rng = np.random.default_rng(sum(sizes.values()))
    vals = {n: rng.integers(-3, 4, size=tuple(int(sp.sympify(d).subs(sizes)) for d in shape)).astype(object)
            for n, shape in decide.leaf_shapes(expr).items()}
    dense = Evaluator(sizes, vals, "exact")(expr)
    return Fraction(decide.exact_rank(dense))


def _a3_rank(order, claim):
    expr = lift_right(_dW, _N, order)
    derived = lora.structural_rank(expr, _LORA_HYP)
    if claim == "value":  # symuat's value, reported beside the verdict: the papers state no rank
        claimed, name, count = _N * _r, r"\operatorname{rank}\Delta\mathbf W'", partial(_rank_count, order)
    else:  # the same fraction of the largest possible rank as ΔW itself: rank/(N·min(p,q)) = r/min(p,q) (q ≤ p here)
        claimed, name = _r / _q, r"\operatorname{rank}\Delta\mathbf W'/(N\min(p,q))"
        derived = sp.cancel(derived / (_N * _q))
        count = lambda sizes: _rank_count(order, sizes) / (sizes[_N] * min(sizes[_p], sizes[_q]))
    grid = [s for s in _RANK_GRID if claim == "value" or s[_q] <= s[_p]]
    verdict = named.check_quantity(name, claimed, derived, count, [_N, _p, _q, _r], grid=grid,
                                   how="structure: rank(I_N ⊗ (BA)ᵀ) = rank(I_N)·rank(BA) = N·min(p, q, r) = N·r (LoRA: r ≤ min(p, q)); "
                                       "cross-checked by exact ranks (rational elimination) of random integer B, A")
    if verdict.status is Status.PROVED:
        # what the equality rests on, for the Coq exporter (certify/kron_rank.py): the lift, its order, the claim
        certificates.record("rank_kron", expr=expr, order=order, claim=claim, claimed=claimed, derived=derived)
    return verdict


for _o in ("col", "row"):
    A3.check("rank", (_o,), r"\operatorname{rank}\Delta\mathbf W'=N\,r", partial(_a3_rank, _o, "value"),
             role="quantity", polarity=None,
             paper_says="no rank stated: “low-rank” appears only in the title of the cited LoRA paper",
             note="the rank of the lifted update, a value symuat reports beside the verdict (tokens N; under the "
                  "other convention, X ↦ WX on columns of length M, it is M·r)",
             why="the lift is I_N ⊗ (BA)ᵀ: one copy of ΔW per token, so the ranks multiply")
    A3.check("lowrank", (_o,), r"\operatorname{rank}\Delta\mathbf W'/(N\min(p,q))=r/\min(p,q)\quad(q\le p)",
             partial(_a3_rank, _o, "low-rank"), role="quantity",
             paper_says="LoRA (low-rank adaptation) is a layer-wise fine-tuning of the lifted parameters",
             note="“low-rank” (LoRA's name, the only sense the seeds give it) read as low rank relative to the size: "
                  "the same fraction of full rank as ΔW; shown for q ≤ p")
A3.check("layerwise", None, r"\text{“LoRA is a layer-wise fine-tuning of the lifted parameters”}",
         lambda: decide.informal("the paraphrase names no relation beyond A3.eq and A3.lift (proved): the lifted "
                                 "parameters of the tuned layer change by the lift of ΔW, those of other layers do not "
                                 "(they are separate matrices). In the DUAT form the picture changes: A4.concl."),
         polarity=None)

# --------------------------------------------------------------------------------------------
# A4 — LoRA in the DUAT form (Eq. 18)
# --------------------------------------------------------------------------------------------

A4 = REGISTRY.claim(
    "A4", "LoRA in the DUAT form (Eq. 18)", where="DUAT §4.4 Eq. 18; AAAI §4.4 Eq. 17",
    statement=r"\mathbf x_{i+1}=(\mathbf W'_{i+1,1}\mathbf x_0+\mathbf b_{i+1,1})+\sum_{j=1}^{i+1}(\mathbf W'_{j,3}+\Delta\mathbf W_{j+1,3})"
    r"+\sigma\big((\mathbf W'_{j,2}+\Delta\mathbf W_{j+1,2})\mathbf x'_0+\mathbf b'_{j,2}\big)",
    group=GROUP,
    remarks="Each reading against the fine-tuned network's unrolled form (to_duat on the fine-tuned blocks, which "
    "equals their forward pass: A4.ref), at depths L = 2, 3 with a rank-1 LoRA increment on the tuned layer k = 1..L: "
    "float64 Transformer blocks (softmax, GELU, biases; N=3, M=4, h=2, F=6) and an exact Transformer (rational "
    "row-stochastic attention 1+(q·k)² normalised, σ(t)=t³−2t+1; N=2, M=2, F=3). W3 = the FFN's second matrix "
    "(Eq. 20's W3), W2 = its first (Eq. 20's W2 before absorption), attn = the value projection (outside Eq. 18's "
    "statement, which applies LoRA to the FFN: an extension). ΔW_{L+1,·} := 0 (no layer L+1). "
    "Why the readings fail (A4.eq20, A4.concl): with W1 independent of the input (Eq. 20 networks) exactly the "
    "reading Δ=induced, b2=recomputed, idx=j, op=times reproduces; in a Transformer, tuning layer k changes the "
    "input of every later attention, hence W'_{L,1} (which Eq. 18 keeps) and the W'_{j,3} of earlier indices, "
    "so a reading reproduces only when the last layer is tuned.",
)


def _instances(target: str, formula) -> list[decide.Instance]:
    out = []
    for L, k in lora.SCENARIOS:
        for exact in (False, True):
            sizes = {"L": L, "k": k, **(lora.EXACT_SIZES if exact else lora.FLOAT_SIZES)}
            name = f"L={L}, LoRA on {target} of layer {k}, {'exact' if exact else 'float64'}"

            def compute(L=L, k=k, exact=exact):
                s = lora.scenario(L, k, target, exact)
                return formula(s), s.ft.evaluate()

            out.append(decide.Instance(name, sizes, exact, compute,
                                       values=lambda L=L, k=k, exact=exact: lora.scenario(L, k, target, exact).values))
    return out


_EQ18_CORRECTED = (r"\mathbf x'_L=(\tilde{\mathbf W}'_{L,1}\mathbf x'_0+\tilde{\mathbf b}_{L,1})+\sum_{j=1}^{L}(\mathbf W'_{j,3}+\Delta\mathbf W_{j,3})"
                   r"\,\sigma\big((\mathbf W'_{j,2}+\Delta\mathbf W_{j,2})\mathbf x'_0+\tilde{\mathbf b}'_{j,2}\big),\ "
                   r"\Delta=\text{induced; the terms with a tilde recomputed (T7, T9) from the fine-tuned network}")


def _a4_corrected_symbolic():
    """The corrected Eq. 18 for a symbolic layer index: the fine-tuned network is again a network
    of the same kind, so T7's induction unrolls it; at the tuned layer k the step with
    W2_k + ΔW2, W3_k + ΔW3 on the hypothesis x'_{k-1} = A x'_0 + c + R gives the increments
    ΔW_{k,3} = ΔW3, ΔW_{k,2} = ΔW2·A, and b'_{k,2} recomputed = e_k + ΔW2(c + R)."""
    from symuat.claims import lemmas

    D, F, X0 = lemmas.D, lemmas.F, lemmas.X0
    Rn = lemmas.raw("k")
    A_, c_, R_ = lemmas.A, lemmas.c, lemmas.R
    d2, d3 = MatrixSymbol(r"\Delta W2_k", F, D), MatrixSymbol(r"\Delta W3_k", D, F)
    tuned = RawLayer(Rn.W1, add(Rn.W2, d2), Rn.b2, add(Rn.W3, d3), Rn.b3)
    hyp = add(add(mul(A_, X0), c_), R_)
    e_k = add(mul(Rn.W2, add(c_, R_)), Rn.b2)
    form = add(add(mul(Rn.W1, A_, X0), add(mul(Rn.W1, c_), Rn.b3)), mul(Rn.W1, R_),
               mul(add(Rn.W3, d3), Sigma(add(mul(add(mul(Rn.W2, A_), mul(d2, A_)), X0), add(e_k, mul(d2, add(c_, R_)))))))
    step = decide.check_identity(lemmas.layer(tuned, hyp), form)
    induction = REGISTRY.verdict("T7.exact[eq30,B-both,W1=id+mha]")
    out = decide.combine_all([step, induction], ["tuned layer k (symbolic index)", "T7.exact (induction)"])
    out.method = ("the fine-tuned network unrolls by T7's induction; the tuned layer's step, for a symbolic layer index and "
                  "symbolic D, F, gives ΔW_{k,3} = ΔW3_k, ΔW_{k,2} = ΔW2_k A_{k-1}, b̃'_{k,2} = b'_{k,2} + ΔW2_k(c + R); " + out.method)
    return out


def _a4_corrected_instances():
    insts = [i for t in lora.TARGETS for i in _instances(t, lambda s: lora.corrected_eq18(s.base, s.ft))]
    return decide.check_matches_reference(insts, what="the corrected Eq. 18 against the fine-tuned network")


def eq18_plus_operands(reading: dict):
    r"""The two operands of Eq. 18's ``+`` before σ (``op=plus``), typed from the definitions: the
    combined parameters act on the flattened tokens, so :math:`\mathbf W'_{j,3}+\Delta\mathbf W`
    maps the hidden space (N, F) to the stream (N, M) and :math:`\sigma(\cdot)` is a hidden vector;
    the names follow the reading (ΔW's index, b'_{j,2} kept or recomputed)."""
    N, M, F = dims("N M F")
    m = "j" if reading["idx"] == "j" else "j1"
    stream, hidden = (N, M), (N, F)
    U, dU = BlockSymbol("W3'_j", stream, hidden), BlockSymbol(f"dW3_{m}", stream, hidden)
    V, dV = BlockSymbol("W2'_j", hidden, stream), BlockSymbol(f"dW2_{m}", hidden, stream)
    x0 = BlockSymbol("x'_0", stream, ())
    e = BlockSymbol("b2'_j" if reading["b2"] == "kept" else "b2'_j_ft", hidden, ())
    return add(U, dU), Sigma(add(mul(add(V, dV), x0), e))


_A4_INSTANCE = re.compile(r"L=(\d+), LoRA on (W3|W2) of layer (\d+)")


def _record_reference(verdict, statement: str, **what):
    """For the certify tier (``certify/reference.py``): a refuted A4 check's exact counterexample — the
    instance (depth, tuned matrix and layer), every leaf's value and the two sides' values — as a
    ``reference_refutation`` certificate; nothing when nobody listens or the counterexample is not an
    exact difference of values (an ill-typed reading, a float64 instance). The verdict is returned as is."""
    cex = verdict.counterexample
    if verdict.status is not Status.REFUTED or cex is None or cex.lhs is None or not certificates.listened():
        return verdict
    found = _A4_INSTANCE.match(cex.reason or "")
    if found is None or not str(cex.exact_recheck or "").startswith("exact: entry"):
        return verdict
    L, t, k = int(found.group(1)), found.group(2), int(found.group(3))
    certificates.record("reference_refutation", statement=statement, target=t, L=L, k=k, sizes=dict(lora.EXACT_SIZES),
                        values=dict(lora.scenario(L, k, t, True).values), lhs=cex.lhs, rhs=cex.rhs, **what)
    return verdict


def _a4(target: str, reading: dict):
    corrected = (_EQ18_CORRECTED, lambda: REGISTRY.verdict("A4.corr[symbolic]"))
    if reading["op"] == "plus" and certificates.listened():
        # the operands' types, for the certify tier (which checks them against the shapes the check meets)
        left, right = eq18_plus_operands(reading)
        certificates.record("operand_types", operation="Eq. 18 (op=plus)", need="a sum needs its operands of one shape",
                            left=left, right=right,
                            text=(f"(W'_{{j,3}} + ΔW_{{{'j' if reading['idx'] == 'j' else 'j+1'},3}}) + "
                                  f"σ((W'_{{j,2}} + ΔW_{{{'j' if reading['idx'] == 'j' else 'j+1'},2}}) x'_0 + "
                                  f"{'b' if reading['b2'] == 'kept' else 'b̃'}'_{{j,2}})"))
    return _record_reference(
        decide.check_matches_reference(_instances(target, lambda s: lora.eq18(s.base, s.ft, reading, s.raw)),
                                       what=f"Eq. 18 ({', '.join(lora.reading_tags(reading))})", corrected=corrected,
                                       stop_at_exact_failure=False),
        "eq18", reading=dict(reading))


def _a4_reference():
    insts = []
    for t in lora.TARGETS:
        for L, k in lora.SCENARIOS:
            for exact in (False, True):
                insts.append(decide.Instance(
                    f"L={L}, {t} of layer {k}, {'exact' if exact else 'float64'}",
                    {"L": L, "k": k}, exact,
                    lambda L=L, k=k, exact=exact, t=t: (lora.scenario(L, k, t, exact).ft.evaluate(),
                                                        lora.scenario(L, k, t, exact).reference)))
    return decide.check_matches_reference(insts, what="the fine-tuned network's unrolled form (to_duat / exact recursion) "
                                              "against its forward pass")


A4.check("ref", None, r"\text{to\_duat}(\text{fine-tuned blocks})(\mathbf x_0)=\text{forward}(\text{fine-tuned blocks})(\mathbf x_0)",
         _a4_reference, role="step", note="the reference the readings are compared with")
for _target in lora.TARGETS:
    for _reading in lora.readings():
        A4.check(_target, lora.reading_tags(_reading),
                 r"\text{Eq. 18 under this reading}=\mathbf x'_L(\text{fine-tuned}),\ L=2,3,\ \text{LoRA on }"
                 + {"W3": r"W3_k", "W2": r"W2_k", "attn": r"W_{V}\text{ of layer }k"}[_target],
                 partial(_a4, _target, _reading),
                 **({"role": "extension"} if _target == "attn" else {}),
                 note="LoRA on an attention projection: outside Eq. 18's statement (FFN only)" if _target == "attn" else "")
A4.check("corr", ("symbolic",), _EQ18_CORRECTED + r"\quad\forall L", _a4_corrected_symbolic, polarity=None, role="extension")
A4.check("corr", ("instances",), _EQ18_CORRECTED + r"\quad(L=2,3,\ \text{every target and layer})",
         _a4_corrected_instances, polarity=None, role="extension")


def _outside(L, k, t, scope):
    """(name, changed and outside the tuned index) for the combined weights (biases are recomputed by T9)."""
    import re

    s = lora.scenario(L, k, t, True)
    out = []
    for name, ch in lora.changed_parameters(s.base, s.ft).items():
        if name.startswith("b"):
            continue
        idx = int(re.search(r"_\{(\d+),", name).group(1))
        out.append((name, bool(ch) and (idx != k if scope == "k" else idx < k)))
    return out


def _a4_concl(scope: str):
    """"LoRA is a layer-wise adjustment": tuning layer k changes no combined weight of another
    index (``k``), or none of an index below k (``≥k``); exact instances. The formula is the
    indicator vector of such changes, the reference the zero vector."""
    insts = []
    for t in ("W3", "W2"):
        for L, k in lora.SCENARIOS:
            insts.append(decide.Instance(
                f"L={L}, LoRA on {t} of layer {k}", {"L": L, "k": k}, True,
                lambda L=L, k=k, t=t: (np.array([int(b) for _, b in _outside(L, k, t, scope)], dtype=object),
                                       np.zeros(len(_outside(L, k, t, scope)), dtype=int).astype(object)),
                values=lambda L=L, k=k, t=t: {"combined weights": [n for n, _ in _outside(L, k, t, scope)],
                                              "changed outside the tuned index": [n for n, b in _outside(L, k, t, scope) if b]}))
    return _record_reference(
        decide.check_matches_reference(insts, what="indicator of a changed combined weight outside the tuned index (exact)"),
        "layerwise", scope=scope)


A4.check("concl", ("layer-wise=k",), r"\{j:\ \mathbf W'_{j,\cdot}\ \text{changed by LoRA on layer }k\}=\{k\}",
         partial(_a4_concl, "k"), note="exact Transformer, W3/W2 tuned; biases b'_{j,2} excluded (recomputed by T9)")
A4.check("concl", ("layer-wise=≥k",), r"\text{LoRA on layer }k\text{ changes no DUAT weight of index }<k",
         partial(_a4_concl, "≥k"))
A4.check("concl.task", None, r"\text{“task-specific”}",
         lambda: decide.informal("which adjustment serves which task is an empirical statement about training "
                                 "data, not an identity"), polarity=None)

# --------------------------------------------------------------------------------------------
# A5 — ICL: every output entry sees the whole context
# --------------------------------------------------------------------------------------------

A5 = REGISTRY.claim(
    "A5", "ICL: every output entry sees the whole context",
    where="UAT §4.2; AAAI §4.2, App. D; DUAT §4.1, §4.2, App. C (Fig. 4)",
    statement=r"\forall n,n':\ \big[(\mathbf W'_{HVO})^{T}\big]_{(n,\cdot),(n',\cdot)}\neq0\quad(n'<n\text{ and }n'>n)",
    group=GROUP,
    remarks=r"Token block $(n,n')$ of $(\mathbf W'_{HVO})^T=\sum_iH_i\otimes B_i^T$ (row) is $\sum_i(H_i)_{nn'}B_i^T$; it is "
    r"nonzero for generic weights exactly when the scalar $u^T(\text{block})v$ is, for generic $u,v$, so the token-level "
    r"matrix $P=(I_N\otimes u^T)(\mathbf W'_{HVO})^T(I_N\otimes v)$ has the support of the blocks. Its generic density "
    r"comes from the index-level normal form (symbolic $N,h,d,d_v$), cross-checked by exact counts.",
)


def _token_matrix(proj, mask):
    s = mha_symbols(proj, mask)
    if proj == "split":
        u, v = BlockSymbol("u", (s.h, s.d), ()), BlockSymbol("v", (s.h, s.d), ())
    else:
        u, v = MatrixSymbol("u", s.M, 1), MatrixSymbol("v", s.M, 1)
    return mul(kron(Identity(s.N), T(u)), s.W_HVO("row"), kron(Identity(s.N), v))


_A5_GRID = {"split": [{"N": n, "h": h, "d": d, "d_v": dv} for n, h, d, dv in [(2, 2, 1, 1), (3, 2, 2, 1), (4, 2, 1, 2), (3, 1, 2, 2)]],
            "std": [{"N": n, "h": h, "M": m, "d_v": dv} for n, h, m, dv in [(2, 2, 2, 1), (3, 2, 3, 1), (4, 1, 2, 2), (3, 2, 2, 2)]]}


def _a5(proj, mask):
    P = _token_matrix(proj, mask)
    dims_ = decide.dimension_symbols(P)
    grid = [{s: g[s.name] for s in dims_} for g in _A5_GRID[proj]]
    count = lambda sizes: (lambda sup: Fraction(int(sup.sum()), sup.size))(
        generic_support(P, {k.name: v for k, v in sizes.items()}))
    v = named.check_quantity(r"\text{fraction of nonzero token blocks of }(\mathbf W'_{HVO})^{T}", sp.Integer(1), generic_density(P), count, dims_, grid=grid,
                              density_of=P,
                              how="generic zero pattern of the token-level matrix P from its index-level normal form "
                                  "(the causal mask enters as the constraint [n ≥ n']); exact counts of materialised "
                                  "instances (random nonzero integers)")
    sizes4 = {**{s.name: 2 for s in dims_}, "N": 4}
    pattern = generic_support(P, sizes4).astype(int)
    v.quantities["token blocks (n, n') nonzero at N=4 (rows n, columns n')"] = pattern.tolist()
    v.quantities["blocks n' > n nonzero"] = f"{int(np.triu(pattern, 1).sum())} of 6 at N=4"
    v.quantities["blocks n' < n nonzero"] = f"{int(np.tril(pattern, -1).sum())} of 6 at N=4"
    return v


for _mask in MASKS:
    for _proj in PROJECTIONS:
        A5.check("dep", (_mask, _proj), r"\#\{(n,n'):\text{block}_{nn'}((\mathbf W'_{HVO})^T)\ne0\}/N^2=1",
                 partial(_a5, _proj, _mask),
                 note="H_i held fixed (H5); generic weights" + ("; the papers' “before and after it”: the blocks n' > n"
                                                                 if _mask == "causal" else ""))
A5.check("icl", None, r"\text{“this is why ICL exists”}",
         lambda: decide.informal("a causal explanation of an empirical capability; A5.dep settles the checkable part "
                                 "(which tokens each output can depend on), nothing in it implies or excludes ICL — and "
                                 "in decoder LLMs (causal) the output at n does not depend on later tokens at all."),
         polarity=None)

# --------------------------------------------------------------------------------------------
# A6 — generalisation / multi-function claims
# --------------------------------------------------------------------------------------------

A6 = REGISTRY.claim(
    "A6", "Generalisation / multi-function claims", where="UAT §3.5, §4.1; AAAI §4.1; DUAT §2.3, §4.1, §6",
    statement=r"\text{a UAT with fixed parameters fits one function, a DUAT many; MHA adjusts the weights, the residual path the biases}",
    group=GROUP,
)
# The main sentence ("a UAT fits one function, a DUAT many") is prose: it carries A6's bottom line as
# informal; the mechanism the papers give for it ("MHA allows for the dynamic adjustment of the weight
# parameters …, while the residual mechanism supports the dynamic approximation of bias terms", DUAT §4.1)
# is checked as its steps. Which parameters depend on the input is T10's list, not A6's sentence.
A6.check("weights", None, r"\exists X_1,X_2:\ \mathbf W'_{HVO}(X_1)\ne\mathbf W'_{HVO}(X_2)\ \text{(H9.dep)}",
         lambda: REGISTRY.verdict("H9.dep"), role="step",
         note="“MHA adjusts the weights”: the same statement as H9.dep")
A6.check("biases", None, r"\partial\mathbf b'_{2,2}/\partial\mathbf x'_0\neq0\ \text{(L2.9)}",
         lambda: REGISTRY.verdict("L2.9[b'_{2,2}]"), role="step",
         note="“the residual path adjusts the biases”: with constant raw parameters only the biases b'_{j,2}, j ≥ 2, "
              "of the unrolled form depend on the input — the same statement as L2.9[b'_{2,2}]")
A6.check("many", None, r"\text{“a UAT fits one function, a DUAT many; hence many tasks”}",
         lambda: decide.informal("“fits many functions/tasks” has no formal content beyond the input dependence of the "
                                 "parameters (A6.weights, A6.biases): any fixed network is one function of its input, "
                                 "whatever its parametrisation; whether it serves many tasks is empirical."),
         polarity=None)


# A4 in Eq. 20 networks: with W1 independent of the input (no attention, or N = 1), which readings reproduce?
def _a4_eq20(reading: dict):
    insts = []
    for target in ("W3", "W2"):
        for L, k in lora.SCENARIOS:
            insts.append(decide.Instance(
                f"Eq. 20 network, L={L}, LoRA on {target} of layer {k}", {"L": L, "k": k, "D": 3, "F": 2}, True,
                lambda L=L, k=k, t=target: (lambda s: (lora.eq18(s.base, s.ft, reading, s.raw), s.reference))(
                    lora.eq20_scenario(L, k, t)),
                values=lambda L=L, k=k, t=target: lora.eq20_scenario(L, k, t).values))
    return decide.check_matches_reference(insts, what=f"Eq. 18 ({', '.join(lora.reading_tags(reading))}) in Eq. 20 networks",
                                  stop_at_exact_failure=False)


def a4_eq20_statement(mutant: str | None = None):
    """``(Eq. 18 under Δ=induced, b2=recomputed, idx=j, op=times; the fine-tuned network's T7 form)`` for a
    symbolic number n of layers and symbolic D, F, with LoRA on W2 or W3 (so, by A4_eq20_fixed, A_L = A^ft_L
    and c_L = c^ft_L): ``Ax'_0 + c + Σ_j (U_j + ΔU_j)σ((V_j + ΔV_j)x'_0 + e^ft_j)``, ``ΔU_j = U^ft_j − U_j``,
    ``ΔV_j = V^ft_j − V_j``, against ``Ax'_0 + c + Σ_j U^ft_jσ(V^ft_jx'_0 + e^ft_j)``. Mutants: ``b2=kept`` (the
    base network's e_j), ``idx=j+1`` (ΔU_{j+1} beside U_j; the family's index shifted by one)."""
    from symuat.expr.heads import HeadMatrix, HeadSum

    D, F, n = dims("D F n")
    j = sp.Symbol("j", integer=True)
    x0, A, c = MatrixSymbol("x_0", D, 1), MatrixSymbol("A_L", D, D), MatrixSymbol("c_L", D, 1)
    fam = lambda name, r, cc: HeadMatrix(name, j, n, r, cc)
    U, Uf, V, Vf = fam("U", D, F), fam("U^ft", D, F), fam("V", F, D), fam("V^ft", F, D)
    e = fam("e" if mutant == "b2=kept" else "e^ft", F, 1)
    # idx=j+1: the next layer's members U_{j+1}, U^ft_{j+1} (other matrices than U_j, U^ft_j)
    dU = (add(fam("U^ft_+", D, F), mul(-1, fam("U_+", D, F))) if mutant == "idx=j+1" else add(Uf, mul(-1, U)))
    dV = add(Vf, mul(-1, V))
    lhs = add(mul(A, x0), c, HeadSum(j, n, mul(add(U, dU), Sigma(add(mul(add(V, dV), x0), e)))))
    rhs = add(mul(A, x0), c, HeadSum(j, n, mul(Uf, Sigma(add(mul(Vf, x0), fam("e^ft", F, 1))))))
    return lhs, rhs


def _a4_eq20_symbolic():
    """Eq. 18 (Δ=induced, b2=recomputed, idx=j, op=times) is the fine-tuned network's x'_L in every Eq. 20
    network with LoRA on W2 or W3, for every depth: T7's form holds for any parameters
    (L2.main.exact[induction]); A_L = W1_LA_{L-1}, c_L = W1_Lc_{L-1} + b3_L involve neither W2 nor W3 (so the
    fine-tuned network has the base's A_L, c_L: A_0 = I, c_0 = 0 and induction); and the formula is the
    fine-tuned form (index calculus, a symbolic number of layers)."""
    D, F = dims("D F")
    W1, W2, W3 = MatrixSymbol("W1_L", D, D), MatrixSymbol("W2_L", F, D), MatrixSymbol("W3_L", D, F)
    Ap, cp, b3 = MatrixSymbol("A_{L-1}", D, D), MatrixSymbol("c_{L-1}", D, 1), MatrixSymbol("b3_L", D, 1)
    fixed = [decide.check_dependence(expr, name, depends=False)
             for expr in (mul(W1, Ap), add(mul(W1, cp), b3)) for name in (W2.name, W3.name)]
    step = decide.check_identity(*a4_eq20_statement())
    out = decide.combine_all([REGISTRY.verdict("L2.main.exact[induction]"), *fixed, step],
                             ["L2.main.exact[induction]", "A_L ⊥ W2", "A_L ⊥ W3", "c_L ⊥ W2", "c_L ⊥ W3",
                              "Eq. 18 = the fine-tuned form"])
    if out.status is Status.PROVED:
        out.method = ("for every depth and symbolic D, F: T7's form of the fine-tuned network "
                      "(L2.main.exact[induction]); its A_L, c_L are the base's (their recursion has no W2, W3); and "
                      "Eq. 18 under this reading is that form (index calculus): " + out.method)
    return out


_A4_HOLDS = {"Δ": "induced", "b2": "recomputed", "idx": "j", "op": "times"}
for _reading in lora.readings():
    if _reading["op"] == "times":
        A4.check("eq20", lora.reading_tags(_reading),
                 r"\text{Eq. 18 under this reading}=\mathbf x'_L\ \text{for Eq. 20 networks (}W1\text{ independent of the input)}",
                 _a4_eq20_symbolic if _reading == _A4_HOLDS else partial(_a4_eq20, _reading),
                 polarity=None, role="extension",
                 note=("for every depth and symbolic D, F (σ opaque): the reading that holds in Eq. 20 networks, with "
                       "LoRA on W2 or W3" if _reading == _A4_HOLDS else
                       "exact integer residual networks, σ = softsign, D = 3, F = 2: is the attention's input dependence "
                       "what breaks Eq. 18?"))
