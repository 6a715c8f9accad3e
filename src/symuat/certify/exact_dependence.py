r"""T10's refutations: a combined parameter missing from a printed list depends on the input → Coq,
on the exact reference Transformer of ``coq/SymuatRef.v``, at a small witness of the exporter's own.

T10 compares each paper's list of the combined parameters ``W'`` that depend on the input with an
exact 3-layer Transformer (:class:`symuat.numeric.lora.ExactBlock`: attention ``1 + (q·k)²``
normalised, σ = softsign, ``N = M = F = 2``, integer weights and inputs): a parameter missing from
the list that differs between two inputs refutes the list. The check
(:func:`symuat.claims.transformer._t10`) records an ``exact_dependence`` certificate at that
instance: every block's weights, the two inputs, the sizes, the printed list, and each missing
parameter's value at both inputs.

:func:`export_exact_dependence` states, for each missing parameter ``P`` — ``W'_{L,1} = fA``,
``W'_{j,3} = U_j``, ``W'_{j,2} = V_j`` of SymuatRef's ``form`` (symuat's recursion on each layer's
Eq. 20 parameters at its own input) —, that it is not the same for every input of every network of
the check's shapes (the same shapes: ``L = 3``, ``N = M = F = 2``, query/key width 2)::

    ~ (forall (bs : seq tblock) (X X' : qmx),
         [&& size bs == 3, all (block_shaped 2 2 2) bs, shaped 2 2 X & shaped 2 2 X'] ->
         qmx_eqb (P (form bs X)) (P (form bs X')))

Any network and pair of inputs at which ``P`` differs refutes the ``forall``, not only the
kernel's. The kernel's witness (its seed's random weights in ``{-2, …, 2}``) has entries of
~5,000 bits after three layers: ``vm_compute`` over Coq's binary ``Q`` (every operation followed
by ``Qred``) took minutes of CPU on it. So the exporter finds its own: :func:`small_witness`
draws networks and inputs with entries in ``{-1, 0, 1, 2}`` (mostly 0) from a fixed seed, in a
fixed order, at most :data:`CANDIDATES` of them, and takes the first at which ``P`` differs
between the two inputs and every value Coq computes (each layer's input and attention, the whole
unrolled form, the forward pass) has at most :data:`MAX_DIGITS` digits. Each candidate is
evaluated exactly (``Fraction``) by the kernel's own evaluator — ``ExactBlock.raw``/``forward``
and :func:`symuat.expr.residual.unroll` with σ = softsign, as the T10 check does — and kept only
if the unrolled form equals the forward pass there. Nothing is cached on disk; the search takes
well under a second.

Beside each refutation, ``<name>_ref``: at that instance SymuatRef's ``unrolled (form bs X)`` is
the forward pass ``vec_r (tforward bs X)`` at both inputs (so ``form`` is the Transformer's
unrolling there, A4.ref's statement), and ``P`` at each input is the value the kernel's evaluator
computed (in full: a few digits). That ``P`` is not in the printed list is read off the list (the
theorem's comment names both); the model is the check's exact stand-in for the paper's softmax
Transformer (the float64 softmax re-check is numeric, not in Coq).

T10's correction, symuat's list (:func:`symuat.claims.transformer._t10_symuat`, an
``exact_members`` certificate), is stated the same way for each member (:func:`export_members`:
``b'_{j,2}`` is ``fe``'s ``j``-th), each at its own small witness (at most :data:`MEMBER_DIGITS`
digits); the parameters it leaves out are fixed by identities the normal form proved and by
T10.c[token-shared], which the tier certifies on its own (:func:`symuat.certify.run.resting_on_checks`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from symuat.certify.coq_terms import Unsupported
from symuat.certify.export import Exported
from symuat.certify.reference import BLOCK, LIBRARY, digits, exact_unrolled, matrix, tblock

#: the certificate kind T10's checks record
KIND = "exact_dependence"

#: the search (:func:`small_witness`): entries drawn from these values with these weights (mostly
#: 0), from this seed, at most this many candidates, each value Coq computes at most this many digits
VALUES = (-1, 0, 1, 2)
WEIGHTS = (0.0625, 0.8125, 0.0625, 0.0625)
SEED = 0
CANDIDATES = 400
MAX_DIGITS = 3
#: the same bound for the members of T10's correction (:func:`export_members`): W'_{1,2} differs in 3
#: of the 400 candidates only, the smallest with 4-digit values
MEMBER_DIGITS = 5

#: the record's reason for a certified T10 refutation (:func:`symuat.certify.run`)
REASON = ("certified at the exporter's own small witness, not the kernel's: a 3-layer exact network and two "
          "inputs of the check's shapes (N = M = F = 2) with entries in {-1, 0, 1, 2}, found by a bounded, "
          "deterministic search (certify/exact_dependence.py) and re-checked exactly by the kernel's evaluator "
          "(ExactBlock, unroll) in Python; any instance at which the parameter differs refutes the statement "
          "(~ (forall networks and inputs of those shapes, the parameter is the same at both inputs)); beside "
          "it, at that instance, SymuatRef's unrolled form is the forward pass and the parameter's values are "
          "the evaluator's")


#: a parameter's field of SymuatRef's ``uform`` (a list of one per layer, but ``fA``) by its kind:
#: ``W'_{L,1}`` → ``fA``, ``W'_{j,2}`` → ``V_j``, ``W'_{j,3}`` → ``U_j``, the bias ``b'_{j,2}`` → ``e_j``
FIELDS = {1: "fA", 2: "fV", 3: "fU", "b": "fe"}


def accessor(parameter: str, L: int, form: str) -> str:
    """The Coq term of a parameter of the unrolled form ``form`` (a ``uform``) by its name:
    ``W'_{L,1}`` → ``fA``, ``W'_{j,3}`` → ``U_j``, ``W'_{j,2}`` → ``V_j``, ``b'_{j,2}`` → ``e_j``
    (1-based ``j``)."""
    j, k = _index(parameter, L)
    return f"fA {form}" if k == 1 else f"nth [::] ({FIELDS[k]} {form}) {j - 1}"


def _index(parameter: str, L: int) -> tuple[int, int | str]:
    m = re.fullmatch(r"W'_\{(\d+),([123])\}", parameter)
    bias = re.fullmatch(r"b'_\{(\d+),2\}", parameter)
    if m is None and bias is None:
        raise Unsupported(f"a parameter {parameter} the reference does not name")
    j, k = (int(m.group(1)), int(m.group(2))) if m else (int(bias.group(1)), "b")
    if not 1 <= j <= L or (k == 1 and j != L):
        raise Unsupported(f"{parameter} is not a combined parameter of {L} layers")
    return j, k


@dataclass
class Instance:
    """A network, two inputs, and the unrolled form at each (:func:`evaluate`)."""

    blocks: list
    inputs: tuple
    forms: tuple   # symuat.expr.residual.Unrolled at each input
    digits: int    # the most digits of a numerator or denominator among the values Coq computes

    def value(self, parameter: str, n: int):
        j, k = _index(parameter, len(self.blocks))
        u = self.forms[n]
        return u.A if k == 1 else {2: u.V, 3: u.U, "b": u.e}[k][j - 1]

    def differs(self, parameter: str) -> bool:
        return bool(np.any(self.value(parameter, 0) != self.value(parameter, 1)))


def evaluate(blocks, X1, X2) -> Instance | None:
    """The unrolled form of ``blocks`` at ``X1`` and ``X2`` by the kernel's exact evaluator (the
    T10 check's: :func:`symuat.claims.transformer._exact_unrolled`; :func:`reference.exact_unrolled`),
    or None where it is not the forward pass (it always is: the recursion is exact)."""
    got = [exact_unrolled(blocks, X0) for X0 in (X1, X2)]
    if None in got:
        return None
    return Instance(list(blocks), (X1, X2), tuple(u for u, _ in got), digits([v for _, seen in got for v in seen]))


def candidates(L: int, N: int, M: int, F: int, kq: int):
    """The search's networks and input pairs, in their fixed order (:data:`SEED`, :data:`CANDIDATES`)."""
    from symuat.numeric.lora import ExactBlock

    rng = np.random.default_rng(SEED)
    draw = lambda *shape: rng.choice(np.array(VALUES, dtype=object), size=shape, p=WEIGHTS).astype(object)
    for _ in range(CANDIDATES):
        blocks = [ExactBlock(draw(M, kq), draw(M, kq), draw(M, M), draw(M, M), draw(M, F), draw(F), draw(F, M), draw(M))
                  for _ in range(L)]
        yield blocks, draw(N, M), draw(N, M)


def small_witness(parameter: str, L: int, N: int, M: int, F: int, kq: int, digits: int = MAX_DIGITS) -> Instance:
    """The first candidate (:func:`candidates`) at which ``parameter`` differs between the two
    inputs and every value has at most ``digits`` digits; :class:`Unsupported` if none."""
    _index(parameter, L)
    for blocks, X1, X2 in candidates(L, N, M, F, kq):
        inst = evaluate(blocks, X1, X2)
        if inst is not None and inst.digits <= digits and inst.differs(parameter):
            return inst
    raise Unsupported(f"no small witness at which {parameter} differs among the first {CANDIDATES} candidates")


def refutation(thm: str, parameter: str, inst: Instance, printed, which: str, kq: int,
               said: str | None = None) -> list[Exported]:
    """The negated "the same for every input" at ``inst``, and ``<thm>_ref``: at ``inst`` the
    unrolled form is the forward pass and ``parameter`` has the evaluator's values. ``said``: what
    the comment says of ``parameter`` (default: not in ``which``'s printed list ``printed``)."""
    L = len(inst.blocks)
    X1, X2 = (matrix(X) for X in inst.inputs)
    N, M = inst.inputs[0].shape
    F = np.asarray(inst.blocks[0].W1).shape[1]
    net = "[:: " + ";\n         ".join(tblock([getattr(b, n) for n in BLOCK]) for b in inst.blocks) + "]"
    shaped = f"[&& size bs == {L}%nat, all (block_shaped {M} {F} {kq}) bs, shaped {N} {M} X & shaped {N} {M} X']"
    P, P_ = (f"({accessor(parameter, L, f'(form bs {x})')})" for x in ("X", "X'"))
    said = said or (f"not in {which}'s printed list of the parameters that depend on the input: "
                    f"{', '.join(printed)}")
    comment = (f"(* {parameter} ({said}) depends on the input: for {L}-layer exact Transformers "
               f"(SymuatRef: attention 1 + (q.k)^2 normalised, sigma = softsign; N={N}, M={M}, F={F}, "
               f"query/key width {kq}: the check's shapes) it is not the same at every input of every network — "
               "refuted (over Q) at the exporter's own small witness, not the kernel's: a network and two inputs "
               "with entries in {-1, 0, 1, 2} found by a bounded deterministic search and re-checked exactly by "
               "the kernel's evaluator in Python *)")
    statement = (f"{comment}\nTheorem {thm} :\n  ~ (forall (bs : seq tblock) (X X' : qmx),\n"
                 f"      {shaped} ->\n      qmx_eqb {P} {P_}).")
    proof = f"move=> H; have E := H {net} {X1} {X2} erefl; vm_compute in E; discriminate E."
    v1, v2 = (matrix(inst.value(parameter, n)) for n in (0, 1))
    ref = (f"(* at the same instance: SymuatRef's unrolled form is the forward pass at both inputs, and "
           f"{parameter} at each input is the value the kernel's evaluator computed *)\n"
           f"Theorem {thm}_ref :\n  let bs := {net} in let X := {X1} in let X' := {X2} in\n"
           "  [&& qmx_eqb (unrolled X (form bs X)) (vec_r (tforward bs X)),\n"
           "      qmx_eqb (unrolled X' (form bs X')) (vec_r (tforward bs X')),\n"
           f"      qmx_eqb {P} {v1} &\n      qmx_eqb {P_} {v2}].")
    return [Exported(thm, statement, proof, requires=LIBRARY),
            Exported(f"{thm}_ref", ref, "vm_compute; reflexivity.", requires=LIBRARY)]


def export_exact_dependence(name: str, data: dict) -> list[Exported]:
    """For each missing parameter (the first named ``name``, the next suffixed by their position):
    the refutation at its small witness, and ``_ref``; module docstring."""
    L, sizes = int(data["L"]), data["sizes"]
    N, M, F, kq = (int(sizes[s]) for s in ("N", "M", "F", "k"))
    if not data["parameters"]:
        raise Unsupported("no parameter missing from the printed list was recorded")
    which = {"duat": "DUAT", "aaai": "AAAI"}.get(data["which"], data["which"])
    out = []
    for n, parameter in enumerate(data["parameters"]):
        inst = small_witness(parameter, L, N, M, F, kq)
        out += refutation(f"{name}_{n}" if n else name, parameter, inst, data["printed"], which, kq)
    return out


#: the record's reason for T10's certified correction (:func:`symuat.certify.run.certify`)
MEMBERS_REASON = ("each member of the corrected list depends on the input: stated as T10's refutations are "
                  "(~ (forall networks and inputs of the check's shapes, the member is the same at both inputs)) "
                  "and proved at the exporter's own small witness, not the kernel's (entries in {-1, 0, 1, 2}, a "
                  "bounded deterministic search re-checked by the kernel's evaluator); the parameters it leaves "
                  "out are fixed: W'_{L,3} = W3_L and b'_{1,2} = b2_1 by the normal form, the token-shared bias "
                  "by the checks it rests on (rests_on)")

#: the certificate kind of T10's correction (:func:`symuat.claims.transformer._t10_symuat`): the
#: members of symuat's list of the parameters that depend on the input
MEMBERS = "exact_members"


def export_members(name: str, data: dict) -> list[Exported]:
    """T10's correction, its dependences: for each member of symuat's list (``data["members"]``:
    every ``W'`` and ``b'`` the correction says depends on the input), the same statement as a
    refutation's (:func:`refutation`: not the same at every input of every network of the check's
    shapes) at its own small witness, and ``_ref``. The rest of the correction — ``W'_{L,3} = W3_L``
    and ``b'_{1,2} = b2_1`` (identities of symuat's symbolic layers), the token-shared bias (T10.c)
    — are identities and a check of their own (:func:`symuat.certify.run.certify`)."""
    L, sizes = int(data["L"]), data["sizes"]
    N, M, F, kq = (int(sizes[s]) for s in ("N", "M", "F", "k"))
    if not data["members"]:
        raise Unsupported("no member of the corrected list was recorded")
    said = f"a member of symuat's corrected list of the parameters that depend on the input: {', '.join(data['members'])}"
    out = []
    for n, parameter in enumerate(data["members"]):
        out += refutation(f"{name}_{n}", parameter, small_witness(parameter, L, N, M, F, kq, MEMBER_DIGITS), (), "symuat", kq,
                          said=said)
    return out
