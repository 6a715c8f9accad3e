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

Checks that conclude for every depth from that induction and a one-layer identity of their own
(X7.telescope, X5.combined, A4.eq20[…], A4.corr[symbolic], T10.c[token-shared],
X8.linear-symbolic, and on the two-axis space of vec_r X — SymuatDepth's ``net_m`` —
X9.unrolling and X4.recursion[alpha(x)]; ``own_step``) are
theorems of ``coq/SymuatUnroll.v`` whose second premise is that identity as the exporter writes it,
discharged by the check's captured pair (:func:`own_step`); T8's two forward readings are T9's
theorems (the same rules). An induction the exporter does not state is in :data:`NOT_STATED` with
the reason. A check in neither is not exported here (:class:`Unsupported`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

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
    #: the check's own one-layer identity is a premise too (:data:`OWN_STEP`): its captured pair,
    #: exported and placed before the theorem like the step of Lemma 2
    own_step: bool = False
    #: the theorem rests on Lemma 2's step ([one_layer_step]: the library's induction) — not X7's,
    #: whose own step is its whole induction
    layer_step: bool = True
    #: the library's proof of the check's own step, used in place of the exported identity when the
    #: normal-form replay does not close that identity (said in the library beside the proof)
    own_proof: str = ""   # the term (``(@name sizes…)``) that proves it
    #: how many identities the check proves (its own step is the first; X8's second, its homogeneity,
    #: is proved in the library)
    own_pairs: int = 1


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
# T8's readings that ARE T9's (the same reading dict, the same procedure: the printed rules W1rhs=raw,
# unprimed=acc, W3=all are cW1, cb1, cW3's recursion): the same theorem, said of T8's rules
_T8 = "W1rhs=raw,unprimed=acc,abs={},W3=all,W2in34=layer,W3in34=stage,b3in34=acc"
for _form, _abs in (("eq20", "none"), ("eq30", "all")):
    THEOREMS[f"T8[{_form},{_T8.format(_abs)}]"] = replace(
        THEOREMS[f"T9[{_form},W2in34=layer,W3in34=stage,b3in34=acc]"],
        what=f"the printed rules of T8 (this reading) for every depth L: the combined parameters of the T7 recursion of "
             f"an Eq. {_form[2:]} network (W'_{{L,1}}, b'_{{L,3}}, W'_{{j,3}} by the rules, b'_{{j,2}} by Eq. 34)")

#: the checks that conclude for every depth from Lemma 2 (or a stream's own induction) and a one-layer
#: identity of their own (coq/SymuatUnroll.v; the identity is the check's captured pair, :func:`own_step`)
_X7_BINDERS = ("(D K N : nat) (O1 O2 : nat -> mx R [:: D] [:: K]) (V1 V2 : nat -> mx R [:: K] [:: D]) "
               "(P1 P2 : nat -> mx R [:: N] [:: N]) (X : nat -> mx R [:: D] [:: N]) (e : mx R [:: N] [::]) "
               "(m b : nat -> mx R [:: D] [::]) (x0 : mx R [:: D] [::]) (L : nat) (r : mx R [:: D] [::])")
_X7_ARGS = "O1 O2 V1 V2 P1 P2 X e m b x0"
_LORA = "(lora N dW2 dW3)"
_GOLDEN = "golden O V P W_d G W_u"
THEOREMS.update({
    "X7.telescope": DepthTheorem(
        "stream_readout", _X7_BINDERS, f"mul (tr r) (stream {_X7_ARGS} L)",
        "add (mul (tr r) x0)\n    (headsum (fun l : 'I_L => add (add (add "
        "(mul (mul (tr (mul (mul (tr (V1 l)) (tr (O1 l))) r)) (X l)) (mul (tr (P1 l)) e)) "
        "(mul (mul (tr (mul (mul (tr (V2 l)) (tr (O2 l))) r)) (X l)) (mul (tr (P2 l)) e))) "
        "(mul (tr r) (m l))) (mul (tr r) (b l))))",
        _X7_ARGS, "X7.telescope for every depth L: the residual stream x_{l+1} = x_l + (two heads' writes through "
        "their frozen patterns) + m_l + b_l (T7's recursion with W1 = I) read through a frozen r", tail=" r",
        own_step=True, layer_step=False),
    "X5.combined": DepthTheorem(
        "readout_unrolling", _NET + " (V : nat) (P : mx R [:: V] [:: D])", "mul P (forward sigma N x0 L)",
        "add (add (mul (mul P (cW1 N L)) x0) (mul P (cb1 N L)))\n    (headsum (fun j : 'I_L => "
        "mul (mul P (cW3 N L j)) (ew sigma (add (mul (cW2 N j) x0) (cb2 sigma N x0 j)))))",
        "sigma N x0 P", "X5.combined for every depth L: a readout P of x'_L (the logits: P = (I_N⊗W_E)S_f, "
        "X5.head) is T7's form with P A_L, P c_L, P U_{L,j} and the same V_j, e_j", own_step=True),
    "A4.eq20[Δ=induced,b2=recomputed,idx=j,op=times]": DepthTheorem(
        "lora_eq20_unrolling", _NET.replace(" (x0 :", " (dW2 : nat -> mx R [:: F] [:: D]) "
                                            "(dW3 : nat -> mx R [:: D] [:: F]) (x0 :"),
        f"forward sigma {_LORA} x0 L",
        "add (add (mul (cW1 N L) x0) (cb1 N L))\n    (headsum (fun j : 'I_L => "
        f"mul (add (cW3 N L j) (add (cW3 {_LORA} L j) (scale (-1)%:~R (cW3 N L j)))) "
        f"(ew sigma (add (mul (add (cW2 N j) (add (cW2 {_LORA} j) (scale (-1)%:~R (cW2 N j)))) x0) "
        f"(cb2 sigma {_LORA} x0 j)))))",
        "sigma N dW2 dW3 x0", "Eq. 18 (Δ=induced, b2=recomputed, idx=j, op=times) for every depth L: an Eq. 20 "
        "network fine-tuned by ΔW2_l, ΔW3_l (LoRA on one layer k: the others zero) unrolls with the base's A_L, c_L, "
        "the induced increments and the recomputed biases", own_step=True,
        # symuat_nf does not close the identity: inside σ, Σ V x'_0 and Σ (-1) V x'_0 cancel on one side
        own_proof="(@a4_eq20_step_holds R D F)"),
    "A4.corr[symbolic]": DepthTheorem(
        "lora_corrected_unrolling", _NET.replace(" (x0 :", " (dW2 : nat -> mx R [:: F] [:: D]) "
                                                 "(dW3 : nat -> mx R [:: D] [:: F]) (x0 :"),
        f"forward sigma {_LORA} x0 L",
        "add (add (mul (cW1 N L) x0) (cb1 N L))\n    (headsum (fun j : 'I_L => "
        "mul (add (cW3 N L j) (cW3 (dnet N dW3) L j)) "
        f"(ew sigma (add (mul (add (cW2 N j) (mul (dW2 j) (cW1 N j))) x0) (cb2 sigma {_LORA} x0 j)))))",
        "sigma N dW2 dW3 x0", "the corrected Eq. 18 for every depth L: an Eq. 20 network (any W1 per layer; a "
        "Transformer's: its fine-tuned stream's, T7) fine-tuned by ΔW2_l, ΔW3_l unrolls with W'_{j,3} + ΔW_{j,3} "
        "(ΔW_{j,3}: the later W1 times ΔW3_j), W'_{j,2} + ΔW_{j,2} (ΔW_{j,2} = ΔW2_j A_j) and the recomputed "
        "b'_{j,2}", own_step=True),
    "X8.linear-symbolic": DepthTheorem(
        "golden_linear", "(D F K N : nat) (O : nat -> mx R [:: D] [:: K]) (V : nat -> mx R [:: K] [:: D]) "
        "(P : nat -> mx R [:: N] [:: N]) (W_d : nat -> mx R [:: D] [:: F]) (G : nat -> mx R [:: F] [:: N]) "
        "(W_u : nat -> mx R [:: F] [:: D]) (L : nat) (a : R) (X Y : mx R [:: D] [:: N])",
        f"{_GOLDEN} L (add X Y)",
        f"add ({_GOLDEN} L X) ({_GOLDEN} L Y) /\\\n  {_GOLDEN} L (scale a X) =m scale a ({_GOLDEN} L X)",
        "O V P W_d G W_u", "X8.linear-symbolic for every depth L: L bias-free detached layers (pattern, gate and norm "
        "scales frozen) composed are additive and homogeneous, i.e. linear: the output is Σ_t J_t x_t (each layer's "
        "additivity the check's identity; its homogeneity, with a scalar symbol the exporter does not state, proved "
        "in the library)", tail=" a X Y", own_step=True, layer_step=False, own_pairs=2),
    "T10.c[token-shared]": DepthTheorem(
        "shared_bias", "(N d d_v h : nat) (H : nat -> 'I_h -> mx R [:: N] [:: N]) (W_V : nat -> 'I_h -> mx R [:: d] [:: d_v]) "
        "(W_O : nat -> mx R [:: h; d_v] [:: h; d]) (b3 : nat -> mx R [::] [:: h; d]) (L : nat) "
        "(rows : forall l (i : 'I_h) (a : 'I_N), \\sum_(b < N) H l i (a, tt) (b, tt) = 1)",
        "cshared H W_V W_O b3 L", "vec_r (mul (ones [:: N] [::]) (gshared W_V W_O b3 L))", "(H:=H) W_V W_O b3",
        "T10.c for every depth L, every row of every pattern summing to one (H7): the combined bias "
        "c_L = (I + W^mha_{L-1}) c_{L-1} + 1_N⊗b_{L-1,3}, c_0 = 0, is 1_N⊗g_L with g_L free of the patterns H",
        tail=" rows", own_step=True, layer_step=False,
        # its identity's proof (symuat_entry using symuat_line) does not close: the line summed sits under
        # the Kronecker product's split indices
        own_proof="(@t10_step_holds R N d d_v h)"),
})


# layers on vec_r X (a two-axis index space [:: N; M]): Lemma 2 over multi-index spaces
# (SymuatDepth.residual_unrolling_m, its step proved by the library: L2.8's exported step is over one
# axis) applied to the check's layer, whose Eq. 20 form is the check's own identity (X9.layer's, X4's)
_PAR = "sigma H_1 H_2 s_1 s_2 G_1 G_2 B_1 B_2 Beta_1 Beta_2 C_att C_out W_in C_in W_out X0"
_GATED = "sigma H_1 H_2 s_1 s_2 gamma_1 gamma_2 B_1 B_2 W_g W_u W_down X0"
_FROZEN = ("(H_1 H_2 : nat -> mx R [:: N] [:: M] -> mx R [:: N] [:: N]) "
           "(s_1 s_2 : nat -> mx R [:: N] [:: M] -> mx R [:: N] [::]) ")


def _multi(net: str, sigma: str) -> str:
    return (f"add (add (mul (cW1_m {net} L) (vec_r X0)) (cb1_m {net} L))\n    (headsum (fun j : 'I_L => "
            f"mul (cW3_m {net} L j) (ew {sigma} (add (mul (cW2_m {net} j) (vec_r X0)) "
            f"(cb2_m {sigma} {net} (vec_r X0) j)))))")


THEOREMS.update({
    "X9.unrolling": DepthTheorem(
        "parallel_unrolling", "(N M F : nat) (sigma : R -> R) " + _FROZEN +
        "(G_1 G_2 B_1 B_2 : nat -> mx R [:: M] [:: M]) (Beta_1 Beta_2 C_att C_out : nat -> mx R [:: N] [:: M]) "
        "(W_in : nat -> mx R [:: M] [:: F]) (C_in : nat -> mx R [:: N] [:: F]) (W_out : nat -> mx R [:: F] [:: M]) "
        "(X0 : mx R [:: N] [:: M]) (L : nat)",
        f"vec_r (xpar {_PAR} L)", _multi(f"(par_net {_PAR})", "sigma"), _PAR,
        "X9.unrolling for every depth L: a stack of parallel-residual layers (patterns H_i and norm scales s_k any "
        "functions of the layer's input, frozen there) acting on vec_r X_l ([:: N; M]) is A_L x'_0 + c_L + "
        "Σ_j U_{L,j} σ(V_j x'_0 + e_j) with X9's Eq. 20 parameters (W1 = I + A S₁, W2 = (I_N⊗W_inᵀ)S₂, "
        "W3 = I_N⊗W_outᵀ, b2, b3); the step: X9.layer's identity (the premise, word for word) and Lemma 2's step "
        "on a two-axis space, both proved in the library", own_step=True, layer_step=False,
        # the exported identity's normal-form replay does not close in minutes (its lhs lemma alone ran
        # 13 min unfinished, load 7); symuat_entry gives up: the library's structured proof (vec of A Y B)
        own_proof="(@x9_step_holds R N M F)"),
    "X4.recursion[alpha(x)]": DepthTheorem(
        "gated_unrolling", "(N M F : nat) (sigma : R -> R) " + _FROZEN +
        "(gamma_1 gamma_2 : nat -> mx R [:: M] [::]) (B_1 B_2 : nat -> mx R [:: M] [:: M]) "
        "(W_g W_u : nat -> mx R [:: M] [:: F]) (W_down : nat -> mx R [:: F] [:: M]) (X0 : mx R [:: N] [:: M]) (L : nat)",
        f"vec_r (xgated {_GATED} L)", _multi(f"(gated_net {_GATED})", "(silu sigma)"), _GATED,
        "X4.recursion[alpha(x)] for every depth L: a stack of gated pre-norm (Llama) layers (patterns H_i and RMSNorm "
        "scales s_k any functions of the layer's input, frozen there) acting on vec_r X_l ([:: N; M]) is "
        "A_L x'_0 + c_L + Σ_j U_{L,j} silu(V_j x'_0 + e_j), silu t = t σ(t), with X4's Eq. 20 parameters "
        "(W1 = I + A S₁, W2 = W_g'S₂W1, b2 = b3 = 0, the dynamic W3 = W'_down diag(W_u'S₂W1x'_l)); the step: "
        "X4's one-layer identity (the premise, word for word) and Lemma 2's step on a two-axis space, both proved "
        "in the library", own_step=True, layer_step=False, own_proof="(@x4_step_holds R N M F)"),
})


#: the checks that conclude for every depth by an induction this exporter does not state, and why
#: (recorded as their reason; each proved by symuat's kernel only)
NOT_STATED: dict[str, str] = {}


@dataclass
class DepthExported(Exported):
    """A depth theorem: ``step`` names the one-layer identity its proof applies (in ``sides``)."""

    step: str = ""
    library: str = ""
    #: the check's own one-layer identity the proof applies (:attr:`DepthTheorem.own_step`)
    check_step: str = ""


def export_depth(name: str, key: str, step=None, step_nf_key=None, own=None) -> DepthExported:
    """The theorem ``name`` certifying check ``key`` for every depth: the library's induction
    applied to the one-layer step. ``step``: the pair ``(lhs, rhs)`` symuat's normal form proved for
    one layer (:data:`STEP_CHECK`); the premise [one_layer_step] is then discharged by that identity,
    exported as every identity is (proved from symuat's normal form, ``step_nf_key`` replacing the
    certificate for the mutant tests) and placed before the theorem, so each batch entry stands alone;
    a pair that is not the one-layer step does not discharge it and Coq rejects the theorem.
    Without ``step``, the library's own proof of the step (``one_layer_step_holds``). ``own``: for a
    theorem with the check's own step (:attr:`DepthTheorem.own_step`), the pair the check proved
    (:func:`own_step`), exported the same way and applied to the library theorem's second premise
    (a pair that is not that identity does not discharge it); without it the check is not stated."""
    thm = THEOREMS.get(key)
    if thm is None:
        raise Unsupported(f"{key} is not an induction over depth this exporter states")
    if thm.own_step and own is None and not thm.own_proof:
        raise Unsupported(f"{key}: its own one-layer identity was not captured (it did not run, or not as one identity)")
    statement = f"Theorem {name} {thm.binders} :\n  {thm.lhs} =m {thm.rhs}."
    sides, tactics, holes = "", [], ""
    from symuat.certify.export import export_identity

    if not thm.layer_step:
        step_name = ""
    elif step is None:
        step_name = "one_layer_step_holds"
        holes += " (@one_layer_step_holds R D F)"
    else:
        exported = export_identity(f"{name}_step", *step, nf_key=step_nf_key)
        sides += exported.batch_text()
        step_name = exported.name
        holes += " _"
        # the premise's ten binders introduced in the library's order, then the exported identity
        # applied: unification matches it whatever the order of its own binders
        tactics.append(f"move=> ? ? ? ? ? ? ? ? ? ?; exact: {exported.name}")
    check_step = ""
    if thm.own_step and thm.own_proof:
        check_step = thm.own_proof.strip("()@").split()[0]
        holes += f" {thm.own_proof}"
    elif thm.own_step:
        lhs, rhs, *hyps = own
        mine = export_identity(f"{name}_own", lhs, rhs, hypotheses=(hyps[0] if hyps else None) or ())
        sides += mine.batch_text()
        check_step = mine.name
        holes += " _"
        # under a hypothesis (T10.c's: H7's rows summing to one) the identity's premise is the one introduced
        tactics.append(f"intros; apply: {mine.name}; assumption" if hyps and hyps[0] else f"intros; exact: {mine.name}")
    if not tactics:
        proof = f"exact: ({thm.library} {thm.args}{holes} L{thm.tail})."
    else:
        then = f". {tactics[0]}." if len(tactics) == 1 else "; [" + " | ".join(tactics) + "]."
        proof = f"refine ({thm.library} {thm.args}{holes} L{thm.tail}){then}"
    return DepthExported(name, statement, proof, proof_kind="induction over depth", probes=(), sides=sides,
                         step=step_name, library=thm.library, check_step=check_step)


def own_step(captured: dict, key: str):
    """The one-layer identity ``(lhs, rhs, hypotheses)`` check ``key`` proved itself (its one captured
    pair; ``hypotheses`` None or those it needed, stated as premises), for a theorem with
    :attr:`DepthTheorem.own_step`; else None."""
    thm = THEOREMS.get(key)
    verdict, pairs = captured.get(key, (None, []))
    if thm is None or not thm.own_step or verdict is None or str(verdict.status) != "proved":
        return None
    if len(pairs) != thm.own_pairs:
        return None
    return pairs[0]


#: the check whose identity is the one-layer step (Eq. 26–27, the settings applied simultaneously)
STEP_CHECK = "L2.8[front=raw]"


def step_pair(captured: dict):
    """The one-layer identity ``(lhs, rhs)`` as :data:`STEP_CHECK` proved it (from ``captured``,
    :func:`symuat.certify.run.capture`'s result, if that check ran), else None."""
    verdict, pairs = captured.get(STEP_CHECK, (None, []))
    if verdict is None or str(verdict.status) != "proved" or len(pairs) != 1 or pairs[0][2]:
        return None
    return pairs[0][0], pairs[0][1]
