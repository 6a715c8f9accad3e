r"""A4's refutations against the exact reference Transformer → Coq (``coq/SymuatRef.v``).

A4 compares printed Eq. 18 (LoRA in the DUAT form), under each reading, with what an exact
Transformer computes (:mod:`symuat.numeric.lora`: rational attention ``1 + (q·k)²`` normalised,
σ = softsign, ``N = M = F = 2``), and ``A4.concl`` whether tuning layer ``k`` leaves the combined
weights of the other indices unchanged. The check
(:func:`symuat.claims.applications._a4`, ``_a4_concl``) records a ``reference_refutation``
certificate at its first exact counterexample: the statement (``eq18`` with the reading, or
``layerwise`` with the scope), the target and layer, the depth, the sizes, every leaf's value
(the blocks' weights, the input, the LoRA increment) and the two sides' values.

:func:`export_reference_refutation` states what the check concluded, over Coq's binary rationals
``Q`` (the values have 30–500 digits; MathComp's ``rat`` is unary), with both sides Coq terms of
``SymuatRef.v`` — the formula from the base and fine-tuned networks' combined parameters, the
reference the fine-tuned network's unrolled form, both computed from the Transformer's weights by
the kernel's own definitions:

* ``~ (forall bs B A X0, instance_shaped … -> qmx_eqb (eq18 r t k N (mm B A) (form bs X0) (form ft X0) X0) (unrolled X0 (form ft X0)))``
  with ``ft = tune t k (mm B A) bs`` (a rank-``r`` LoRA increment ``B A``), resp.
  ``~ (forall …, layerwise_k k (form bs X0) (form ft X0))`` / ``layerwise_ge``;
* beside an Eq. 18 refutation, A4.ref at the witness: the reference is the fine-tuned Transformer's
  forward pass (``unrolled X0 (form ft X0)`` against ``vec_r (tforward ft X0)``), and the sides'
  values are the recorded ones (so the Coq definitions compute what the kernel computed); a
  layer-wise statement compares combined weights only (no forward pass enters it).

The eight op=times readings of one target are refuted at one instance, so their 16 theorems
share one computation (:func:`shared_values`): a lemma of the batch, ``{name}_values``, states
``a4_values t k N bs B A X0 lhs rhs = [:: …]`` — the two forms evaluated once (``let``), every
reading's comparison with the reference, every reading's Eq. 18 against its value (recomputed here
by :mod:`symuat.numeric.lora` from the recorded leaves, the recorded reading's checked against the
recorded value), A4.ref and the reference's value — proved by the kernel's VM
(``vm_cast_no_check``: evaluated once, by the kernel's check of the cast); its statement names the
instance only, so all 16 are dealt to one file, which proves it once
(:func:`~symuat.certify.export.share_proofs`), and coqchk re-checks it once. Each theorem, its
statement unchanged, is that lemma's entry (``SymuatRef.refuted_reading``: shapes hold at the
instance and the entry is ``false``; ``ref_values``). A layer-wise statement (its own instance)
is proved by computing: the kernel's VM evaluates it at the witness (``vm_cast_no_check``: the
cast to ``false = true -> False`` is checked by the kernel, not evaluated by the tactic first). A
witness at which the sides agree, a layer-wise statement where it holds, a shared lemma with a
wrong value, or a reference with a wrong index, is rejected (``tests/test_certify_reference.py``).
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np

from symuat.certify.coq_terms import Unsupported
from symuat.certify.export import Exported

#: the library file the theorems need (after the section: :attr:`Exported.requires`)
LIBRARY = "SymuatRef"
#: the certificate kind the A4 checks record
KIND = "reference_refutation"

#: one layer's leaves, in the order of SymuatRef's ``TBlock``
BLOCK = ("WQ", "WK", "WV", "WO", "W1", "b1", "W2", "b2")


def q(v) -> str:
    """A rational as a Coq ``Q`` literal, ``qz n d``."""
    f = Fraction(v)
    n = f.numerator
    return f"(qz {n if n >= 0 else f'({n})'} {f.denominator})"


def row(v) -> str:
    return "[:: " + "; ".join(q(x) for x in np.asarray(v, dtype=object).reshape(-1)) + "]"


def matrix(m) -> str:
    m = np.asarray(m, dtype=object)
    if m.ndim != 2:
        raise Unsupported(f"a leaf of {m.ndim} axes, not a matrix")
    return "[:: " + "; ".join(row(r) for r in m) + "]"


def tblock(leaves) -> str:
    """SymuatRef's ``TBlock`` of one layer's leaves (in :data:`BLOCK`'s order): a vector (a bias)
    as a row, a matrix as its rows."""
    return "(TBlock " + " ".join(row(v) if np.asarray(v, dtype=object).ndim == 1 else matrix(v) for v in leaves) + ")"


def lora_factors(delta) -> tuple[np.ndarray, np.ndarray]:
    """A rank-1 increment ``ΔW`` as ``B A`` (``B`` its first nonzero column, ``A`` the row that
    scales it), checked exactly; :class:`Unsupported` if it is not of rank 1."""
    d = np.asarray(delta, dtype=object)
    cols = [j for j in range(d.shape[1]) if any(x != 0 for x in d[:, j])]
    if not cols:
        raise Unsupported("the LoRA increment is zero")
    j0 = cols[0]
    i0 = next(i for i in range(d.shape[0]) if d[i, j0] != 0)
    B = d[:, [j0]]
    A = np.array([[Fraction(d[i0, j]) / Fraction(d[i0, j0]) for j in range(d.shape[1])]], dtype=object)
    if any(x != y for x, y in zip((B @ A).flat, d.flat)):
        raise Unsupported("the LoRA increment is not of rank 1 (its factors are not recorded)")
    return B, A


def _reading(reading: dict) -> str:
    if reading.get("op") != "times":
        raise Unsupported("Eq. 18 with op=plus is ill-typed (no statement)")
    b = lambda x: "true" if x else "false"
    return (f"(Reading {b(reading['Δ'] == 'induced')} {b(reading['b2'] == 'recomputed')} "
            f"{b(reading['idx'] == 'j+1')})")


def export_reference_refutation(name: str, data: dict) -> list[Exported]:
    """The negated statement at the recorded counterexample, and A4.ref (and the recorded side
    values) at the same instance; module docstring."""
    target = {"W3": "TW3", "W2": "TW2"}.get(data["target"])
    if target is None:
        raise Unsupported(f"LoRA on {data['target']}: SymuatRef.v tunes W3 or W2 only")
    L, k = int(data["L"]), int(data["k"])
    sizes = data["sizes"]
    N, M, F = (int(sizes[s]) for s in ("N", "M", "F"))
    values = data["values"]
    blocks = []
    kq = None
    for j in range(1, L + 1):
        leaves = [values[f"layer{j}.{n}"] for n in BLOCK]
        kq = np.asarray(leaves[0], dtype=object).shape[1]
        blocks.append(tblock(leaves))
    B, A = lora_factors(values["ΔW"])
    r = B.shape[1]
    wit = f"[:: {'; '.join(blocks)}] {matrix(B)} {matrix(A)} {matrix(values['X0'])}"
    ft = f"(tune {target} {k} (mm B A) bs)"
    shaped = f"instance_shaped {target} {L} {N} {M} {F} {kq} {r} bs B A X0"
    what = f"L={L}, LoRA (B A, rank {r}) on {data['target']} of layer {k}, N={N}, M={M}, F={F}"
    if data["statement"] == "eq18":
        rd = _reading(data["reading"])
        tags = ", ".join(f"{a}={v}" for a, v in data["reading"].items())
        claim = f"qmx_eqb (eq18 {rd} {target} {k} {N} (mm B A) (form bs X0) (form {ft} X0) X0) (unrolled X0 (form {ft} X0))"
        comment = (f"(* Eq. 18 ({tags}) is the fine-tuned exact Transformer's x'_L ({what}): refuted at "
                   "the kernel's counterexample (over Q; sigma = softsign) *)")
    elif data["statement"] == "layerwise":
        fn = {"k": "layerwise_k", "≥k": "layerwise_ge"}[data["scope"]]
        claim = f"{fn} {k} (form bs X0) (form {ft} X0)"
        comment = (f"(* LoRA on layer k changes no combined weight W'_{{j,.}} of "
                   f"{'another index' if data['scope'] == 'k' else 'an index below k'} ({what}): refuted at "
                   "the kernel's counterexample (over Q; sigma = softsign) *)")
    else:
        raise Unsupported(f"no statement {data['statement']!r}")
    statement = (f"{comment}\nTheorem {name} :\n  ~ (forall (bs : seq tblock) (B A X0 : qmx),\n"
                 f"      {shaped} ->\n      {claim}).")
    shared = shared_values(name, data, target, k, N, wit) if data["statement"] == "eq18" else None
    if shared is not None:  # from the instance's one computation (:func:`shared_values`)
        sides, i = shared
        proof = f"by apply: (refuted_reading (i := {i}) {name}_values)."
    else:
        # the kernel's VM alone evaluates the comparison (checking the cast; coqchk by conversion),
        # not the tactic too: the statement at the witness is [false], else the cast is rejected
        sides, proof = "", (f"move=> H; have E := H {wit} erefl; move: E; vm_cast_no_check "
                            "(fun E : false = true => match E in _ = b return (if b then False else True) with erefl => I end).")
    out = [Exported(name, statement, proof, sides=sides, requires=LIBRARY)]
    if data["statement"] != "eq18":
        return out  # the combined weights alone: no forward pass enters the statement
    # A4.ref at the witness, and the sides' values as the kernel computed them
    lets = (f"let bs := [:: {'; '.join(blocks)}] in let B := {matrix(B)} in let A := {matrix(A)} in "
            f"let X0 := {matrix(values['X0'])} in")
    checks = [f"qmx_eqb (unrolled X0 (form {ft} X0)) (vec_r (tforward {ft} X0))",
               f"qmx_eqb (eq18 {rd} {target} {k} {N} (mm B A) (form bs X0) (form {ft} X0) X0) {matrix(data['lhs'])}",
               f"qmx_eqb (unrolled X0 (form {ft} X0)) {matrix(data['rhs'])}"]
    ref = ("(* at the same instance: the reference is the fine-tuned Transformer's forward pass (A4.ref), and the "
           "two sides are the values the kernel computed *)\n"
           f"Theorem {name}_ref :\n  {lets}\n  " + " && ".join(f"({c})" for c in checks) + ".")
    if shared is not None:
        out.append(Exported(f"{name}_ref", ref, f"by apply: (ref_values (i := {i}) {name}_ref_values).",
                            sides=sides.replace(f"Lemma {name}_values ", f"Lemma {name}_ref_values "),
                            requires=LIBRARY))
    else:
        out.append(Exported(f"{name}_ref", ref, "vm_compute; reflexivity.", requires=LIBRARY))
    return out


#: the op=times readings in the order of ``readings8`` (``coq/SymuatRef.v``)
READINGS8 = [{"Δ": d, "b2": b, "idx": x, "op": "times"}
             for d in ("induced", "raw") for b in ("kept", "recomputed") for x in ("j", "j+1")]


def _instance_sides(data: dict, target: str):
    """Every op=times reading's Eq. 18 and the reference at the recorded instance, by the kernel's
    exact definitions (:mod:`symuat.numeric.lora`), from the recorded leaves alone."""
    from symuat.numeric import lora

    values = {n: np.asarray(v, dtype=object) for n, v in data["values"].items()}
    blocks = [lora.ExactBlock(**{n: values[f"layer{j}.{n}"] for n in BLOCK}) for j in range(1, int(data["L"]) + 1)]
    k, delta, X0 = int(data["k"]), values["ΔW"], values["X0"]
    slot = {"TW3": "W2", "TW2": "W1"}[target]
    ft_blocks = list(blocks)
    ft_blocks[k - 1] = dataclasses.replace(blocks[k - 1], **{slot: getattr(blocks[k - 1], slot) + delta})
    base, ft = lora.exact_form(blocks, X0), lora.exact_form(ft_blocks, X0)
    raw = lora.raw_lifts(data["target"], k, delta, X0.shape[0], True)
    return [lora.eq18(base, ft, r, raw) for r in READINGS8], ft.evaluate()


def shared_values(name: str, data: dict, target: str, k: int, N: int, wit: str) -> tuple[str, int] | None:
    """The lemma ``{name}_values`` that evaluates the instance's forms once (``a4_values``: every
    reading's comparison, every reading's Eq. 18 against its value, the reference against the
    forward pass and its value), and this reading's index in it; the lemma's statement depends on
    the instance only, so the file that holds the instance's theorems proves it once
    (:func:`~symuat.certify.export.share_proofs`; :func:`~symuat.certify.run.deal` puts them in one
    file). None when the recomputed sides are not the recorded ones (then each theorem computes)."""
    lhs, rhs = _instance_sides(data, target)
    i = READINGS8.index({a: data["reading"][a] for a in ("Δ", "b2", "idx", "op")})
    same = lambda a, b: np.asarray(a, dtype=object).shape == np.asarray(b, dtype=object).shape and all(
        Fraction(x) == Fraction(y) for x, y in zip(np.asarray(a, dtype=object).flat, np.asarray(b, dtype=object).flat))
    if not (same(lhs[i], data["lhs"]) and same(rhs, data["rhs"])):
        return None
    bools = [str(same(v, rhs)).lower() for v in lhs] + ["true"] * 10
    lemma = (f"Lemma {name}_values :\n  a4_values {target} {k} {N} {wit}\n    [:: {'; '.join(matrix(v) for v in lhs)}]\n"
             f"    {matrix(rhs)} =\n  [:: {'; '.join(bools)}].\n"
             f"Proof. vm_cast_no_check (@erefl (seq bool) [:: {'; '.join(bools)}]). Defined.\n")
    return lemma, i
