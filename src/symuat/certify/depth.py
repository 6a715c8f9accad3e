r"""The inductions over the number of layers (L2, T7, T9) as Coq theorems for every depth.

symuat proves Lemma 2 (``L2.main.exact[induction]``), the Transformer→DUAT recursion
(``T7.exact[…]``), the Eq. 34 bias recursion (``T9[…]``) and X6's telescoping of a readout
(``X6.telescope``) by an induction meta-argument: a base
case and the one-layer step for a symbolic layer index (``L2.8[front=raw]``), each an identity
of its normal form. Here each such check is exported as ONE Coq theorem quantified over the
depth ``L`` (a ``nat``), stated over a network given as a function from the layer index to the
layer's parameters (``coq/SymuatDepth.v``: ``net``, ``forward``, the combined parameters
``cW1 cb1 cW3 cW2 cb2``), and proved by the library's induction (:data:`THEOREMS`) from the one-layer step
(``one_layer_step``, the identity of ``L2.8[front=raw]``): discharged by that identity as symuat's
normal form proves it, exported before the theorem (``step``), else by the library's own proof of it.

>>> t = export_depth("c_L2", "L2.main.exact[induction]")
>>> print(t.statement)  # doctest: +NORMALIZE_WHITESPACE
Theorem c_L2 (D F : nat) (sigma : R -> R) (N : net R D F) (x0 : mx R [:: D] [::]) (L : nat) :
  forward sigma N x0 L =m add (add (mul (cW1 N L) x0) (cb1 N L))
    (headsum (fun j : 'I_L => mul (cW3 N L j) (ew sigma (add (mul (cW2 N j) x0) (cb2 sigma N x0 j))))).
>>> t.proof_kind, t.step
('induction over depth', 'one_layer_step_holds')

A check that is not in :data:`THEOREMS` is not exported here (:class:`Unsupported`).
"""

from __future__ import annotations

from dataclasses import dataclass

from symuat.certify.coq_terms import Unsupported
from symuat.certify.export import Exported

_NET = "(D F : nat) (sigma : R -> R) (N : net R D F) (x0 : mx R [:: D] [::]) (L : nat)"
_BLOCKS = ("(D F : nat) (sigma : R -> R) (att : nat -> mx R [:: D] [::] -> mx R [:: D] [:: D]) "
           "(W2 : nat -> mx R [:: F] [:: D]) (b2 : nat -> mx R [:: F] [::]) "
           "(W3 : nat -> mx R [:: D] [:: F]) (b3 : nat -> mx R [:: D] [::]) "
           "(x0 : mx R [:: D] [::]) (L : nat)")


def _form(net: str, bias: str) -> str:
    return (f"add (add (mul (cW1 {net} L) x0) (cb1 {net} L))\n    (headsum (fun j : 'I_L => "
            f"mul (cW3 {net} L j) (ew sigma (add (mul (cW2 {net} j) x0) ({bias} sigma {net} x0 j)))))")


@dataclass(frozen=True)
class DepthTheorem:
    """A library theorem over the depth and the statement a check's export gives it."""

    library: str   # the theorem of coq/SymuatDepth.v that proves it
    binders: str
    lhs: str       # the forward pass after L layers
    rhs: str       # the unrolled (D)UAT form
    args: str      # the arguments before the step premise
    what: str      # what it states, for the record
    tail: str = ""  # the arguments after the depth


_BOTH = "(both_net sigma att W2 b2 W3 b3 x0)"
_FFN = "(ffn_net sigma att W2 b2 W3 b3 x0)"
_RESIDUAL = DepthTheorem("residual_unrolling", _NET, "forward sigma N x0 L", _form("N", "cb2"), "sigma N x0",
                         "Lemma 2 for every depth L: an Eq. 20 network unrolls into the (D)UAT form")
#: check key → the theorem that certifies it (the checks whose verdict is an induction over depth)
THEOREMS: dict[str, DepthTheorem] = {
    "L2.main.exact[induction]": _RESIDUAL,
    "T7.exact[eq20]": _RESIDUAL,
    "T7.bias[one]": _RESIDUAL,
    "T7.exact[eq30,B-both,W1=id+mha]": DepthTheorem(
        "transformer_both_unrolling", _BLOCKS, "xboth sigma att W2 b2 W3 b3 x0 L", _form(_BOTH, "cb2"),
        "sigma att W2 b2 W3 b3 x0",
        "Eq. 33 for every depth L: Transformer blocks with both skips, W'_{l,1} = I + W^mha_l(x_l)"),
    "T7.exact[eq30,B-ffn,W1=mha]": DepthTheorem(
        "transformer_ffn_unrolling", _BLOCKS, "xffn sigma att W2 b2 W3 b3 x0 L", _form(_FFN, "cb2"),
        "sigma att W2 b2 W3 b3 x0",
        "Eq. 33 for every depth L: Transformer blocks with the FFN skip only, W'_{l,1} = W^mha_l(x_l)"),
    "T9[eq20,W2in34=layer,W3in34=stage,b3in34=acc]": DepthTheorem(
        "eq34_unrolling", _NET, "forward sigma N x0 L", _form("N", "eq34"), "sigma N x0",
        "Eq. 34 (this reading) for every depth L: its biases give the forward pass of an Eq. 20 network"),
    "X6.telescope": DepthTheorem(
        "readout_telescope", _NET + " (rho : mx R [:: D] [::])", "mul (tr rho) (forward sigma N x0 L)",
        "add (add (mul (tr (rho_chain N rho L 0)) x0) (mul (tr rho) (cb1 N L)))\n    (headsum (fun j : 'I_L => "
        "mul (tr (mul (tr (nW3 N j)) (rho_chain N rho L j.+1))) (ew sigma (add (mul (cW2 N j) x0) (cb2 sigma N x0 j)))))",
        "sigma N x0", "X6's telescoping for every depth L: a readout of x_L through the transposed chain "
        "rho_L = rho, rho_{j-1} = W1_j^T rho_j", tail=" rho"),
    "T9[eq30,W2in34=layer,W3in34=stage,b3in34=acc]": DepthTheorem(
        "eq30_eq34_unrolling", _NET, "forward30 sigma N x0 L", _form("(absorbed N)", "eq34"), "sigma N x0",
        "Eq. 34 (this reading) for every depth L: its biases give the forward pass of an Eq. 30 network"),
}


@dataclass
class DepthExported(Exported):
    """A depth theorem: ``step`` names the one-layer identity its proof applies (in ``sides``)."""

    step: str = ""
    library: str = ""


def export_depth(name: str, key: str, step=None, step_nf_key=None) -> DepthExported:
    """The theorem ``name`` certifying check ``key`` for every depth: the library's induction
    applied to the one-layer step. ``step``: the pair ``(lhs, rhs)`` symuat's normal form proved for
    one layer (:data:`STEP_CHECK`); the premise [one_layer_step] is then discharged by that identity,
    exported as every identity is (proved from symuat's normal form, ``step_nf_key`` replacing the
    certificate for the mutant tests) and placed before the theorem, so each batch entry stands alone;
    a pair that is not the one-layer step does not discharge it and Coq rejects the theorem.
    Without ``step``, the library's own proof of the step (``one_layer_step_holds``)."""
    thm = THEOREMS.get(key)
    if thm is None:
        raise Unsupported(f"{key} is not an induction over depth this exporter states")
    statement = f"Theorem {name} {thm.binders} :\n  {thm.lhs} =m {thm.rhs}."
    if step is None:
        proof = f"exact: ({thm.library} {thm.args} (@one_layer_step_holds R D F) L{thm.tail})."
        return DepthExported(name, statement, proof, proof_kind="induction over depth", probes=(),
                             step="one_layer_step_holds", library=thm.library)
    from symuat.certify.export import export_identity

    exported = export_identity(f"{name}_step", *step, nf_key=step_nf_key)
    # the premise's ten binders introduced in the library's order, then the exported identity
    # applied: unification matches it whatever the order of its own binders
    proof = (f"refine ({thm.library} {thm.args} _ L{thm.tail}). "
             f"move=> ? ? ? ? ? ? ? ? ? ?; exact: {exported.name}.")
    return DepthExported(name, statement, proof, proof_kind="induction over depth", probes=(),
                         sides=exported.batch_text(), step=exported.name, library=thm.library)


#: the check whose identity is the one-layer step (Eq. 26–27, the settings applied simultaneously)
STEP_CHECK = "L2.8[front=raw]"


def step_pair(captured: dict):
    """The one-layer identity ``(lhs, rhs)`` as :data:`STEP_CHECK` proved it (from ``captured``,
    :func:`symuat.certify.run.capture`'s result, if that check ran), else None."""
    verdict, pairs = captured.get(STEP_CHECK, (None, []))
    if verdict is None or str(verdict.status) != "proved" or len(pairs) != 1 or pairs[0][2]:
        return None
    return pairs[0][0], pairs[0][1]
