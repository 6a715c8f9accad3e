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

Any instance of the statement's shapes at which it fails refutes the ``forall``, not only the
kernel's, whose values have 30–500 digits (coqc's VM computes them in seconds, but coqchk, which
has no VM, re-does every proof by its lazy machine: ~80 s of CPU for A4's). So the exporter finds
its own (:func:`small_witness`, as :mod:`~symuat.certify.exact_dependence` does for T10): networks,
LoRA factors and inputs of the check's shapes with entries in ``{-1, 0, 1, 2}`` (mostly 0) from a
fixed seed, in a fixed order, at most :data:`CANDIDATES` of them, the first at which every value
Coq computes has at most :data:`MAX_DIGITS` digits and the statement fails, evaluated exactly by
the kernel's evaluator (``ExactBlock``, :func:`symuat.expr.residual.unroll`, ``lora.eq18``): for a
layer-wise statement, ``layerwise_k``/``layerwise_ge`` is false; for Eq. 18, every reading the
kernel refuted at its counterexample (recomputed from the recorded leaves, the recorded reading's
sides checked against the recorded values) differs from the reference. The theorem's comment and
the record's reason (:data:`REASON`) say the witness is the exporter's; A4.ref and the sides'
values beside an Eq. 18 refutation are then at that witness, the values the evaluator's there.
Where the search finds none, the kernel's counterexample is used as before.

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
import functools
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

#: the exporter's own witness (:func:`small_witness`): entries drawn from these values with these
#: weights, from this seed, at most this many candidates, each value Coq computes at most this many digits
VALUES = (-1, 0, 1, 2)
WEIGHTS = (0.125, 0.625, 0.125, 0.125)
SEED = 0
CANDIDATES = 400
MAX_DIGITS = 4
#: in the comment of a theorem at the exporter's own witness (:func:`reason`)
OWN = "the exporter's own small witness"

#: the record's reason for an A4 refutation certified at the exporter's own witness (:func:`reason`)
REASON = ("certified at the exporter's own small witness, not the kernel's: a network, LoRA factors and an input "
          "of the check's shapes (its L, tuned layer and target; N = M = F = 2, rank 1) with entries in "
          "{-1, 0, 1, 2}, found by a bounded, deterministic search (certify/reference.py) and re-checked exactly by "
          "the kernel's evaluator (ExactBlock, unroll, lora.eq18) in Python, at which every reading the kernel "
          "refuted (resp. the layer-wise statement) fails; any such instance refutes the statement "
          "(~ (forall networks, factors and inputs of those shapes, ...)); beside an Eq. 18 refutation, at that "
          "instance, SymuatRef's unrolled form is the forward pass (A4.ref) and the sides' values are the evaluator's")


def reason(theorems) -> str | None:
    """:data:`REASON` when the theorems are at the exporter's own witness, else None."""
    return REASON if any(OWN in t.statement for t in theorems) else None


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
    own_text = (f"refuted at {OWN} (not the kernel's: entries in {{-1, 0, 1, 2}}, found by a bounded deterministic "
                "search and re-checked exactly by the kernel's evaluator in Python")
    if data["statement"] == "layerwise":
        own = layerwise_witness(data["scope"], L, k, data["target"], N, M, F, kq, r)
        if own is not None:  # the exporter's own (:func:`small_witness`); else the kernel's
            wit = own.coq()
            statement = statement.replace("refuted at the kernel's counterexample", own_text + ")")
    shared = shared_values(name, data, target, k, N, wit) if data["statement"] == "eq18" else None
    if shared is not None and len(shared) == 3:  # at the exporter's own witness (:func:`shared_values`)
        sides, i, own = shared
        shared = (sides, i)
        blocks, B, A = own.coq_blocks(), own.B, own.A
        values = dict(values, X0=own.X0)
        data = dict(data, lhs=own.lhs[i], rhs=own.rhs)
        statement = statement.replace("refuted at the kernel's counterexample",
                                      own_text + ", at which every reading the kernel refuted fails)")
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
    whose = "the kernel's evaluator computed there" if OWN in statement else "the kernel computed"
    ref = ("(* at the same instance: the reference is the fine-tuned Transformer's forward pass (A4.ref), and the "
           f"two sides are the values {whose} *)\n"
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


def _sides(blocks, X0, target: str, k: int, delta):
    """Every op=times reading's Eq. 18 and the reference (the fine-tuned network's unrolled form) for
    LoRA ``delta`` on ``target`` (``W3``/``W2``) of layer ``k``, by the kernel's exact definitions
    (:mod:`symuat.numeric.lora`)."""
    from symuat.numeric import lora

    base, ft = lora.exact_form(blocks, X0), lora.exact_form(_tune(blocks, target, k, delta), X0)
    raw = lora.raw_lifts(target, k, delta, X0.shape[0], True)
    return [lora.eq18(base, ft, r, raw) for r in READINGS8], ft.evaluate()


def _tune(blocks, target: str, k: int, delta) -> list:
    slot = {"W3": "W2", "W2": "W1"}[target]
    out = list(blocks)
    out[k - 1] = dataclasses.replace(blocks[k - 1], **{slot: getattr(blocks[k - 1], slot) + delta})
    return out


def _instance_sides(data: dict, target: str):
    """Every op=times reading's Eq. 18 and the reference at the recorded instance, by the kernel's
    exact definitions (:mod:`symuat.numeric.lora`), from the recorded leaves alone."""
    from symuat.numeric import lora

    values = {n: np.asarray(v, dtype=object) for n, v in data["values"].items()}
    blocks = [lora.ExactBlock(**{n: values[f"layer{j}.{n}"] for n in BLOCK}) for j in range(1, int(data["L"]) + 1)]
    return _sides(blocks, values["X0"], data["target"], int(data["k"]), values["ΔW"])


def _same(a, b) -> bool:
    a, b = np.asarray(a, dtype=object), np.asarray(b, dtype=object)
    return a.shape == b.shape and all(Fraction(x) == Fraction(y) for x, y in zip(a.flat, b.flat))


# ------------------------------------------------------------------------------------------------
# the exporter's own small witness
# ------------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Witness:
    """A network (:class:`~symuat.numeric.lora.ExactBlock`), LoRA factors and an input, and (for
    Eq. 18) every reading's value and the reference there."""

    blocks: list
    B: np.ndarray
    A: np.ndarray
    X0: np.ndarray
    lhs: list | None = None
    rhs: np.ndarray | None = None

    def coq_blocks(self) -> list[str]:
        return [tblock([getattr(b, n) for n in BLOCK]) for b in self.blocks]

    def coq(self) -> str:
        return f"[:: {'; '.join(self.coq_blocks())}] {matrix(self.B)} {matrix(self.A)} {matrix(self.X0)}"


def digits(values) -> int:
    """The most digits of a numerator or denominator among ``values`` (arrays of exact numbers)."""
    return max((max(len(str(abs(Fraction(x).numerator))), len(str(Fraction(x).denominator)))
                for v in values for x in np.asarray(v, dtype=object).reshape(-1)), default=1)


def exact_unrolled(blocks, X0):
    """The unrolled form of ``blocks`` at ``X0`` by the kernel's exact evaluator
    (:func:`symuat.expr.residual.unroll`, σ = softsign, as ``lora.exact_form``), and every value
    Coq computes on the way (each layer's attention and output, the form); None where the form is
    not the forward pass (it always is: the recursion is exact)."""
    from symuat.expr.residual import numpy_algebra, unroll
    from symuat.numeric import lora

    layers, X, seen = [], X0, []
    for blk in blocks:
        seen.append(blk.attention(X))
        layers.append(blk.raw(X))
        X = blk.forward(X)
        seen.append(X)
    x0 = X0.reshape(-1, 1)
    alg = numpy_algebra(exact=True)
    alg.sigma = lora._softsign_array
    u = unroll(alg, layers, x0, np.eye(x0.shape[0], dtype=int).astype(object), x0 * 0)
    if np.any(u.evaluate(alg) != X.reshape(-1, 1)):
        return None
    return u, seen + [u.A, u.c, *u.U, *u.V, *u.e]


def _layerwise(scope: str, k: int, L: int, base, ft) -> bool:
    """SymuatRef's ``layerwise_k`` / ``layerwise_ge`` on two unrolled forms."""
    unchanged = lambda j: _same(ft.U[j], base.U[j]) and _same(ft.V[j], base.V[j])
    if scope == "k":
        return (k == L or _same(ft.A, base.A)) and all(j + 1 == k or unchanged(j) for j in range(L))
    return all(unchanged(j) for j in range(k - 1))


def candidates(L: int, N: int, M: int, F: int, kq: int, target: str, r: int):
    """The search's networks, LoRA factors (``B : p × r``, ``A : r × q`` of the tuned matrix's
    shape) and inputs, in their fixed order (:data:`SEED`, :data:`CANDIDATES`)."""
    from symuat.numeric.lora import ExactBlock

    rng = np.random.default_rng(SEED)
    draw = lambda *shape: rng.choice(np.array(VALUES, dtype=object), size=shape, p=WEIGHTS).astype(object)
    p, q = (F, M) if target == "W3" else (M, F)
    for _ in range(CANDIDATES):
        blocks = [ExactBlock(draw(M, kq), draw(M, kq), draw(M, M), draw(M, M), draw(M, F), draw(F), draw(F, M), draw(M))
                  for _ in range(L)]
        yield blocks, draw(p, r), draw(r, q), draw(N, M)


@functools.lru_cache(maxsize=None)
def small_witness(statement: str, L: int, k: int, target: str, N: int, M: int, F: int, kq: int, r: int,
                  refuted: tuple = ()) -> Witness | None:
    """The first candidate (:func:`candidates`) at which every value Coq computes has at most
    :data:`MAX_DIGITS` digits and the statement fails: ``layerwise:k`` / ``layerwise:≥k`` (its
    scope), or ``eq18``: every reading of ``refuted`` (indices into :data:`READINGS8`) differs from
    the reference, evaluated exactly by the kernel's evaluator; None if none (then the kernel's)."""
    for blocks, B, A, X0 in candidates(L, N, M, F, kq, target, r):
        delta = B @ A
        pair = [exact_unrolled(bs, X0) for bs in (blocks, _tune(blocks, target, k, delta))]
        if None in pair or digits(pair[0][1] + pair[1][1] + [B, A, X0]) > MAX_DIGITS:
            continue
        if statement.startswith("layerwise:"):
            if not _layerwise(statement.split(":", 1)[1], k, L, pair[0][0], pair[1][0]):
                return Witness(blocks, B, A, X0)
            continue
        if _fails(blocks, X0, target, k, delta, refuted):
            lhs, rhs = _sides(blocks, X0, target, k, delta)
            if digits(lhs) <= MAX_DIGITS:
                return Witness(blocks, B, A, X0, lhs, rhs)
    return None


def _fails(blocks, X0, target: str, k: int, delta, refuted: tuple) -> bool:
    """Every reading of ``refuted`` differs from the reference (:func:`_sides`, one reading at a
    time: the search stops at the first that agrees)."""
    from symuat.numeric import lora

    base, ft = lora.exact_form(blocks, X0), lora.exact_form(_tune(blocks, target, k, delta), X0)
    raw, ref = lora.raw_lifts(target, k, delta, X0.shape[0], True), ft.evaluate()
    return all(not _same(lora.eq18(base, ft, READINGS8[i], raw), ref) for i in refuted)


def layerwise_witness(scope: str, L: int, k: int, target: str, N: int, M: int, F: int, kq: int, r: int):
    """:func:`small_witness` for A4.concl's statement of this scope."""
    return small_witness(f"layerwise:{scope}", L, k, target, N, M, F, kq, r)


def shared_values(name: str, data: dict, target: str, k: int, N: int, wit: str):
    """The lemma ``{name}_values`` that evaluates the instance's forms once (``a4_values``: every
    reading's comparison, every reading's Eq. 18 against its value, the reference against the
    forward pass and its value), and this reading's index in it; the lemma's statement depends on
    the instance only, so the file that holds the instance's theorems proves it once
    (:func:`~symuat.certify.export.share_proofs`; :func:`~symuat.certify.run.deal` puts them in one
    file). None when the recomputed sides are not the recorded ones (then each theorem computes).

    The instance is the exporter's own small witness (:func:`small_witness`: every reading the
    kernel refuted at its counterexample fails there too; the lemma's values are the evaluator's
    there), returned third; the kernel's counterexample (``wit``) only if there is none."""
    lhs, rhs = _instance_sides(data, target)
    i = READINGS8.index({a: data["reading"][a] for a in ("Δ", "b2", "idx", "op")})
    if not (_same(lhs[i], data["lhs"]) and _same(rhs, data["rhs"])):
        return None
    values = data["values"]
    B, A = lora_factors(values["ΔW"])
    kq = np.asarray(values["layer1.WQ"], dtype=object).shape[1]
    sizes = data["sizes"]
    own = small_witness("eq18", int(data["L"]), k, data["target"], N, int(sizes["M"]), int(sizes["F"]), kq,
                        B.shape[1], tuple(n for n, v in enumerate(lhs) if not _same(v, rhs)))
    if own is not None:
        lhs, rhs, wit = own.lhs, own.rhs, own.coq()
    bools = [str(_same(v, rhs)).lower() for v in lhs] + ["true"] * 10
    lemma = (f"Lemma {name}_values :\n  a4_values {target} {k} {N} {wit}\n    [:: {'; '.join(matrix(v) for v in lhs)}]\n"
             f"    {matrix(rhs)} =\n  [:: {'; '.join(bools)}].\n"
             f"Proof. vm_cast_no_check (@erefl (seq bool) [:: {'; '.join(bools)}]). Defined.\n")
    return (lemma, i) if own is None else (lemma, i, own)
