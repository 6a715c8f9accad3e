r"""Claims H0–H9: multi-head attention in matrix-vector form.

The attention patterns :math:`H_i` are independent symbolic matrices in the symbolic proofs
(``H_i`` held fixed, as the papers do from UAT §3.4 on); the identities are then linear in
:math:`X` and must hold for every :math:`H`. Readings: ``split``/``std`` (H0), ``bidir``/``causal``,
``row``/``col``, and the ``dia``/``duat`` sense of a primed matrix.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import sympy as sp
from sympy import Identity, MatrixSymbol

from symuat.algebra import T, add, dims, kron, mul
from symuat.attention import (
    HEAD,
    MASKS,
    PROJECTIONS,
    MHAOperator,
    attention_patterns,
    mha_forward,
    mha_symbols,
)
from symuat.diamond import MM_DEFINITIONS, PARSES, Diamond, DiamondChain, resolve
from symuat.heads import BlockSymbol, HeadMatrix, HeadSum, Selector
from symuat.kernel import decide
from symuat.kernel.decide import Statement
from symuat.kernel.registry import REGISTRY
from symuat.kernel.structure import generic_density, generic_support
from symuat.linear import lift_left, lift_right
from symuat.printing import latex
from symuat.vec import Vec

ORDERS = ("col", "row")
_SMALL = [{"N": n, "h": h, "d": d, "d_v": dv} for n, h, d, dv in
          [(2, 2, 1, 1), (3, 2, 2, 1), (2, 3, 1, 2), (3, 2, 2, 2), (4, 2, 1, 1), (1, 2, 2, 2)]]


def _count_density(expr, sizes: dict):
    """Exact nonzero fraction of ``expr`` materialised with generic values."""
    from fractions import Fraction

    support = generic_support(expr, sizes)
    return Fraction(int(support.sum()), support.size)


def _density_check(expr, mask, claimed=None, name="density"):
    derived = generic_density(expr)
    dims_ = decide.dimension_symbols(expr)
    grid = []
    for sizes in _SMALL:
        env = {s: sizes[s.name] for s in dims_ if s.name in sizes}
        if len(env) == len(dims_):
            grid.append(env)
    if not grid:  # std has M instead of d
        grid = [{s: v for s, v in zip(dims_, combo)} for combo in [(2, 2, 1, 2), (3, 2, 2, 1), (2, 3, 2, 2), (4, 1, 1, 3)]]
    count = lambda sizes: _count_density(expr, {k.name: v for k, v in sizes.items()})
    return decide.check_quantity(
        name, derived if claimed is None else claimed, derived, count, dims_, grid=grid,
        how="generic zero pattern of the construction's index-level entry; cross-checked by "
            "counting nonzeros of materialised instances (random nonzero integers, two draws)",
    )


# --------------------------------------------------------------------------------------------
# H0 — MHA as the papers define it
# --------------------------------------------------------------------------------------------

H0 = REGISTRY.claim(
    "H0", "MHA as the papers define it",
    where="UAT §3.4 Eq. 6–7; AAAI §3.4 Eq. 7–8; DUAT §3.2 Eq. 7–8; DUAT App. C Eq. 35",
    statement=r"\mathring{\mathbf H}=\operatorname{Concat}(\hat{\mathbf H}_1,\dots,\hat{\mathbf H}_h)\mathbf W_O,\quad "
    r"\hat{\mathbf H}_i=\operatorname{softmax}\Big(\frac{\mathbf Q_i\mathbf K_i^{T}}{\sqrt M}\Big)\mathbf V_i=\mathbf H_i[\mathbf x_i\mathbf W_{Vi}]",
    group="attention",
    remarks=r"symuat's formalisation: $x_i=XS_i$, $S_i=e_i\otimes I_d$ (`split`) or $S_i=I_M$ (`std`); "
    r"$\hat H=\sum_i\hat H_iE_i^\top$, $E_i=e_i\otimes I_{d_v}$; $\mathring H=\hat HW_O$.",
)
for _proj in PROJECTIONS:
    _s = mha_symbols(_proj)
    H0.check(None, (_proj,), r"\mathring H=" + latex(_s.mha()),
             partial(decide.define, _s.mha(), note="H_i held fixed; softmax in the NumPy forward"))

# --------------------------------------------------------------------------------------------
# H1 — one head
# --------------------------------------------------------------------------------------------

H1 = REGISTRY.claim(
    "H1", "One head",
    where="UAT App. B.2 (Fig. 1.c–d); AAAI App. B (Fig. 1.d); DUAT App. A (Fig. 1.d)",
    statement=r"\hat{\mathbf H}'_i=T_D(\mathbf H_i\mathbf x_i\mathbf W_{Vi}),\quad (\mathbf W'_{HVi})^{T}\mathbf x'_i=\hat{\mathbf H}'_i",
    group="attention",
    remarks=r"$x_i\in\mathbb R^{N\times d}$, $H_i\in\mathbb R^{N\times N}$, $W_{Vi}\in\mathbb R^{d\times d_v}$; "
    r"$H'_i$, $W'_{Vi}$: lifts of left multiplication by $H_i$ and right multiplication by $W_{Vi}$, "
    r"in the papers' transposed (`dia`) sense. `conf`: $d\ne d_v$ allowed; `square`: $d=d_v$.",
)


def _head_objects(order, shape="conf"):
    N, d, dv = dims("N d d_v")
    if shape == "square":
        dv = d
    x = MatrixSymbol("x_i", N, d)
    H = MatrixSymbol("H_i", N, N)
    W = MatrixSymbol("W_Vi", d, dv)
    Hp = lift_left(H, dv, order)  # duat sense, acts on N×d_v
    Wp = lift_right(W, N, order)  # duat sense, N×d → N×d_v
    return dict(x=x, H=H, W=W, xp=Vec(x, order), target=Vec(mul(H, x, W), order),
                Hd=T(Hp), Wd=T(Wp), HVd=T(mul(Hp, Wp)), Hp=Hp, Wp=Wp)


for _o in ORDERS:
    _h = _head_objects(_o)
    H1.check("exist", (_o,), r"(\mathbf W'_{HVi})^{T}\mathbf x'_i=\hat{\mathbf H}'_i",
             partial(decide.check_identity, _h["target"], mul(T(_h["HVd"]), _h["xp"]),
                     construction=r"\mathbf W'_{HVi}=" + latex(_h["HVd"])))
    for _shape in ("conf", "square"):
        _h = _head_objects(_o, _shape)
        H1.check("d3", (_o, _shape), r"[\mathbf H'_i\mathbf W'_{Vi}]^{T}\mathbf x'_i=\hat{\mathbf H}'_i",
                 partial(decide.check_identity, mul(T(mul(_h["Hd"], _h["Wd"])), _h["xp"]), _h["target"],
                         corrected=Statement(mul(T(mul(_h["Wd"], _h["Hd"])), _h["xp"]), _h["target"])))
        H1.check("d4", (_o, _shape), r"(\mathbf H'_i)^{T}[(\mathbf W'_{Vi})^{T}\mathbf x'_i]=\hat{\mathbf H}'_i",
                 partial(decide.check_identity, mul(T(_h["Hd"]), mul(T(_h["Wd"]), _h["xp"])), _h["target"]))
        H1.check("d3to4", ("lifts", _o, _shape),
                 r"[\mathbf H'_i\mathbf W'_{Vi}]^{T}\mathbf x'_i=(\mathbf H'_i)^{T}[(\mathbf W'_{Vi})^{T}\mathbf x'_i]",
                 partial(decide.check_identity, mul(T(mul(_h["Hd"], _h["Wd"])), _h["xp"]),
                         mul(T(_h["Hd"]), mul(T(_h["Wd"]), _h["xp"]))))
    _h = _head_objects(_o)
    H1.check("d5", (_o,), r"(\mathbf W'_{HVi})^{T}\mathbf x'_i=(\hat{\mathbf H}'_i)^{T}",
             partial(decide.check_identity, mul(T(_h["HVd"]), _h["xp"]), T(_h["target"]),
                     corrected=Statement(mul(T(_h["HVd"]), _h["xp"]), _h["target"])))

_n = dims("n")
_An, _Bn, _vn = MatrixSymbol("A", _n, _n), MatrixSymbol("B", _n, _n), MatrixSymbol("x", _n, 1)
H1.check("d3to4", ("arbitrary",), r"[\mathbf A\mathbf B]^{T}\mathbf x=\mathbf A^{T}[\mathbf B^{T}\mathbf x]",
         partial(decide.check_identity, mul(T(mul(_An, _Bn)), _vn), mul(T(_An), mul(T(_Bn), _vn)),
                 corrected=Statement(mul(T(mul(_An, _Bn)), _vn), mul(T(_Bn), mul(T(_An), _vn)))),
         note="read as an identity for arbitrary conformable (here square) matrices")


def _h1_chain(order, mm, parse, variant):
    h = _head_objects(order)
    if variant == "aaai":
        members = [Diamond(h["Hd"], Diamond(h["xp"], h["Wd"])),
                   DiamondChain(T(h["Wd"]), h["Hd"], h["xp"]),
                   Diamond(h["HVd"], h["xp"]), h["target"]]
    else:  # uat: the hatted H'_i read as the lift of H_i
        members = [Diamond(h["Hd"], Diamond(h["xp"], h["Wd"])),
                   mul(mul(T(h["Wd"]), h["Hd"]), h["xp"]), h["target"]]
    chain = [resolve(m, mm, parse) for m in members]
    return decide.check_chain(chain, corrected=Statement(members[0], h["target"]))


for _o in ORDERS:
    for _mm in MM_DEFINITIONS:
        for _p in PARSES:
            H1.check("aaai", (_mm, _p, _o),
                     r"\mathbf H'_i\diamond[\mathbf x'_i\diamond\mathbf W'_{Vi}]=(\mathbf W'_{Vi})^{T}\diamond\mathbf H'_i\diamond\mathbf x'_i"
                     r"=\mathbf W'_{HVi}\diamond\mathbf x'_i=\hat{\mathbf H}'_i",
                     partial(_h1_chain, _o, _mm, _p, "aaai"))
    H1.check("uat", (_o,),
             r"\hat{\mathbf H}'_i\diamond[\mathbf x'_i\diamond\mathbf W'_{Vi}]=[\mathbf W'^{T}_{Vi}\hat{\mathbf H}'_i]\mathbf x'_i=\hat{\mathbf H}'_i",
             partial(_h1_chain, _o, None, None, "uat"),
             note="the hatted H'_i of UAT App. B.2 read as the lift of H_i")

for _mask in MASKS:
    _one = mha_symbols("split", _mask)
    # one head's W'_HVi = H_i ⊗ W_Viᵀ (row, duat sense), as a head sum over a single head
    H1.check("dense", (_mask,), r"\operatorname{density}(\mathbf W'_{HVi})=1",
             partial(_density_check, HeadSum(HEAD, 1, kron(_one.H, T(_one.WV))), _mask, sp.Integer(1)),
             note="one head, generic W_Vi; the claim “dense” read as density 1")


# --------------------------------------------------------------------------------------------
# H2 — all heads
# --------------------------------------------------------------------------------------------

H2 = REGISTRY.claim(
    "H2", "All heads: W'_HV (UAT's W'_WH)",
    where="UAT §3.4 (Fig. 4), App. B.2; AAAI §3.4 (Fig. 4), App. B; DUAT §3.2 (Fig. 5), App. A",
    statement=r"\mathbf W'_{WH}\diamond\mathbf x'=\hat{\mathbf H}'\ (\text{UAT}),\quad(\mathbf W'_{HV})^{T}\mathbf x'=(\hat{\mathbf H}')^{T}\ (\text{DUAT})",
    group="attention",
)
for _o in ORDERS:
    for _proj in PROJECTIONS:
        _s = mha_symbols(_proj)
        H2.check("exist", (_o, _proj), r"T_D(\hat{\mathbf H})=W'_{HV}\,T_D(\mathbf x)\ (\texttt{duat}\text{ sense})",
                 partial(decide.check_identity, Vec(_s.concat(), _o), mul(_s.W_HV(_o), Vec(_s.X, _o)),
                         construction=r"W'_{HV}=" + latex(_s.W_HV(_o))))

_s = mha_symbols("split")
_xp, _Hhat = Vec(_s.X, "row"), Vec(_s.concat(), "row")
_FORMS = {
    "uat-text": (lambda W: Diamond(W, _xp), _Hhat, r"\mathbf W'_{WH}\diamond\mathbf x'=\hat{\mathbf H}'"),
    "uat-caption": (lambda W: mul(W, _xp), _Hhat, r"\mathbf W'_{WH}\mathbf x'=\hat{\mathbf H}'"),
    "aaai": (lambda W: Diamond(W, _xp), _Hhat, r"\mathbf W'_{HV}\diamond\mathbf x'=\hat{\mathbf H}'"),
    "duat-5c": (lambda W: mul(T(W), _xp), T(_Hhat), r"(\mathbf W'_{HV})^{T}\mathbf x'=(\hat{\mathbf H}')^{T}"),
    "duat-5caption": (lambda W: mul(T(W), _xp), _Hhat, r"(\mathbf W'_{HV})^{T}\mathbf x'=\hat{\mathbf H}'"),
    "duat-1e": (lambda W: mul(T(W), _xp), T(_s.concat()), r"(\mathbf W'_{HV})^{T}\mathbf x'=(\hat{\mathbf H})^{T}"),
    "duat-1ecaption": (lambda W: mul(W, _xp), _Hhat, r"\mathbf W'_{HV}\mathbf x'=\hat{\mathbf H}'"),
}
for _form, (_lhs, _rhs, _tex) in _FORMS.items():
    for _sense in ("dia", "duat"):
        _W = T(_s.W_HV("row")) if _sense == "dia" else _s.W_HV("row")
        H2.check("forms", (_form, _sense), _tex, partial(decide.check_identity, _lhs(_W), _rhs),
                 note=f"W'_HV in the {_sense} sense; split, row flattening")
for _mask in MASKS:
    H2.check("density", (_mask,), r"\operatorname{density}(W'_{HV})",
             partial(_density_check, mha_symbols("split", _mask).W_HV("row"), _mask),
             note="split; generic parameters")

# --------------------------------------------------------------------------------------------
# H3 — output projection
# --------------------------------------------------------------------------------------------

H3 = REGISTRY.claim(
    "H3", "Output projection",
    where="UAT §3.4 (Fig. 5); AAAI §3.4 (Fig. 5); DUAT §3.2 (Fig. 6)",
    statement=r"\mathbf H'\diamond\mathbf W'_O=\mathring{\mathbf H}'\ (\text{UAT}),\quad(\mathbf W'_O)^{T}\hat{\mathbf H}'=\mathring{\mathbf H}'\ (\text{DUAT})",
    group="attention",
)
_Hh = BlockSymbol("Hhat", (_s.N,), (_s.h, _s.dv))
for _o in ORDERS:
    H3.check("exist", (_o,), r"(\mathbf W'_O)^{T}\hat{\mathbf H}'=\mathring{\mathbf H}'",
             partial(decide.check_identity, Vec(mul(_Hh, _s.WO), _o), mul(_s.W_O(_o), Vec(_Hh, _o)),
                     construction=r"(\mathbf W'_O)^{T}=" + latex(_s.W_O(_o))))
H3.check("uat", None, r"\hat{\mathbf H}'\diamond\mathbf W'_O=\mathring{\mathbf H}'",
         partial(decide.check_identity, Diamond(Vec(_Hh, "row"), T(_s.W_O("row"))), Vec(mul(_Hh, _s.WO), "row")),
         note="vector ⋄ matrix as D4 defines it (P2[mv]); W'_O in the dia sense; row flattening")
H3.check("density", None, r"\operatorname{density}(\mathbf W'_O)",
         partial(_density_check, _s.W_O("row"), "bidir"))

# --------------------------------------------------------------------------------------------
# H4 — composition of the factors, checked against H5
# --------------------------------------------------------------------------------------------

H4 = REGISTRY.claim(
    "H4", "Composition of the MHA factors",
    where="DUAT §3.2; UAT §3.4; AAAI §3.4",
    statement=r"\mathbf W'_{HVO}=\mathbf W'_O\mathbf W'_{HV}\ (\text{DUAT}),\quad \mathbf W^{T}_{WH}\diamond\mathbf W'_O\ (\text{UAT}),\quad "
    r"\mathbf W'^{T}_{HV}\diamond\mathbf W'_O\ (\text{AAAI})",
    group="attention",
    remarks="Each reading of the formula is checked by whether the W'_HVO it defines satisfies H5.",
)


def _h4(which, reading, shape="conf"):
    s = mha_symbols("split")
    if shape == "square":  # d_v = d, so that every product below is at least defined
        s.WV = HeadMatrix("W_V", HEAD, s.h, s.d, s.d)
        s.E = kron(Selector(HEAD, s.h), Identity(s.d))
        s.WO = BlockSymbol("W_O", (s.h, s.d), (s.h, s.d))
        s.dv = s.d
    xp, target = Vec(s.X, "row"), Vec(s.mha(), "row")
    HVd, Od = T(s.W_HV("row")), T(s.W_O("row"))  # the matrices with (W')ᵀ x' = output
    if which == "duat":
        if reading == "transposed":
            W = mul(Od, HVd)
            return decide.check_identity(mul(T(W), xp), target,
                                         corrected=Statement(mul(T(mul(HVd, Od)), xp), target,
                                                             r"\mathbf W'_{HVO}=\mathbf W'_{HV}\mathbf W'_O\ (\text{transposed sense})"))
        W = mul(s.W_O("row"), s.W_HV("row"))
        return decide.check_identity(mul(W, xp), target)
    W = Diamond(T(HVd), Od, reading)
    return decide.check_identity(mul(T(W), xp), target,
                                 corrected=Statement(mul(T(Diamond(T(HVd), Od, "C-col")), xp), target,
                                                     r"\mathbf W'_{HVO}=\mathbf W'^{T}_{HV}\diamond\mathbf W'_O\ (\texttt{C-col})"))


for _shape in ("conf", "square"):
    H4.check("duat", ("transposed", _shape), r"\mathbf W'_{HVO}=\mathbf W'_O\mathbf W'_{HV};\ (\mathbf W'_{HVO})^{T}\mathbf x'=\mathring{\mathbf H}'",
             partial(_h4, "duat", "transposed", _shape),
             note="primes in the transposed sense of H2/H3/H5; conf: d_v ≠ d allowed, square: d_v = d")
H4.check("duat", ("duat",), r"\mathbf W'_{HVO}=\mathbf W'_O\mathbf W'_{HV};\ \mathbf W'_{HVO}\mathbf x'=\mathring{\mathbf H}'",
         partial(_h4, "duat", "duat"), note="“W' stands for (W')ᵀ”")
for _which in ("uat", "aaai"):
    for _mm in MM_DEFINITIONS:
        H4.check(_which, (_mm,), (r"\mathbf W'_{HVO}=\mathbf W^{T}_{WH}\diamond\mathbf W'_O" if _which == "uat"
                                  else r"\mathbf W'_{HVO}=\mathbf W'^{T}_{HV}\diamond\mathbf W'_O")
                 + r";\ (\mathbf W'_{HVO})^{T}\mathbf x'=\mathring{\mathbf H}'",
                 partial(_h4, _which, _mm), note="W^T_WH read as (W'_WH)ᵀ, UAT's name for W'_HV")

# --------------------------------------------------------------------------------------------
# H5 — whole MHA
# --------------------------------------------------------------------------------------------

H5 = REGISTRY.claim(
    "H5", "Whole MHA",
    where="UAT §3.4 Eq. 8; AAAI §3.4 Eq. 9–10; DUAT §3.2 Eq. 9–10",
    statement=r"\mathring{\mathbf H}'=(\mathbf W'_{HVO})^{T}\mathbf x'\ (\text{DUAT Eq. 9}),\quad "
    r"\mathring{\mathbf H}=(\mathbf W'_{HVO})^{T}(\mathbf x_i)'\ (\text{UAT Eq. 8})",
    group="attention",
)
for _o in ORDERS:
    for _proj in PROJECTIONS:
        _s = mha_symbols(_proj)
        H5.check("exist", (_o, _proj), r"\mathring{\mathbf H}'=(\mathbf W'_{HVO})^{T}\mathbf x'",
                 partial(decide.check_identity, Vec(_s.mha(), _o), mul(_s.W_HVO(_o), Vec(_s.X, _o)),
                         construction=r"(\mathbf W'_{HVO})^{T}=" + latex(_s.W_HVO(_o))
                         + r",\ B_i=S_iW_{Vi}E_i^{T}W_O"))


def _h5_entry(order):
    s = mha_symbols("split")
    WOi = mul(T(s.E), s.WO)  # the rows of W_O that head i uses
    formula = HeadSum(HEAD, s.h, kron(s.H, T(mul(s.S, s.WV, WOi)))) if order == "row" else \
        HeadSum(HEAD, s.h, kron(T(mul(s.S, s.WV, WOi)), s.H))
    return decide.check_identity(s.W_HVO(order), formula)


for _o in ORDERS:
    H5.check("entry", (_o,),
             r"[(\mathbf W'_{HVO})^{T}]_{(n,a),(n',b)}=\sum_i(H_i)_{nn'}(S_iW_{Vi}W_{O,i})_{ba}" if _o == "row"
             else r"[(\mathbf W'_{HVO})^{T}]_{(a,n),(b,n')}=\sum_i(H_i)_{nn'}(S_iW_{Vi}W_{O,i})_{ba}",
             partial(_h5_entry, _o), note="W_O,i = E_iᵀ W_O, the rows of W_O for head i")
for _proj in PROJECTIONS:
    _s = mha_symbols(_proj)
    H5.check("head", (_proj,), r"\mathring{\mathbf H}=\sum_i\mathbf H_i\mathbf x_i\mathbf W_{Vi}\mathbf W_{O,i}",
             partial(decide.check_identity, _s.mha(),
                     HeadSum(HEAD, _s.h, mul(_s.H, _s.X, _s.S, _s.WV, mul(T(_s.E), _s.WO)))))


def _h5_eq8(xread, lhsread):
    s = mha_symbols("split")
    W = s.W_HVO("row")
    x = Vec(MatrixSymbol("x_i", s.N, s.d), "row") if xread == "slice" else Vec(s.X, "row")
    lhs = s.mha() if lhsread == "matrix" else Vec(s.mha(), "row")
    return decide.check_identity(lhs, mul(W, x),
                                 corrected=Statement(Vec(s.mha(), "row"), mul(W, Vec(s.X, "row")),
                                                     r"\mathring{\mathbf H}'=(\mathbf W'_{HVO})^{T}\mathbf x'"))


for _x in ("slice", "input"):
    for _l in ("matrix", "flat"):
        H5.check("eq8", (_x, _l), r"\mathring{\mathbf H}=(\mathbf W'_{HVO})^{T}(\mathbf x_i)'",
                 partial(_h5_eq8, _x, _l),
                 note=("(x_i)' = vec of the head slice x_i (N×d)" if _x == "slice" else "(x_i)' = the flattened layer input")
                 + "; left side " + ("the N×M matrix as printed" if _l == "matrix" else "read with its stated size (NM,1), i.e. flattened"))

# --------------------------------------------------------------------------------------------
# H6 — density and correlation of W'_HVO
# --------------------------------------------------------------------------------------------

H6 = REGISTRY.claim(
    "H6", "“W'_HVO is dense; its entries are highly correlated”",
    where="UAT §4.2; AAAI §3.4, §4.2, App. D; DUAT §3.2, §4.1, §4.2, App. C (Fig. 4)",
    statement=r"(\mathbf W'_{HVO})^{T}\text{ is dense, with almost no zero entries; its entries are highly correlated}",
    group="attention",
)
for _proj in PROJECTIONS:
    for _mask in MASKS:
        _s = mha_symbols(_proj, _mask)
        H6.check("dense", (_proj, _mask), r"\operatorname{density}((\mathbf W'_{HVO})^{T})=1",
                 partial(_density_check, _s.W_HVO("row"), _mask, sp.Integer(1)),
                 note="“dense, almost no zero entries” read as: every entry structurally nonzero")
        H6.check("cond", (_proj, _mask),
                 r"\text{structurally nonzero factors }W'_{HV},W'_O\Rightarrow W'_O W'_{HV}\text{ dense}",
                 partial(_density_check, mul(_s.W_O("row"), _s.W_HV("row")), _mask, sp.Integer(1)),
                 note="the product W'_O W'_HV with generic factors (densities of the factors: H2, H3)")


def _h6_corr_trial(sizes, seed):
    rng = np.random.default_rng(seed)
    N, M, h = sizes["N"], sizes["M"], sizes["h"]
    d = M // h
    X = rng.standard_normal((N, M))
    WQ, WK, WV = (rng.standard_normal((h, d, d)) for _ in range(3))
    WO = rng.standard_normal((M, M))
    _, H = mha_forward(X, WQ, WK, WV, WO, heads=h)
    op = MHAOperator(H, WV, WO)
    blocks = np.array([op.token_block(a, b).ravel() for a in range(N) for b in range(N)])
    sv = np.linalg.svd(blocks, compute_uv=False)
    rank = int(np.sum(sv > 1e-10 * sv[0]))
    return rank == min(h, N * N, M * M), (
        f"the N² token blocks (M×M) of (W'_HVO)ᵀ span a space of dimension {rank} = h = {h} "
        f"(of M² = {M * M}); singular-value cutoff 1e-10·σ_max"), {"rank": rank, "h": h, "N": N, "M": M}


H6.check("corr", None,
         r"\dim\operatorname{span}\{\text{token blocks of }(\mathbf W'_{HVO})^{T}\}\le h",
         lambda: decide.check_numeric(_h6_corr_trial, [{"N": 5, "M": 6, "h": 2}, {"N": 6, "M": 12, "h": 3},
                                                       {"N": 8, "M": 16, "h": 4}],
                                      what="rank of the stacked token blocks, float64 SVD"),
         note="“highly correlated” formalised: the N² blocks all lie in span{B_1ᵀ,…,B_hᵀ} (H5.entry), "
              "an h-dimensional space; confirmed numerically that the dimension is exactly h")

# --------------------------------------------------------------------------------------------
# H7 — biases
# --------------------------------------------------------------------------------------------

H7 = REGISTRY.claim(
    "H7", "Biases in Q/K/V/O (extension)",
    where="not in the papers; used by T12",
    statement=r"\mathring H'=W'_{\rm MHA}(x)\,x'+b'_{\rm MHA},\quad b'_{\rm MHA}=T_D\big(1_N(\textstyle\sum_ib_{Vi}^{T}W_{O,i}+b_O^{T})\big)",
    group="attention",
    remarks="Q/K biases change only H_i. The V/O biases pass through H_i because each row of H_i sums "
    "to 1 (softmax, with or without mask): H_i 1_N b_Viᵀ = 1_N b_Viᵀ. Checked at explicit sizes with "
    "H_i parametrised exactly as row-stochastic (last allowed entry of each row = 1 − the others).",
)


def _h7_parts(order, mask, stochastic, sizes):
    """Explicit MHA with V/O biases: (its output, the linear part W'x', the bias b'), flattened."""
    from symuat.vec import vec

    N, h, d, dv = sizes["N"], sizes["h"], sizes["d"], sizes["d_v"]
    M = h * d
    sym = lambda name, *shape: np.array(
        [sp.Symbol(f"{name}{list(idx)}") for idx in np.ndindex(*shape)], dtype=object).reshape(shape)
    X, WV, WO = sym("X", N, M), sym("WV", h, d, dv), sym("WO", h * dv, M)
    bV, bO = sym("bV", h, dv), sym("bO", M)
    H = sym("H", h, N, N)
    for i in range(h):
        for n in range(N):
            last = n if mask == "causal" else N - 1
            for k in range(last + 1, N):
                H[i, n, k] = 0
            if stochastic:
                H[i, n, last] = 1 - sum(H[i, n, k] for k in range(last))
    ones = np.ones((N, 1), dtype=object)
    out = ones @ bO.reshape(1, M)
    lin = np.zeros((N, M), dtype=object)
    bias = bO.reshape(1, M).copy()
    for i in range(h):
        xi, WOi = X[:, i * d:(i + 1) * d], WO[i * dv:(i + 1) * dv]
        out = out + H[i] @ (xi @ WV[i] + ones @ bV[i].reshape(1, dv)) @ WOi
        lin = lin + H[i] @ xi @ WV[i] @ WOi
        bias = bias + bV[i].reshape(1, dv) @ WOi
    return vec(out, order), vec(lin, order), vec(ones @ bias, order), X


_H7_SIZES = [{"N": n, "h": h, "d": d, "d_v": dv} for n, h, d, dv in [(2, 1, 1, 1), (3, 2, 1, 1), (2, 2, 2, 1), (3, 1, 2, 2)]]


def _h7_build(order, mask, stochastic, sizes):
    out, lin, bias, _ = _h7_parts(order, mask, stochastic, sizes)
    return out, lin + bias


def _h7(order, mask):
    verdict = decide.check_explicit(partial(_h7_build, order, mask, True), _H7_SIZES)
    _, _, bias, X = _h7_parts(order, mask, True, _H7_SIZES[-1])
    x_symbols = set(X.flat)
    depends = any(sp.sympify(v).free_symbols & x_symbols for v in bias.flat)
    verdict.quantities["b_MHA"] = r"T_D(1_N(\sum_i b_{Vi}^T W_{O,i} + b_O^T))"
    verdict.quantities["b_MHA depends on the input"] = (
        "yes" if depends else "no: none of its entries contains an entry of X")
    verdict.quantities["the same identity without rows of H_i summing to 1"] = str(
        decide.check_explicit(partial(_h7_build, order, mask, False), _H7_SIZES[1:2]).status)
    return verdict


for _o in ORDERS:
    for _mask in MASKS:
        H7.check(None, (_o, _mask), r"T_D(\mathring H_{\rm bias})=W'_{HVO}{}^{T}x'+b'_{\rm MHA}", partial(_h7, _o, _mask))

# --------------------------------------------------------------------------------------------
# H8 — H_i through W_QK
# --------------------------------------------------------------------------------------------

H8 = REGISTRY.claim(
    "H8", "H_i through W_QK (Eq. 35)",
    where="DUAT App. C Eq. 35; UAT App. B.2, AAAI App. B, DUAT App. A (Fig. 1.a)",
    statement=r"\mathbf H_i=\operatorname{softmax}\Big(\frac{\mathbf x_i\mathbf W_{Qi}(\mathbf x_i\mathbf W_{Ki})^{T}}{\sqrt M}\Big)"
    r"\overset{1}{=}\operatorname{softmax}\Big(\frac{\mathbf x_i\mathbf W_{Qi}\mathbf W_{Ki}^{T}\mathbf x_i^{T}}{\sqrt M}\Big)"
    r"\overset{2}{=}\operatorname{softmax}\Big(\frac{\mathbf x_i\mathbf W_{QKi}\mathbf x_i^{T}}{\sqrt M}\Big)",
    group="attention",
    remarks="softmax is applied to equal arguments, so each step reduces to the equality of the scores.",
)
_Nq, _dq, _dk = dims("N d d_k")
_xq, _WQ, _WK = MatrixSymbol("x_i", _Nq, _dq), MatrixSymbol("W_Qi", _dq, _dk), MatrixSymbol("W_Ki", _dq, _dk)
_WQK = mul(_WQ, T(_WK))
H8.check("1", None, r"\mathbf x_i\mathbf W_{Qi}(\mathbf x_i\mathbf W_{Ki})^{T}=\mathbf x_i\mathbf W_{Qi}\mathbf W_{Ki}^{T}\mathbf x_i^{T}",
         partial(decide.check_identity, mul(_xq, _WQ, T(mul(_xq, _WK))), mul(_xq, _WQ, T(_WK), T(_xq))))
_WQKsym = MatrixSymbol("W_QKi", _dq, _dq)
H8.check("2", None, r"\mathbf x_i\mathbf W_{Qi}\mathbf W_{Ki}^{T}\mathbf x_i^{T}=\mathbf x_i\mathbf W_{QKi}\mathbf x_i^{T},\ \mathbf W_{QKi}:=\mathbf W_{Qi}\mathbf W_{Ki}^{T}",
         partial(decide.check_identity, mul(_xq, _WQ, T(_WK), T(_xq)), mul(_xq, _WQK, T(_xq))))
H8.check("cov", None, r"\mathbf x_i\mathbf W_{QKi}\mathbf x_i^{T}\text{ is a covariance matrix (symmetric)}",
         partial(decide.check_identity, mul(_xq, _WQK, T(_xq)), T(mul(_xq, _WQK, T(_xq)))),
         note="formalised by the weakest property of a covariance matrix, symmetry; centring and "
              "positive semi-definiteness would need more")


def _h8_rank_trial(sizes, seed):
    rng = np.random.default_rng(seed)
    d, dk = sizes["d"], sizes["d_k"]
    WQK = rng.standard_normal((d, dk)) @ rng.standard_normal((d, dk)).T
    sv = np.linalg.svd(WQK, compute_uv=False)
    rank = int(np.sum(sv > 1e-10 * sv[0]))
    return rank == min(d, dk), f"rank(W_QK) = {rank} = min(d, d_k)", {"rank": rank, **sizes}


H8.check("rank", None, r"\operatorname{rank}\mathbf W_{QKi}=\min(d,d_k)\le d_k",
         lambda: decide.check_numeric(_h8_rank_trial, [{"d": 8, "d_k": 2}, {"d": 6, "d_k": 6}, {"d": 4, "d_k": 7}],
                                      what="float64 SVD, cutoff 1e-10·σ_max"),
         note="rank ≤ d_k always (a product through d_k); equality for generic weights, confirmed numerically")

# --------------------------------------------------------------------------------------------
# H9 — dependence on the input
# --------------------------------------------------------------------------------------------

H9 = REGISTRY.claim(
    "H9", "MHA's matrix-vector parameters depend on the input",
    where="UAT §3.4, §3.5, §4.1; AAAI §3.5, §4.1; DUAT §3.3, §4.1",
    statement=r"\mathbf W'_{HVO}=\mathbf W'_{HVO}(X)",
    group="attention",
)


def _random_mha(rng, N, M, h):
    d = M // h
    return [rng.standard_normal((h, d, d)) for _ in range(3)] + [rng.standard_normal((M, M))]


def _h9_lin_trial(sizes, seed):
    rng = np.random.default_rng(seed)
    N, M, h = sizes["N"], sizes["M"], sizes["h"]
    WQ, WK, WV, WO = _random_mha(rng, N, M, h)
    X, Y = rng.standard_normal((N, M)), rng.standard_normal((N, M))
    f = lambda Z: mha_forward(Z, WQ, WK, WV, WO, heads=h)[0]
    res = decide._residual(f(X + Y), f(X) + f(Y))
    return res <= decide.TOLERANCE, (
        f"MHA(X+Y) vs MHA(X)+MHA(Y): relative residual {res:.3g} (tolerance {decide.TOLERANCE})"), {
        "X": X.round(6), "Y": Y.round(6), "seed": seed, "residual": res}


H9.check("lin", None, r"X\mapsto\mathring{\mathbf H}\text{ is linear}",
         lambda: decide.check_numeric(_h9_lin_trial, [{"N": 3, "M": 4, "h": 2}], what="float64 MHA with softmax"),
         note="a refutation here agrees with the papers: MHA is not a fixed linear map")
_s = mha_symbols("split")
_Y = BlockSymbol("Y", (_s.N,), (_s.h, _s.d))
_mha_of = lambda Z: mul(HeadSum(HEAD, _s.h, mul(_s.H, Z, _s.S, _s.WV, T(_s.E))), _s.WO)
H9.check("lin-fixed", None, r"\mathbf H_i\text{ fixed}:\ \mathring{\mathbf H}(X+Y)=\mathring{\mathbf H}(X)+\mathring{\mathbf H}(Y)",
         partial(decide.check_identity, _mha_of(add(_s.X, _Y)), add(_mha_of(_s.X), _mha_of(_Y))))


def _h9_dep_trial(sizes, seed):
    rng = np.random.default_rng(seed)
    N, M, h = sizes["N"], sizes["M"], sizes["h"]
    WQ, WK, WV, WO = _random_mha(rng, N, M, h)
    X1, X2 = rng.standard_normal((N, M)), rng.standard_normal((N, M))
    H1_ = attention_patterns(X1, WQ, WK, h)
    H2_ = attention_patterns(X2, WQ, WK, h)
    W1, W2 = MHAOperator(H1_, WV, WO).dense(), MHAOperator(H2_, WV, WO).dense()
    res = decide._residual(W1, W2)
    return res > decide.TOLERANCE, (
        f"W'_HVO(X1) − W'_HVO(X2): relative difference {res:.3g} > tolerance {decide.TOLERANCE}"), {"difference": res}


H9.check("dep", None, r"\exists X_1,X_2:\ \mathbf W'_{HVO}(X_1)\ne\mathbf W'_{HVO}(X_2)",
         lambda: decide.check_numeric(_h9_dep_trial, [{"N": 3, "M": 4, "h": 2}, {"N": 5, "M": 6, "h": 3}],
                                      what="float64 witnesses, softmax patterns"))
H9.check("func", None, r"\text{“approximates different functions for different inputs”}",
         lambda: decide.informal(
             "A network with fixed weights computes one function of its input. What varies with the "
             "input is the linear map W'_HVO(X) of the matrix-vector form (H9.dep), i.e. the "
             "parameters of the UAT form; the sentence is an interpretation of that, not an identity."))


def _register_figures():
    from symuat.figures import structure_figure

    for proj in PROJECTIONS:
        for mask in MASKS:
            caption = (f"{proj} projections, {mask} attention. Dense: the exact zero/nonzero patterns of "
                       "W'_HV, W'_O and (W'_HVO)ᵀ (each red-bounded square maps one input token to one "
                       "output token; blue = structurally nonzero). Correlated: the singular values of the "
                       "token blocks of W'_HVO on a random float64 instance — only h are nonzero, every "
                       "block lies in the h-dimensional span of the B_iᵀ (H6.corr).")
            H6.figures.append((f"mha-structure-{proj}-{mask}", caption,
                               partial(structure_figure, proj, mask)))


_register_figures()
