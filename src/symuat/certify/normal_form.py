r"""symuat's index-level normal form of an identity, printed as a Coq term: the certificate a proof
replays.

symuat proves ``lhs = rhs`` by computing the normal form of a generic entry of each side
(:func:`symuat.kernel.index_calculus.normal_form`: terms ``c · Σ_bound Π factors`` over the free
indices) and finding the two equal. :func:`nf_term` prints that normal form as a Coq matrix over
the same index spaces (a ``fun I J => …`` of the free index components), and :func:`nf_proof`
the proof every exported identity then gets: two side lemmas and the step ::

    Lemma NAME_lhs … : lhs =m NF.  Proof. symuat_nf. Defined.
    Lemma NAME_rhs … : rhs =m NF.  Proof. symuat_nf. Defined.
    Theorem NAME … : lhs =m rhs.   Proof. eapply meq_via_nf; [exact: NAME_lhs | exact: NAME_rhs]. Defined.

``symuat_nf`` (``coq/SymuatTac.v``) rewrites the left side with the library's named lemmas into
prenex form without deltas and matches it against ``NF`` — so Coq checks that symuat's normal
form *is* the normal form of each side: a wrong certificate (a dropped delta, a wrong
coefficient, swapped indices) leaves a goal the tactic cannot close. The theorem's statement is
the same as with the direct tactic (byte-identical).

Factor kinds printed: matrix entries ``E`` (leaves, head families, convolution kernels),
Kronecker deltas ``D`` (``delta a b``), causal-mask indicators ``T`` (``(b <= a)%N%:R``),
shifted deltas ``S`` with a tap index (``sdelta b a t r``) and elementwise functions ``F``
(``f (inner normal form)``). Block indicators ``B`` and coefficients other than 1..8 raise
:class:`~symuat.certify.coq_terms.Unsupported`; the exporter then falls back to the direct tactic.

>>> from sympy import MatrixSymbol, symbols
>>> from symuat.expr.diamond import Diamond
>>> from symuat.certify.export import export_identity
>>> m, n = symbols("m n", positive=True, integer=True)
>>> W, x = MatrixSymbol("W", m, n), MatrixSymbol("x", m, 1)
>>> t = export_identity("P1", Diamond(W, x), W.T * x)
>>> t.proof_kind
'normal form'
>>> print(t.normal_form)
fun (I : idx [:: n]) (J : idx [::]) => let: (i0, _) := I in (\sum_(k0 < m) W (k0, tt) (i0, tt) * x (k0, tt) tt : R)
"""

from __future__ import annotations

import functools

import sympy as sp

from symuat.certify.coq_terms import Ctx, Unsupported, ident, int_expr
from symuat.kernel.index_calculus import IndexContext, col_space, normal_form, row_space


def family_arity(*exprs) -> dict:
    """Leaf name → how many leading indices of its entries select a member of a family (a head
    matrix ``A_i``: 1, a pair-head matrix: 2, convolution kernels ``K_t``: 1, a plain leaf: 0)."""
    out: dict = {}
    for e in exprs:
        for node in sp.preorder_traversal(e):
            kind = type(node).__name__
            if kind in ("HeadMatrix", "CausalHeadMatrix"):
                out[node.name] = 1
            elif kind == "PairHeadMatrix":
                out[node.name] = 2
            elif kind == "Conv1d":
                out[node.args[1].name] = 1
            elif kind in ("MatrixSymbol", "BlockSymbol", "PairRotation"):  # a rotation: its blocks' leaf
                out.setdefault(node.name, 0)
    return out


class _Printer:
    """Prints a normal-form key with the statement's names (its :class:`~symuat.certify.coq_terms.Ctx`)."""

    def __init__(self, ctx: Ctx, arity: dict):
        self.ctx, self.arity, self.ident = ctx, arity, ident
        self.taken = set(ctx.leaves) | set(ctx.dims) | set(ctx.funcs) | {c for c, _ in ctx.heads.values()}

    def index(self, name: str) -> str:
        if name[0] in "ij" and name[1:].isdigit():
            out = name
        elif name.startswith("_") and name[1:].isdigit():
            out = "k" + name[1:]
        elif name.startswith("~"):
            depth, k = name[1:].split("_")
            out = f"l{depth}_{k}"
        else:
            raise Unsupported(f"index name {name!r} of the normal form")
        if out in self.taken:
            raise Unsupported(f"index {out} clashes with a name of the statement")
        return out

    def tuple_(self, names) -> str:
        out = "tt"
        for n in reversed(names):
            out = f"({self.index(n)}, {out})"
        return out

    def factor(self, f) -> str:
        kind = f[0]
        if kind == "E":
            _, name, I, J = f
            if name not in self.arity:
                raise Unsupported(f"entry of {name}: no leaf of that name in the statement")
            fam = self.arity[name]
            leaf = self.ident(name)
            heads = " ".join(self.index(x) for x in I[:fam])
            return f"{leaf} " + (heads + " " if heads else "") + f"{self.tuple_(I[fam:])} {self.tuple_(J)}"
        if kind == "D":
            return f"delta {self.index(f[1])} {self.index(f[2])}"
        if kind == "T":  # [a >= b]
            return f"({self.index(f[2])} <= {self.index(f[1])})%N%:R"
        if kind == "S":  # δ_{b, a+k+c}
            _, b, a, k, c = f
            if k is None:
                raise Unsupported("a shifted delta without a tap index")
            return f"sdelta {self.index(b)} {self.index(a)} {self.index(k)} {int_expr(sp.sympify(-c), self.ctx)}"
        if kind == "F":
            fname = self.ident(f[1])
            if fname not in self.ctx.funcs:
                raise Unsupported(f"elementwise function {f[1]} not in the statement")
            return f"{fname} ({self.key(f[2])})"
        raise Unsupported(f"a factor of kind {kind} (no Coq printer)")

    def term(self, coeff, factors, bound) -> str:
        """``c · Σ_bound Π factors``; an integer coefficient ``2 ≤ c ≤ 8`` as ``c`` copies of the
        term (the prenex form unfolds a literal ``c%:R`` into ones the same way), another
        coefficient raises (the exporter then uses the direct tactic)."""
        body = " * ".join(self.factor(f) for f in factors) or "1"
        for b, d in reversed(bound):
            body = f"\\sum_({self.index(b)} < {self.ctx.dim(d)}) {body}"
        c = sp.sympify(coeff)
        if c == 1:
            return body
        if c.is_Integer and 2 <= c <= 8:
            return "(" + " + ".join([f"({body})"] * int(c)) + ")"
        raise Unsupported(f"coefficient {c} of the normal form (only 1..8 are printed)")

    def key(self, key) -> str:
        if not key:
            return "0"
        return " + ".join(self.term(*t) if not t[2] or len(key) == 1 else f"({self.term(*t)})"
                          for t in key)


def entry_nf(lhs, rhs, check: bool = True):
    """The normal form symuat found for both sides (raises if they differ: not a proved identity),
    with the free row and column indices. ``check=False``: the left side's, unchecked."""
    ic = IndexContext()
    I = ic.fresh_multi(row_space(lhs), "i")
    J = ic.fresh_multi(col_space(lhs), "j")
    left = normal_form(ic.entry(lhs, I, J), ic.dims)
    if not check:
        return left, I, J
    right = normal_form(ic.entry(rhs, I, J), ic.dims)
    if left != right:
        raise Unsupported("the two sides have different normal forms (not an identity symuat proved)")
    return left, I, J


def nf_term(ctx, lhs, rhs, key=None) -> str:
    """The normal form of ``lhs`` (= that of ``rhs``) as a Coq ``mx``: ``fun I J => …``.
    ``key`` overrides the computed normal form (the mutant tests give a wrong one)."""
    nf, I, J = entry_nf(lhs, rhs, check=key is None)
    p = _Printer(ctx, family_arity(lhs, rhs))
    body = p.key(nf.key if key is None else key)
    binders = (f"fun (I : idx {ctx.space(row_space(lhs))}) (J : idx {ctx.space(col_space(lhs))}) => ")
    lets = ""
    if I:
        lets += f"let: {_pattern(p, I)} := I in "
    if J:
        lets += f"let: {_pattern(p, J)} := J in "
    return binders + lets + f"({body} : R)"


def _pattern(p: _Printer, names) -> str:
    out = "_"
    for n in reversed(names):
        out = f"({p.index(n)}, {out})"
    return out


def side_lemmas(name: str, binders: str, left: str, right: str, nf: str) -> str:
    """The two side lemmas of a normal-form proof: ``left =m NF`` and ``right =m NF``, each proved
    by ``symuat_nf`` (no ``Timeout``: what is certified never depends on the machine's speed) and
    kept transparent (``Defined``) so their proof terms can be probed for the lemmas they apply."""
    out = ""
    for side, text in (("lhs", left), ("rhs", right)):
        out += (f"Lemma {name}_{side} {binders} :\n  {text} =m ({nf}).\n"
                f"Proof. symuat_nf. Defined.\n")
    return out


def nf_proof(name: str, args: tuple = ()) -> str:
    """The proof of ``lhs =m rhs``: both sides equal symuat's normal form (the side lemmas).
    ``args``: the theorem's binder names, to apply a side lemma to them when ``exact:`` cannot
    infer one (a leaf the side's statement does not mention: T9.range's ``W``).

    >>> nf_proof("t")
    'eapply meq_via_nf; [exact: t_lhs | exact: t_rhs].'
    >>> nf_proof("t", ("n", "W"))
    'eapply meq_via_nf; [first [exact: t_lhs | exact (t_lhs n W)] | first [exact: t_rhs | exact (t_rhs n W)]].'
    """
    if not args:
        return f"eapply meq_via_nf; [exact: {name}_lhs | exact: {name}_rhs]."
    app = " ".join(args)
    return (f"eapply meq_via_nf; [first [exact: {name}_lhs | exact ({name}_lhs {app})] | "
            f"first [exact: {name}_rhs | exact ({name}_rhs {app})]].")


@functools.lru_cache(maxsize=None)
def probed_lemmas() -> tuple:
    """The constants a proof term is probed for, in the library's order (the prenex form by
    computation, ``coq/SymuatReflect.v``'s ``prenex_sound``; a picture's flat positions
    rewritten, ``coq/SymuatFlat.v``; prenex form, deltas, closing): the lemmas of
    ``coq/SymuatTac.v`` (the ones the tactics use), of
    ``coq/SymuatWitness.v`` and ``coq/SymuatCount.v`` (witnesses, printed sums, counts),
    MathComp's ``exchange_big`` (summed indices matched up to order) and ``big_ord_recr`` (a sum
    over a concrete range expanded), and ``ring`` (the ring tactic's lemma)."""
    import re

    from symuat.certify.record import COQ_DIR

    names = []
    for lib in ("SymuatFlat.v", "SymuatBlocks.v", "SymuatTac.v", "SymuatWitness.v", "SymuatCount.v"):
        names += re.findall(r"^\s*Lemma\s+([\w']+)", (COQ_DIR / lib).read_text(), re.M)
    skip = {"R_ring_theory", "R_ring_theory_ring", "R_ring_theory_zmod", "summand_match"}
    # the prenex form by computation (coq/SymuatReflect.v): its soundness theorem is what a proof
    # term applies (the lemmas behind it are inside its own proof)
    return tuple(["prenex_sound", "kclose"] + [n for n in dict.fromkeys(names) if n not in skip]
                 + ["exchange_big", "big_ord_recr", "ring"])


_RING = "symuat_ring_ring_lemma1"  # the lemma `Add Ring symuat_ring` (PRELUDE) defines for `ring`


def probe_text(const: str, tag: str, lemmas=None) -> str:
    """Coq commands printing ``symuat-uses TAG NAME`` for each library lemma (of ``lemmas``;
    default :func:`probed_lemmas`) that the proof term of ``const`` (transparent: ``Defined``)
    references — the lemmas the accepted proof applies, not the ones a search tried and
    abandoned. Each lemma is one walk of the term."""
    items = [f"idtac \"symuat-probe {tag}\""]
    for n in (probed_lemmas() if lemmas is None else lemmas):
        c = _RING if n == "ring" else n
        items.append(f"(try match t with context [{c}] => idtac \"symuat-uses {tag} {n}\" end)")
    return (f"Goal True. let t := eval unfold {const} in {const} in\n  "
            + ";\n  ".join(items) + ". Abort.\n")


#: the library's tactics: a block from ``Ltac``/``Tactic Notation`` to the next unindented line
_TACTIC_BLOCK = r"^(?:Ltac|Tactic Notation)\b.*?(?=^\S)"


@functools.lru_cache(maxsize=None)
def announced_lemmas() -> frozenset:
    """The probed lemmas (:func:`probed_lemmas`) every use of which, in the library's tactics,
    prints ``symuat-lemma NAME`` (it is rewritten by ``symuat_rw``, or named by an ``idtac`` on
    its line), and which no exporter writes into a proof without that line: a proof term can
    contain one of them only if the run that built it printed its name
    (:func:`probe_candidates`). (``ring`` is not: the counting tactics close by it silently.)"""
    import re
    from pathlib import Path

    from symuat.certify.record import COQ_DIR

    tactics = "".join(m.group(0) for f in sorted(COQ_DIR.glob("*.v"))
                      for m in re.finditer(_TACTIC_BLOCK, f.read_text(), re.M | re.S))
    lines = tactics.splitlines()
    exporters = "".join(f.read_text() for f in sorted(Path(__file__).parent.glob("*.py"))
                        if f.name != "normal_form.py")
    out = set()
    for n in probed_lemmas():
        word = re.compile(rf"(?<![\w']){re.escape(n)}(?![\w'])")
        uses = [line for line in lines if word.search(line)]
        printed = all(re.search(rf"symuat_rw {re.escape(n)}\b", line) or f'"symuat-lemma {n}"' in line
                      for line in uses)
        written = [line for line in exporters.splitlines() if word.search(line)]
        if printed and all(f"symuat-lemma {n}" in line for line in written):
            out.add(n)  # (a lemma no tactic and no exporter names is applied only inside library proofs)
    return frozenset(out)


def probe_candidates(log: str) -> list:
    """The lemmas worth probing a theorem's proof terms for, given ``log``, the output of the
    tactics that built them: those the run announced (``symuat-lemma NAME``), and every lemma a
    tactic may apply without announcing it; in the library's order. The same answer as probing
    every lemma, at a fraction of the walks (each is a walk of the whole term)."""
    import re

    said = set(re.findall(r"^\s*symuat-lemma (\S+)", log, re.M))
    return [n for n in probed_lemmas() if n in said or n not in announced_lemmas()]
