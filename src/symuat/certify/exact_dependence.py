r"""T10's refutations: a combined parameter missing from a printed list depends on the input → Coq,
on the exact reference Transformer of ``coq/SymuatRef.v``.

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
the check's shapes::

    ~ (forall (bs : seq tblock) (X X' : qmx),
         [&& size bs == 3, all (block_shaped 2 2 2) bs, shaped 2 2 X & shaped 2 2 X'] ->
         qmx_eqb (P (form bs X)) (P (form bs X')))

to be proved at the recorded network and inputs by computation (``vm_compute``, over Coq's binary
``Q``), and beside it ``<name>_ref``: at that instance ``P`` at each input is the value the kernel
computed, compared by fingerprint (``residues``: every entry's numerator and denominator modulo the
prime 2^31 - 1; the entries have up to ~800-digit numerators and denominators, the full values
would be ~40,000 characters, over the tier's statement budget). That ``P`` is not in the printed
list is read off the list (the theorem's comment names both); the model is the check's exact
stand-in for the paper's softmax Transformer (the float64 softmax re-check is numeric, not in Coq).

**Not sent** (:data:`NOT_SENT`, the record's reason): the theorems compile in principle, but the
computation at the kernel's witness costs minutes of CPU per theorem (SymuatRef's ``form`` at one
input: 56 s measured; T10[duat]'s theorem alone did not finish in 420 s wall, loaded machine), over the
tier's time.
A faster evaluation (reduction only where needed, or primitive integers) would let
``refutation.export_check_refutation`` call :func:`export_exact_dependence` instead of raising.
"""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np

from symuat.certify.coq_terms import Unsupported
from symuat.certify.export import Exported
from symuat.certify.reference import LIBRARY, matrix, row

#: the certificate kind T10's checks record
KIND = "exact_dependence"

#: why the tier does not send these theorems (the record's reason): measured 2026-11-27
NOT_SENT = ("T10's refutation is stated over coq/SymuatRef.v (certify/exact_dependence.py: ~ (forall 3-layer exact "
            "networks and inputs of the check's shapes, the missing parameter is the same at both inputs)) but not sent: "
            "proving it at the kernel's witness by vm_compute takes minutes of CPU (SymuatRef's form at one input alone: "
            "56 s; T10[duat]'s theorem alone, without its _ref, did not finish in 420 s wall on a loaded machine; every Q "
            "operation is followed by Qred, whose binary gcd on the ~5,000-bit entries dominates; "
            "native_compute is not available), over the tier's time")

_BLOCK = ("WQ", "WK", "WV", "WO", "W1", "b1", "W2", "b2")


def accessor(parameter: str, L: int, form: str) -> str:
    """The Coq term of a parameter of the unrolled form ``form`` (a ``uform``) by its name:
    ``W'_{L,1}`` → ``fA``, ``W'_{j,3}`` → ``U_j``, ``W'_{j,2}`` → ``V_j`` (1-based ``j``)."""
    m = re.fullmatch(r"W'_\{(\d+),([123])\}", parameter)
    if m is None:
        raise Unsupported(f"a parameter {parameter} the reference does not name")
    j, k = int(m.group(1)), m.group(2)
    if not 1 <= j <= L or (k == "1" and j != L):
        raise Unsupported(f"{parameter} is not a combined parameter of {L} layers")
    return f"fA {form}" if k == "1" else f"nth [::] ({'fU' if k == '3' else 'fV'} {form}) {j - 1}"


#: the modulus of the ``_ref`` fingerprint (``residues`` in SymuatRef.v): the prime 2^31 - 1
PRIME = 2**31 - 1


def residues(value) -> str:
    """The kernel's value as ``residues PRIME`` computes it in Coq: each entry's numerator and
    denominator (reduced, denominator positive) modulo :data:`PRIME`, row by row."""
    out = []
    for x in np.asarray(value, dtype=object).reshape(-1):
        f = Fraction(x)
        out += [f.numerator % PRIME, f.denominator % PRIME]
    return "[:: " + "; ".join(f"{n}%Z" for n in out) + "]"


def _block(b: dict) -> str:
    return "(TBlock " + " ".join(row(b[n]) if np.asarray(b[n]).ndim == 1 else matrix(b[n]) for n in _BLOCK) + ")"


def _digits(*values) -> int:
    """The most digits of an entry's numerator or denominator among ``values``, rounded to 100."""
    n = max(max(len(str(abs(Fraction(x).numerator))), len(str(Fraction(x).denominator)))
            for v in values for x in np.asarray(v, dtype=object).reshape(-1))
    return max(100, round(n, -2))


def export_exact_dependence(name: str, data: dict) -> list[Exported]:
    """For each missing parameter (the first named ``name``, the next suffixed by their position):
    the negated "the same for every input", proved at the recorded instance, and ``_ref`` (the
    kernel's values); module docstring."""
    L, sizes = int(data["L"]), data["sizes"]
    N, M, F, kq = (int(sizes[s]) for s in ("N", "M", "F", "k"))
    if len(data["blocks"]) != L:
        raise Unsupported(f"{len(data['blocks'])} blocks recorded for {L} layers")
    if not data["parameters"]:
        raise Unsupported("no parameter missing from the printed list was recorded")
    X1, X2 = (matrix(X) for X in data["inputs"])
    net = "[:: " + ";\n         ".join(_block(b) for b in data["blocks"]) + "]"
    shaped = f"[&& size bs == {L}%nat, all (block_shaped {M} {F} {kq}) bs, shaped {N} {M} X & shaped {N} {M} X']"
    which = {"duat": "DUAT", "aaai": "AAAI"}.get(data["which"], data["which"])
    out = []
    for n, (parameter, (v1, v2)) in enumerate(data["parameters"].items()):
        thm = f"{name}_{n}" if n else name
        P, P_ = (f"({accessor(parameter, L, f'(form bs {x})')})" for x in ("X", "X'"))
        comment = (f"(* {parameter} (not in {which}'s printed list of the parameters that depend on the input: "
                   f"{', '.join(data['printed'])}) depends on the input: for {L}-layer exact Transformers "
                   f"(SymuatRef: attention 1 + (q.k)^2 normalised, sigma = softsign; N={N}, M={M}, F={F}, "
                   f"query/key width {kq}) it is not the same at every input of every network — refuted at the "
                   "kernel's network and two inputs (over Q) *)")
        statement = (f"{comment}\nTheorem {thm} :\n  ~ (forall (bs : seq tblock) (X X' : qmx),\n"
                     f"      {shaped} ->\n      qmx_eqb {P} {P_}).")
        proof = f"move=> H; have E := H {net} {X1} {X2} erefl; vm_compute in E; discriminate E."
        out.append(Exported(thm, statement, proof, requires=LIBRARY))
        ref = (f"(* at the same instance: {parameter} at each input is the value the kernel computed, compared by "
               f"fingerprint (the values have ~{_digits(v1, v2)} digits): every entry's numerator and denominator "
               f"modulo the prime {PRIME} *)\n"
               f"Theorem {thm}_ref :\n  let bs := {net} in let X := {X1} in let X' := {X2} in\n"
               f"  zseq_eqb (residues {PRIME}%Z {P}) {residues(v1)} &&\n"
               f"  zseq_eqb (residues {PRIME}%Z {P_}) {residues(v2)}.")
        out.append(Exported(f"{thm}_ref", ref, "vm_compute; reflexivity.", requires=LIBRARY))
    return out
