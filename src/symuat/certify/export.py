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
from symuat.certify.coq_terms import Ctx, Unsupported, fresh_name, ident, strip, term, unit_premise
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
    #: a library file the theorem needs imported and that the section's ring ``R`` must not
    #: meet (``"SymuatArith"``: statements over Coq's ``Q``): the theorem is placed after the
    #: section, below that file's ``Require Import`` (:func:`batch_file`)
    requires: str = ""

    @property
    def text(self) -> str:
        return (self.sides
                + f"{self.statement}\nProof. idtac \"symuat-begin {self.name}\". {self.proof} Qed.\n")

    def batch_text(self, timeout: int | None = None) -> str:
        """The theorem as one entry of a batch file: the proof (with no ``Timeout``: no wall clock
        decides what is certified; ``timeout`` is not used, the process limit is the batch's,
        :func:`symuat.certify.run.compile_batch`), then a marker (printed only once ``Defined`` — the kernel's check — has passed).
        Its assumptions are printed once for the whole batch (:func:`batch_file`); the library
        lemmas its accepted proof terms reference (``Defined`` keeps them inspectable) are read
        once the batch has compiled (:func:`probe_file`)."""
        return (self.sides
                + f"{self.statement}\nProof. idtac \"symuat-begin {self.name}\". "
                f"{self.proof} Defined.\nGoal True. idtac \"symuat-qed {self.name}\". Abort.\n")

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
    if names or ctx.inverses:
        # a size's inverse (1/M): constant sums made products (``M%:R * …``) that the closing
        # ``ring`` reduces by the premises ``M%:R * inv_M = 1`` (``symuat_units``)
        lines = [f"symuat_line {h}" for h in names]
        proof = "symuat_entry using (" + "; ".join(lines or ["idtac"]) + ")."
        if ctx.inverses:
            # linear in the inverses (symuat's normal form proves it with each 1/D a free scalar): the
            # premises are not used; else the terms that cancel by them are brought into one sum
            units = "symuat_units_merged" if uses_inverse(lhs, rhs, ctx) else "symuat_units"
            proof = "symuat_entry using (" + "; ".join(lines + [units]) + ")."
    head = f"Theorem {name} " + " ".join(binders) + " :"
    if ctx.inverses:
        head += "\n  (* " + ", ".join(f"{inv} = 1/{ctx.dim(ctx.inverses[inv])}" for inv in ctx.inverses) + \
            ": over any commutative ring R in which it is a unit (premise H…; over ℝ every size ≥ 1 is one) *)"
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


def uses_inverse(lhs, rhs, ctx: Ctx) -> bool:
    """Whether ``lhs = rhs`` needs ``D · (1/D) = 1`` for a size inverse ``1/D`` of ``ctx`` — it does
    not when symuat's normal form proves it with every such ``1/D`` replaced by a free scalar.

    >>> import sympy as sp
    >>> from sympy import Identity, MatMul, MatrixSymbol, OneMatrix
    >>> M = sp.Symbol("M", positive=True, integer=True)
    >>> C = Identity(M) + MatMul(-1 / M, OneMatrix(M, M))
    >>> X = MatrixSymbol("X", M, M)
    >>> ctx = Ctx(); _ = term(C, ctx)
    >>> uses_inverse(X * C * C, X * C, ctx), uses_inverse(X * C + X, X + X * C, ctx)
    (True, False)
    """
    from symuat.kernel.index_calculus import _compare_entries

    free = {sp.Pow(den, -1): sp.Symbol(f"_{name}") for name, den in ctx.inverses.items()}
    return not _compare_entries(lhs.xreplace(free), rhs.xreplace(free)).equal


def _binder_groups(ctx: Ctx) -> list[tuple[list[str], str]]:
    """A statement's binders as (names, type), in order, from what its terms bound (``ctx``): the
    dimensions, the elementwise functions, the range hypotheses of fixed positions, the leaves."""
    out = [(sorted(ctx.dims), "nat")] if ctx.dims else []
    for inv in ctx.inverses:  # 1/D: an element of R and the premise that it is D's inverse
        out += [([inv], "R"), ([unit_name(inv)], unit_premise(inv, ctx))]
    out += [([f], t) for f, t in sorted(ctx.funcs.items())]
    out += [([hyp], t) for hyp, t in sorted(ctx.ranges.items())]
    out += [([leaf], t) for leaf, t in ctx.leaves.items()]
    return out


def unit_name(inv: str) -> str:
    """The name of the premise that the inverse ``inv`` (:func:`~symuat.certify.coq_terms.inverse`)
    is one: ``Hinv_M : M%:R * inv_M = 1``."""
    return "H" + inv


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

    binders, args = [], []
    for k, f in enumerate(fams):
        i = fresh_name("i" if k == 0 else f"i{k}", taken)
        binders.append(f"({i} : 'I_{f})")
        args.append(i)
    if hyp.lines == "rows":
        if len(cols) != 1:
            raise Unsupported(f"{what}: the columns of {hyp.name} are not one index ({m.group(3)})")
        a, b = fresh_name("a", taken), fresh_name("b", taken)
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
        a, b = fresh_name("a", taken), fresh_name("b", taken)   # the column b fixed, the row a summed
        binders.append(f"({b} : 'I_{cols[0]})")
        n = rows[0]
        entry, summed = f"{leaf} {' '.join(args + [f'({a}, tt)'])} ({b}, tt)", a
    # causal: the lower triangle, row index a ≥ column index b
    mask = f" * ({b} <= {a})%N%:R" if hyp.causal else ""
    return (f"forall {' '.join(binders)}, " if binders else "") + \
        f"\\sum_({summed} < {n}) {entry}{mask} = {vtext}"



#: the libraries a batch loads (and a file that loads a compiled batch, :func:`probe_file`)
#: — MathComp's modules the theorems use (``rat``: witnesses over ℚ, ``mxalgebra``: ``\rank``), not
#: ``all_algebra`` (each coqc's load 0.75 → 0.55 s user CPU; the same statements, in all_algebra's order)
IMPORTS = """From mathcomp Require Import all_ssreflect ssralg ssrnum ssrint rat matrix mxalgebra zmodp.
From Coq Require Import Setoid Morphisms Ring.
From Symuat Require Import SymuatMx SymuatReflect SymuatBlocks SymuatTac SymuatWitness SymuatCount SymuatDepth SymuatFlat SymuatUnroll SymuatRotary.
"""

PRELUDE = IMPORTS + """Import GRing.Theory.
Local Open Scope ring_scope.
Section Certified.
Variable R : comRingType.
Add Ring symuat_ring : (R_ring_theory_ring R).
Add Ring symuat_ring_zmod : (R_ring_theory_zmod R).
"""


def coq_file(theorems: list[Exported]) -> str:
    return PRELUDE + "\n".join(t.text for t in theorems) + "End Certified.\n"


def probe_file(batch: str, theorems: list, logs: dict, aliases: dict | None = None) -> str:
    """A file that loads the compiled batch ``batch`` (``theories/batch.vo``) and prints, for each
    of ``theorems`` (:class:`Exported`), ``symuat-probes-of NAME`` and then the library lemmas its
    proof terms (:attr:`Exported.probes`) reference
    (:func:`~symuat.certify.normal_form.probe_text`), probed only for the lemmas its run could have
    applied (:func:`~symuat.certify.normal_form.probe_candidates` of ``logs[NAME]``, what the
    tactics printed while they built it; for an alias, :func:`share_proofs`, its first proof's).
    Run after the batch, not inside it: in the batch, every lemma was one more walk of every
    proof term (a fifth of a batch's time)."""
    aliases = aliases or {}

    def probe(t, const, tag):  # an alias's proof term is its first proof's name: that one's is read
        const, owner = aliases.get(const, (const, t.name))
        return normal_form.probe_text(const, tag, normal_form.probe_candidates(logs.get(owner, "")))

    body = "".join(
        f"Goal True. idtac \"symuat-probes-of {t.name}\". Abort.\n"
        + "".join(probe(t, c, tag) for c, tag in t.probes)
        for t in theorems if t.probes)
    return IMPORTS + f"From SymuatCertified Require Import {batch}.\n" + body


#: the name of a batch's axiom check (:func:`axioms_check`) where a Coq error may point
AXIOMS_CHECK = "symuat_batch_theorems"


def axioms_check(names: list[str]) -> str:
    """The assumptions of every theorem of a batch, printed once between two markers: ``Print
    Assumptions`` of one term that mentions them all (it is transitive, so an axiom any of them
    rests on is listed). One walk of the shared dependencies instead of one per theorem (0.08 s
    each: a tenth of a batch's time); an ``Axioms:`` section sends the batch to
    :func:`symuat.certify.run.axioms_of`, which names the theorems that use them.  The term is a
    chain ``let _ := @t in … tt : unit``: a tuple of the theorems had their statements' product
    for its type, which coqc took 1.5–5.6 s a batch to elaborate (the chain: 0.1 s), and
    ``Print Assumptions`` walks a let-bound constant as any other."""
    return (f"Definition {AXIOMS_CHECK} : unit := {' '.join(f'let _ := @{n} in' for n in names)} tt.\n"
            "Goal True. idtac \"symuat-axioms-begin\". Abort.\n"
            f"Print Assumptions {AXIOMS_CHECK}.\n"
            "Goal True. idtac \"symuat-axioms-end\". Abort.\n")


#: a lemma of a batch (a side of a normal-form proof): its name, its statement (binders and type),
#: its one-line proof
_BLOCK = re.compile(r"^(Lemma) (\S+)( .*?)\nProof\. ()([^\n]*) Defined\.$", re.M | re.S)


def _binder_names(statement: str) -> list[str]:
    """The names a statement binds before its colon, in order: ``" (m n : nat) (W : mx R [:: m]
    [:: n]) :\n  …"`` → ``["m", "n", "W"]``."""
    names, depth, group = [], 0, ""
    for ch in statement:
        if depth == 0 and ch == ":":
            break
        if ch == "(":
            depth += 1
            if depth == 1:
                group = ""
                continue
        elif ch == ")":
            depth -= 1
            if depth == 0:
                names += group.split(" : ", 1)[0].split()
                continue
        if depth >= 1:
            group += ch
    return names


def side_statement(theorem: Exported) -> str | None:
    """The statement of ``theorem``'s first side lemma (what :func:`share_proofs` proves once
    in a file), or None: it has none."""
    m = _BLOCK.search(theorem.sides or "")
    return m.group(3) if m else None


def share_proofs(text: str, owner: str, seen: dict, aliases: dict) -> str:
    """``text`` (one theorem's entry of a batch, :meth:`Exported.batch_text`) with every lemma
    whose statement an earlier one of the file states word for word proved by that one
    (``exact:``) instead of again: the identities of many checks share their side lemmas (the
    one-layer step behind every depth theorem, the readings of one claim), each a normal-form
    search of seconds. A theorem is always proved by its own proof (what the record says of it,
    and what a mutant's test exercises). ``seen``: statement → (name, owner) of its first proof in the file;
    ``aliases``: name → (the name proved first, the theorem whose entry proved it), for the
    probes (:func:`probe_file`: an alias's proof term is that name, so the first one's is read)."""
    def share(m: re.Match) -> str:
        kind, name, statement, begin, proof = m.groups()
        first = seen.get(statement)
        if first is None:
            seen[statement] = (name, owner)
            return m.group(0)
        aliases[name] = first
        args = " ".join(_binder_names(statement))
        return (f"{kind} {name}{statement}\nProof. {begin or ''}"
                f"first [exact: {first[0]} | exact ({first[0]} {args})]. Defined.")

    return _BLOCK.sub(share, text)


def file_order(theorems: list[Exported]) -> list[Exported]:
    """The order of ``theorems`` in a batch file (:func:`batch_file`): those in the section first,
    then those that require a library, grouped by it (the libraries in the order they first
    appear); otherwise as given."""
    inside = [t for t in theorems if not t.requires]
    libs = list(dict.fromkeys(t.requires for t in theorems if t.requires))
    return inside + [t for lib in libs for t in theorems if t.requires == lib]


def batch_file(theorems: list[Exported], timeout: int | None = None,
               aliases: dict | None = None) -> tuple[str, list[tuple[int, str]]]:
    """Many theorems in one file (one ``coqc`` start, MathComp loaded once), then their
    assumptions (:func:`axioms_check`); and the first line of each theorem (and of that check,
    :data:`AXIOMS_CHECK`), to name what a Coq error points at. The theorems that require a
    library file of their own (:attr:`Exported.requires`) come after the section, grouped by that
    library, each group in a section of its own that imports it: a library's names (SymuatRef's
    ``kron`` over ``Q`` against SymuatMx's) and the scopes it exports (QArith's ``%N``, the binary
    naturals) reach only the theorems that require it. The order of the theorems in the file is
    the order of their groups."""
    text, starts = PRELUDE, []
    aliases = {} if aliases is None else aliases
    theorems = file_order(theorems)
    inside = [t for t in theorems if not t.requires]
    after = [t for t in theorems if t.requires]
    seen: dict = {}  # in the section (over its R), then after it: a statement's first proof
    for t in inside:
        starts.append((text.count("\n") + 1, t.name))
        text += share_proofs(t.batch_text(timeout), t.name, seen, aliases)
    text += "End Certified.\n"
    libs = list(dict.fromkeys(t.requires for t in after))
    if libs:  # loaded, not imported: a library's names and scopes reach only the theorems that require it
        text += f"From Symuat Require {' '.join(libs)}.\n"
    for lib in libs:  # its theorems in a section of their own, where it is imported (Import is local to it)
        text += f"Section Requires{lib}.\nImport {lib}.\n"
        seen = {}
        for t in after:
            if t.requires == lib:
                starts.append((text.count("\n") + 1, t.name))
                text += share_proofs(t.batch_text(timeout), t.name, seen, aliases)
        text += f"End Requires{lib}.\n"
    starts.append((text.count("\n") + 1, AXIOMS_CHECK))
    return text + axioms_check([t.name for t in theorems]), starts
