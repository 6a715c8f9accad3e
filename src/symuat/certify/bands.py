r"""Banded attention masks → Coq: "two windows are the same ``N×N`` mask", as the band procedure
concluded it (:func:`~symuat.kernel.decide.bands.check_same_mask`, certificate
:data:`~symuat.kernel.decide.bands.BAND_MASKS`).

Token ``n`` attends to ``n′`` under the band ``lo ≤ n − n′ ≤ hi`` (the offset over the integers,
``lo``/``hi`` integers or ``a·w + b`` in the window ``w``, a missing side unbounded): the mask's
entry ``(n, n′)`` is that boolean (:func:`band_text`). Two bands are the same mask for every
``N`` and every window ``w ≥ 1`` iff these booleans agree at every pair of tokens of every length:

* a refuted sameness is ``~ (forall N w, 0 < w -> forall n n' : 'I_N, inA = inB)``, proved at the
  procedure's sizes and entry by computation (``vm_compute``: the two booleans differ there); a
  "counterexample" at which the masks agree leaves ``true = true`` or ``false = false``, which the
  proof cannot refute — Coq rejects it;
* a proved sameness is the same statement without the negation, for every ``N``, ``w``; it is
  exported when the two bands have the same bounds (their booleans are then the same term, and
  the proof is ``by []``), else not (:class:`~symuat.certify.coq_terms.Unsupported`).

>>> from symuat.kernel.decide.bands import Band, WINDOW as w
>>> a, b = Band(0, w, "0 ≤ n−n′ ≤ w"), Band(0, w - 1, "0 ≤ n−n′ < w")
>>> (t,) = export_band_masks("r", {"a": a, "b": b, "same": False, "sizes": {"N": 2, "w": 1}, "entry": (1, 0)})
>>> print(t.statement)
Theorem r :
  (* the N×N masks 0 ≤ n−n′ ≤ w and 0 ≤ n−n′ < w (n attends to n′ iff lo ≤ n − n′ ≤ hi) are not the same for every N, w *)
  ~ (forall (N w : nat), (0 < w)%N -> forall (n n' : 'I_N),
     ((0%:Z <= n%:Z - n'%:Z) && (n%:Z - n'%:Z <= w%:Z)) = ((0%:Z <= n%:Z - n'%:Z) && (n%:Z - n'%:Z <= ((- 1%:Z) + w%:Z)))).
>>> print(t.proof)
move=> H; move: (H 2%N 1%N isT (@Ordinal 2 1 isT) (@Ordinal 2 0 isT)); vm_compute; by case.
"""

from __future__ import annotations

import sympy as sp

from symuat.certify.coq_terms import Ctx, Unsupported, int_expr
from symuat.certify.export import Exported

#: the offset ``n − n′`` over the integers (``n n' : 'I_N``)
OFFSET = "n%:Z - n'%:Z"


def band_text(band, ctx: Ctx) -> str:
    """Whether ``n`` attends to ``n′`` under ``band``: ``lo ≤ n − n′ ≤ hi`` (a missing side: no
    conjunct; no side: ``true``), the bounds as MathComp ``int`` (:func:`~symuat.certify.coq_terms.int_expr`)."""
    parts = []
    if band.lo is not None:
        parts.append(f"({int_expr(sp.sympify(band.lo), ctx)} <= {OFFSET})")
    if band.hi is not None:
        parts.append(f"({OFFSET} <= {int_expr(sp.sympify(band.hi), ctx)})")
    return "(" + " && ".join(parts) + ")" if len(parts) > 1 else (parts[0] if parts else "true")


def export_band_masks(name: str, data: dict) -> list[Exported]:
    """The theorem for ``data`` (a :data:`~symuat.kernel.decide.bands.BAND_MASKS` certificate): the
    two bands' masks equal for every ``N``, ``w ≥ 1`` (``same``), or not (at ``sizes``, ``entry``)."""
    a, b = data["a"], data["b"]
    ctx = Ctx()
    left, right = band_text(a, ctx), band_text(b, ctx)
    names = f"{a.name or 'the first band'} and {b.name or 'the second'}"
    body = f"forall (N w : nat), (0 < w)%N -> forall (n n' : 'I_N),\n     {left} = {right}"
    if data["same"]:
        if left != right:
            raise Unsupported(f"equal bands with different bounds ({a.latex()}; {b.latex()}): no proof by computation")
        statement = (f"Theorem {name} :\n  (* the N×N masks {names} (n attends to n′ iff lo ≤ n − n′ ≤ hi) "
                     f"are the same for every N, w *)\n  {body}.")
        return [Exported(name, statement, "by [].")]
    sizes, (n, n2) = data["sizes"], data["entry"]
    N, w = int(sizes["N"]), int(sizes["w"])
    if not (0 <= n < N and 0 <= n2 < N and w > 0):
        raise Unsupported(f"the entry ({n}, {n2}) is not a pair of tokens of length {N} (w = {w})")
    statement = (f"Theorem {name} :\n  (* the N×N masks {names} (n attends to n′ iff lo ≤ n − n′ ≤ hi) "
                 f"are not the same for every N, w *)\n  ~ ({body}).")
    proof = (f"move=> H; move: (H {N}%N {w}%N isT (@Ordinal {N} {n} isT) (@Ordinal {N} {n2} isT)); "
             "vm_compute; by case.")
    return [Exported(name, statement, proof)]
