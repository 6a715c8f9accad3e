r"""SymPy statement → Coq theorem over the library in ``coq/`` (SymuatMx, SymuatTac).

:func:`export_identity` turns ``lhs = rhs`` (the matrix expressions a check's
:func:`~symuat.kernel.decide.check_identity` proved) into a Coq theorem stating exactly that
identity, entrywise, for symbolic dimensions: every dimension is a universally quantified
``nat``, every leaf a matrix of the index spaces symuat's index calculus gives it
(:func:`~symuat.kernel.index_calculus.row_space`), every operation the library's definition
of it (its index rule). The proof is one tactic, the same for every theorem
(``symuat_entry``): the index-level normal form of both sides as rewrites by the library's
named lemmas, then matching of the summed indices and ``ring``.

A node the library has no definition for raises :class:`~symuat.certify.coq_terms.Unsupported`
(with the reason); the terms are written by :mod:`symuat.certify.coq_terms`.

>>> from sympy import MatrixSymbol, symbols
>>> from symuat.expr.diamond import Diamond
>>> m, n = symbols("m n", positive=True, integer=True)
>>> W, x = MatrixSymbol("W", m, n), MatrixSymbol("x", m, 1)
>>> print(export_identity("P1", Diamond(W, x), W.T * x).statement)
Theorem P1 (m n : nat) (W : mx R [:: m] [:: n]) (x : mx R [:: m] [::]) :
  diamond W x =m mul (tr W) x.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import sympy as sp

from symuat.certify import normal_form
from symuat.certify.coq_terms import Ctx, Unsupported, ident, strip, term
from symuat.kernel.index_calculus import col_space, row_space


#: the longest statement sent to Coq (characters of the theorem); the longest certified one is
#: under 1000 (H7, 947), the one measured longer (X3.sandwich, 2384) did not close in 600 s, with
#: the direct tactic and with the normal-form replay alike (2026-11-24, quiet machine): a
#: deterministic rule on the statement, not a timeout, keeps it out
MAX_STATEMENT = 2000


@dataclass
class Exported:
    name: str
    statement: str   # the Coq theorem statement (without proof)
    proof: str
    #: "normal form" (the proof replays symuat's normal form, :mod:`symuat.certify.normal_form`)
    #: or "direct" (the tactic alone, with ``fallback`` saying why)
    proof_kind: str = "direct"
    normal_form: str = ""   # the certificate (a Coq ``mx``), for a "normal form" proof
    fallback: str = ""
    #: Coq text placed before the theorem (a normal-form proof's two side lemmas), and the constants whose proof terms are probed for the library
    #: lemmas they apply: (constant, tag) — tag "lhs"/"rhs" (the sides) or "direct"
    sides: str = ""
    probes: tuple = ()

    @property
    def text(self) -> str:
        return (self.sides
                + f"{self.statement}\nProof. idtac \"symuat-begin {self.name}\". {self.proof} Qed.\n")

    def batch_text(self, timeout: int | None = None) -> str:
        """The theorem as one entry of a batch file: the proof (with no ``Timeout``: no wall clock
        decides what is certified; ``timeout`` is not used, the process limit is the batch's,
        :func:`symuat.certify.run.compile_batch`), then a marker (printed only once ``Defined`` — the kernel's check — has passed), the library
        lemmas the accepted proof terms reference (:func:`symuat.certify.normal_form.probe_text`;
        ``Defined`` keeps the terms inspectable) and the theorem's assumptions (``Print
        Assumptions``: an ``Axioms:`` section means not certified)."""
        probes = self.probes  # an identity's (export_identity); none for other kinds
        return (self.sides
                + f"{self.statement}\nProof. idtac \"symuat-begin {self.name}\". "
                f"{self.proof} Defined.\nGoal True. idtac \"symuat-qed {self.name}\". Abort.\n"
                + "".join(normal_form.probe_text(c, tag) for c, tag in probes)
                + f"Print Assumptions {self.name}.\n")

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.statement.encode()).hexdigest()[:16]


def export_identity(name: str, lhs, rhs, proof: str | None = None, nf_key=None, hypotheses=()) -> Exported:
    """The Coq theorem ``name`` stating ``lhs = rhs`` entrywise for all dimensions.

    Its proof replays symuat's normal form (:func:`symuat.certify.normal_form.nf_proof`) unless
    ``proof`` is given or the normal form has a factor with no Coq printer: then the direct
    tactic ``symuat_entry`` (``proof_kind`` "direct", ``fallback`` the reason). ``nf_key``
    replaces symuat's normal form as the certificate (the mutant tests give a wrong one).

    ``hypotheses`` (the :class:`~symuat.kernel.hypotheses.LineSums` the identity was proved
    under) become premises of the theorem (:func:`premise`), used by the direct proof
    (``symuat_entry using (symuat_line Hl0; …)``); one the exporter cannot state raises
    :class:`Unsupported`."""
    rs_l, cs_l, rs_r, cs_r = row_space(lhs), col_space(lhs), row_space(rhs), col_space(rhs)
    if (rs_l, cs_l) != (rs_r, cs_r):
        raise Unsupported(f"index spaces differ: {rs_l}×{cs_l} against {rs_r}×{cs_r}")
    ctx = Ctx()
    left, right = term(lhs, ctx), term(rhs, ctx)
    binders = binders_of(ctx)
    names = []
    for k, hyp in enumerate(dict.fromkeys(hypotheses)):
        hname = f"Hl{k}"
        while hname in ctx.leaves or hname in ctx.dims or hname in ctx.funcs:
            hname += "'"
        binders.append(f"({hname} : {premise(hyp, ctx)})")
        names.append(hname)
    if names:
        proof = "symuat_entry using (" + "; ".join(f"symuat_line {h}" for h in names) + ")."
    head = f"Theorem {name} " + " ".join(binders) + " :"
    body = f"  {strip(left)} =m {strip(right)}."
    if len(head) + len(body) > MAX_STATEMENT:
        raise Unsupported(
            f"the statement is {len(head) + len(body)} characters, over {MAX_STATEMENT}: the entrywise "
            "tactic expands it into a prenex sum that does not close in reasonable time "
            "(measured on X3.sandwich: not closed in 600 s)")
    if proof is not None:
        return Exported(name, head + "\n" + body, proof, probes=((name, "direct"),))
    try:
        nf = normal_form.nf_term(ctx, lhs, rhs, key=nf_key)
    except Unsupported as exc:
        return Exported(name, head + "\n" + body, "symuat_entry.", fallback=str(exc),
                        probes=((name, "direct"),))
    sides = normal_form.side_lemmas(name, " ".join(binders), strip(left), strip(right), nf)
    return Exported(name, head + "\n" + body, normal_form.nf_proof(name, binder_names(ctx)), "normal form", nf, "",
                    sides, ((f"{name}_lhs", "lhs"), (f"{name}_rhs", "rhs")))


def _binder_groups(ctx: Ctx) -> list[tuple[list[str], str]]:
    """A statement's binders as (names, type), in order, from what its terms bound (``ctx``): the
    dimensions, the elementwise functions, the range hypotheses of fixed positions, the leaves."""
    out = [(sorted(ctx.dims), "nat")] if ctx.dims else []
    out += [([f], t) for f, t in sorted(ctx.funcs.items())]
    out += [([hyp], t) for hyp, t in sorted(ctx.ranges.items())]
    out += [([leaf], t) for leaf, t in ctx.leaves.items()]
    return out


def binders_of(ctx: Ctx) -> list[str]:
    """A statement's binders (:func:`_binder_groups`), as Coq writes them: ``(N M : nat)``, …"""
    return [f"({' '.join(names)} : {t})" for names, t in _binder_groups(ctx)]


def binder_names(ctx: Ctx) -> tuple[str, ...]:
    """The names :func:`binders_of` binds, in their order (a lemma stated with those binders,
    applied to them)."""
    return tuple(n for names, _ in _binder_groups(ctx) for n in names)


_LEAF_TYPE = re.compile(r"^((?:'I_\S+ -> )*)mx R (\[[^\]]*\]) (\[[^\]]*\])$")


def _dims_of(space: str) -> list[str]:
    inner = space[len("[::"):-1].strip()
    return [d.strip() for d in inner.split(";")] if inner else []


def premise(hyp, ctx: Ctx) -> str:
    r"""A hypothesis on the lines of a leaf (:class:`~symuat.kernel.hypotheses.LineSums`) as a Coq
    proposition over the leaf the statement declares — for every member of a family, exactly
    the sum symuat's rewrite rule replaces: rows :math:`\sum_b A_{ab}` = value (causal:
    :math:`\sum_b A_{ab}[b\le a]`), columns :math:`\sum_a A_{ab}` (causal: :math:`[b\le a]`).

    >>> from symuat.kernel.hypotheses import LineSums
    >>> ctx = Ctx(leaves={"H": "'I_h -> mx R [:: N] [:: N]"})
    >>> print(premise(LineSums("H", causal=True), ctx))
    forall (i : 'I_h) (a : 'I_N), \sum_(b < N) H i (a, tt) (b, tt) * (b <= a)%N%:R = 1
    """
    from symuat.kernel.hypotheses import LineSums

    if not isinstance(hyp, LineSums):
        raise Unsupported(f"no Coq statement for the hypothesis {hyp}")
    what = f"the hypothesis {hyp.latex()}"
    leaf = ident(hyp.name)
    typ = ctx.leaves.get(leaf)
    if typ is None:
        raise Unsupported(f"{what} is on {hyp.name}, which the statement does not mention")
    m = _LEAF_TYPE.match(typ)
    if m is None:
        raise Unsupported(f"{what}: no line sum for a leaf of type {typ}")
    value = sp.Rational(hyp.value)
    if not value.is_Integer:
        raise Unsupported(f"{what}: the value {value} is not an integer (the carrier is any commutative ring)")
    v = int(value)
    vtext = "1" if v == 1 else "0" if v == 0 else (f"{v}%:R" if v > 0 else f"({v})%:~R")
    fams = [f[len("'I_"):].strip() for f in m.group(1).split(" -> ") if f.strip()]
    rows, cols = _dims_of(m.group(2)), _dims_of(m.group(3))
    taken = set(ctx.leaves) | set(ctx.dims) | set(ctx.funcs)

    def fresh(base):
        out = base
        while out in taken:
            out += "'"
        taken.add(out)
        return out

    binders, args = [], []
    for k, f in enumerate(fams):
        i = fresh("i" if k == 0 else f"i{k}")
        binders.append(f"({i} : 'I_{f})")
        args.append(i)
    if hyp.lines == "rows":
        if len(cols) != 1:
            raise Unsupported(f"{what}: the columns of {hyp.name} are not one index ({m.group(3)})")
        a, b = fresh("a"), fresh("b")
        n = cols[0]
        if len(rows) == 1:
            binders.append(f"({a} : 'I_{rows[0]})")
            row = f"({a}, tt)"
        elif hyp.causal:
            raise Unsupported(f"{what}: a causal mask on rows that are not one index ({m.group(2)})")
        elif rows:
            binders.append(f"({a} : idx {m.group(2)})")
            row = a
        else:
            row = "tt"
        entry, summed = f"{leaf} {' '.join(args + [row])} ({b}, tt)", b
    else:
        if len(rows) != 1 or len(cols) != 1:
            raise Unsupported(f"{what}: the lines of {hyp.name} are not single indices ({m.group(2)}×{m.group(3)})")
        a, b = fresh("a"), fresh("b")   # the column b fixed, the row a summed
        binders.append(f"({b} : 'I_{cols[0]})")
        n = rows[0]
        entry, summed = f"{leaf} {' '.join(args + [f'({a}, tt)'])} ({b}, tt)", a
    # causal: the lower triangle, row index a ≥ column index b
    mask = f" * ({b} <= {a})%N%:R" if hyp.causal else ""
    return (f"forall {' '.join(binders)}, " if binders else "") + \
        f"\\sum_({summed} < {n}) {entry}{mask} = {vtext}"



PRELUDE = """From mathcomp Require Import all_ssreflect all_algebra.
From Coq Require Import Setoid Morphisms Ring.
From Symuat Require Import SymuatMx SymuatReflect SymuatBlocks SymuatTac SymuatWitness SymuatCount SymuatDepth SymuatFlat SymuatRotary.
Import GRing.Theory.
Local Open Scope ring_scope.
Section Certified.
Variable R : comRingType.
Add Ring symuat_ring : (R_ring_theory_ring R).
Add Ring symuat_ring_zmod : (R_ring_theory_zmod R).
"""


def coq_file(theorems: list[Exported]) -> str:
    return PRELUDE + "\n".join(t.text for t in theorems) + "End Certified.\n"


def batch_file(theorems: list[Exported], timeout: int | None = None) -> tuple[str, list[tuple[int, str]]]:
    """Many theorems in one file (one ``coqc`` start, MathComp loaded once) and the first line of
    each theorem, to name the theorem a Coq error points at."""
    text, starts = PRELUDE, []
    for t in theorems:
        starts.append((text.count("\n") + 1, t.name))
        text += t.batch_text(timeout)
    return text + "End Certified.\n", starts
