r"""The one-pair step of RoPE's relative position as a Coq theorem (``coq/SymuatRotary.v``).

X2.rel.all and WP8.relative conclude :math:`R_n^TR_m=R_{m-n}` at every width from two steps: the
placement of the pairs, an identity of matrices with generic 2×2 blocks (exported as every
identity), and one 2×2 block at symbolic angles, which SymPy proves by the angle-addition formulas
alone (``expand_trig``; :math:`\cos^2+\sin^2=1` is not used). The check records the second step
(kind ``"pair_rotation"``): the block's ``orientation`` — ``"column"``,
:math:`\begin{pmatrix}\cos&-\sin\\\sin&\cos\end{pmatrix}` (:func:`symuat.expr.decoder.rotation`,
Coq's ``rot2``), or ``"row"``, :math:`\begin{pmatrix}\cos&\sin\\-\sin&\cos\end{pmatrix}`
(:func:`symuat.kernel.decide.rotations.block`, ``rot2_row``) — and its ``angles`` ``(a, b)``,
each multiplied by a ``frequency`` when one is given (positions :math:`n, n'` and :math:`\theta`).
:func:`export_pair_rotation` states it over any commutative ring, ``c s : R -> R`` standing for
cos and sin, with the addition formulas for a difference as the theorem's premises (``Hc``,
``Hs``): the one trigonometric fact the step uses, said in a comment above the theorem and in the
record's reason (:data:`PREMISES`).

>>> t, = export_pair_rotation("x2", {"orientation": "column", "angles": ("n", "n'"), "frequency": "theta"})
>>> print(t.statement.splitlines()[-1])
  mul (tr (rot2 c s (n * theta))) (rot2 c s (n' * theta)) =m rot2 c s ((n' - n) * theta).
>>> t.proof
'symuat_rot2 Hc Hs.'
"""

from __future__ import annotations

from symuat.certify.coq_terms import Unsupported, ident
from symuat.certify.export import Exported

#: what the theorem assumes of cos and sin (its premises), as the record's reason says it
PREMISES = ("the one-pair step states cos and sin as functions c, s of the ring with the addition formulas "
            "for a difference as premises (c(b−a) = c a·c b + s a·s b, s(b−a) = c a·s b − s a·c b), the one "
            "trigonometric fact SymPy's expansion uses")

_BLOCK = {"column": "rot2", "row": "rot2_row"}


def export_pair_rotation(name: str, data: dict) -> list[Exported]:
    """``ρ(a)ᵀρ(b) = ρ(b − a)`` for one 2×2 block at symbolic angles, under the addition formulas."""
    block = _BLOCK.get(data.get("orientation"))
    if block is None:
        raise Unsupported(f"a 2×2 rotation block oriented {data.get('orientation')!r}")
    a, b = (ident(x) for x in data["angles"])
    freq = ident(data["frequency"]) if data.get("frequency") else None
    angle = (lambda x: f"{x} * {freq}") if freq else (lambda x: x)
    diff = f"({b} - {a}) * {freq}" if freq else f"{b} - {a}"
    names = " ".join([a, b] + ([freq] if freq else []))
    statement = (
        "(* one 2×2 block at symbolic angles; c, s stand for cos, sin: the addition formulas for a\n"
        "   difference are the premises, the only trigonometric fact used *)\n"
        f"Theorem {name} (c s : R -> R)\n"
        "  (Hc : forall a b, c (b - a) = c a * c b + s a * s b)\n"
        f"  (Hs : forall a b, s (b - a) = c a * s b - s a * c b) ({names} : R) :\n"
        f"  mul (tr ({block} c s ({angle(a)}))) ({block} c s ({angle(b)})) =m {block} c s ({diff}).")
    return [Exported(name, statement, "symuat_rot2 Hc Hs.")]
