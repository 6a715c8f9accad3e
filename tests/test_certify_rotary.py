"""Blocks of an axis and RoPE pair rotations in Coq: the rotary/GQA identities certified, mutants fail.

``AxisBlock`` (the block ``[o, o+m)`` of one axis, entry ``[u = o + flat(j)]``) is ``axis_block``,
``PairRotation`` (generic 2×2 blocks ``ρ_k`` on the pairs of a head) is ``rot_half`` (pair ``k`` at
``(t, k)``, HF's ``rotate_half``) or ``rot_inter`` (at ``(k, t)``, GGUF's interleaved pairs), over
the same index spaces symuat's normal form reads (``coq/SymuatMx.v``); a summed block index is
eliminated by symuat's two block rules, proved once (``coq/SymuatBlocks.v``). The true statements
of WP6.gqa and WP7 compile; a rotation in the other pair order, a group's block off by one (the
K block read from V's place, the Q block shifted onto K's) and a sign flipped are rejected by Coq.
Needs ``coqc`` with MathComp for the Coq test; skips without it unless ``CI`` or
``SYMUAT_REQUIRE_COQ`` is set.
"""

from __future__ import annotations

import pytest
import sympy as sp
from sympy import Identity

from symuat.certify.coq_terms import Ctx, Unsupported, term
from symuat.certify.export import export_identity
from symuat.expr.algebra import add, dims, kron, mul, T
from symuat.expr.heads import BlockSymbol
from symuat.kernel.head_maps import AxisBlock, per_group_split, rope_permutation
from symuat.kernel.rotary import PairRotation

g, r, d, M, e, h = dims("g r d M e h")


def _rot(name, layout, width=e):
    return kron(Identity(h), PairRotation(name, width, layout))


def _wp7_rot(left="interleaved", right="half", width=e):
    """WP7.rot: (q P)(I_h ⊗ R^int) = (q (I_h ⊗ R^half)) P, P = I_h ⊗ K_{2,e} (``left``/``right``: the
    layouts; ``width``: e, the pairs of a head)."""
    q = BlockSymbol("q", (1,), (h, 2, width))
    P = rope_permutation(h, width)
    return mul(q, P, _rot("rho", left, width)), mul(q, _rot("rho", right, width), P)


def _wp6_gqa(part, block=None):
    """WP6.gqa[per-group,part]: F (I_g ⊗ E ⊗ I_d) = W, F the per-group fused layout (``block``: E replaced)."""
    Q, K, V = (BlockSymbol(n, (M,), s) for n, s in (("W_Q", (g, r, d)), ("W_K", (g, d)), ("W_V", (g, d))))
    F = add(*(mul(W, T(per_group_split(g, r, d, t))) for t, W in zip("qkv", (Q, K, V))))
    read = per_group_split(g, r, d, part) if block is None else kron(Identity(g), block, Identity(d))
    return mul(F, read), {"q": Q, "k": K, "v": V}[part]


def test_the_nodes_are_written_over_the_index_spaces_the_normal_form_reads():
    ctx = Ctx()
    assert term(PairRotation("rho", e, "half"), ctx) == "(rot_half rho)"
    assert term(PairRotation("rho", e, "interleaved"), ctx) == "(rot_inter rho)"
    assert ctx.leaves == {"rho": "mx R [:: e; 2%N] [:: 2%N]"}  # block k in rows (k, t)
    assert term(AxisBlock(r + 2, r, 1), ctx) == "(axis_block (2 + r)%N r [::])"
    assert term(AxisBlock(2 * e + d, 0, (2, e)), ctx) == "(axis_block (d + (2) * (e))%N 0 [:: 2%N; e])"


def test_a_block_of_a_one_wide_axis_is_unsupported():
    with pytest.raises(Unsupported, match="not one dimension"):
        term(AxisBlock(1, 0, 1), Ctx())


def test_the_rotation_statement_names_both_layouts():
    t = export_identity("wp7", *_wp7_rot())
    assert t.statement == (
        "Theorem wp7 (e h : nat) (q : mx R [::] [:: h; 2%N; e]) (rho : mx R [:: e; 2%N] [:: 2%N]) :\n"
        "  mul (mul q (kron (idm [:: h]) (commutation 2 e))) (kron (idm [:: h]) (rot_inter rho)) =m "
        "mul (mul q (kron (idm [:: h]) (rot_half rho))) (kron (idm [:: h]) (commutation 2 e)).")
    assert t.proof_kind == "normal form"


def test_coq_accepts_the_rotary_and_gqa_identities_and_rejects_their_mutants(coq_lib):
    true = [export_identity("rot_true", *_wp7_rot()),
            # two pairs (e = 2): both layouts live on the same index space, so the swap below is typed
            export_identity("rot_two_pairs", *_wp7_rot(width=2)),
            export_identity("gqa_k_true", *_wp6_gqa("k")),
            export_identity("gqa_q_true", *_wp6_gqa("q"))]
    direct = "symuat_entry."  # the sides' normal forms differ: no certificate, the tactic alone
    lhs, rhs = _wp7_rot()
    mutants = [
        # the pair order swapped (for symbolic e the two layouts' index spaces differ: the statement
        # does not even typecheck; with two pairs it does, and is false): half-split read as interleaved
        export_identity("rot_swapped", *_wp7_rot(right="interleaved", width=2), proof=direct),
        # a sign flipped
        export_identity("rot_sign", lhs, sp.Integer(-1) * rhs, proof=direct),
        # the group's K block off by one: V's place (r + 1) read as K
        export_identity("gqa_k_off", *_wp6_gqa("k", AxisBlock(r + 2, r + 1, 1)), proof=direct),
        # the Q block shifted by one, onto K's place
        export_identity("gqa_q_off", *_wp6_gqa("q", AxisBlock(r + 2, 1, r)), proof=direct),
    ]
    res = compile_batch_of(coq_lib, true + mutants)
    assert {t.name: res[t.name]["ok"] for t in true} == {t.name: True for t in true}
    assert {t.name: res[t.name]["ok"] for t in mutants} == {t.name: False for t in mutants}
    assert all(res[t.name]["reason"].startswith("Coq:") for t in mutants)


def compile_batch_of(coq_lib, theorems):
    from symuat.certify.run import compile_batch

    return compile_batch(coq_lib / "lib", theorems, coq_lib / "theories" / "rotary_batch.v", timeout=300)


# --------------------------------------------------------------------------------------------
# the one-pair step of RoPE's relative position (X2.rel.all, WP8.relative): coq/SymuatRotary.v
# --------------------------------------------------------------------------------------------

def _pair(name, orientation="row", **change):
    from symuat.certify.rotary import export_pair_rotation

    data = {"orientation": orientation, "angles": ("alpha", "beta")} if orientation == "row" else \
        {"orientation": orientation, "angles": ("n", "n'"), "frequency": "theta0"}
    return export_pair_rotation(name, data)[0]


def test_the_pair_step_states_the_addition_formulas_as_premises():
    t = _pair("wp8")
    assert t.statement.splitlines()[-4:] == [
        "Theorem wp8 (c s : R -> R)",
        "  (Hc : forall a b, c (b - a) = c a * c b + s a * s b)",
        "  (Hs : forall a b, s (b - a) = c a * s b - s a * c b) (alpha beta : R) :",
        "  mul (tr (rot2_row c s (alpha))) (rot2_row c s (beta)) =m rot2_row c s (beta - alpha)."]
    assert "the only trigonometric fact used" in t.statement


def test_wp8_relative_records_its_pair_step_and_x2_both_steps():
    from symuat.certify.run import capture
    from symuat.kernel.registry import REGISTRY

    import symuat.claims  # noqa: F401

    keys = ("WP8.relative", "X2.rel.all[rotate-half]")
    kept: dict = {}
    got = capture([c for c in REGISTRY.all_checks() if c.key in keys], kept)
    assert all(str(got[k][0].status) == "proved" for k in keys)
    assert [k for k, _ in kept["WP8.relative"]] == ["pair_rotation"]
    assert [k for k, _ in kept["X2.rel.all[rotate-half]"]] == ["identity", "pair_rotation"]
    assert kept["X2.rel.all[rotate-half]"][1][1] == {"orientation": "column", "angles": ("n", "n'"),
                                                     "frequency": "theta0"}


def test_coq_accepts_the_pair_step_and_rejects_a_wrong_one(coq_lib):
    import dataclasses

    def mutant(t, name, old, new):
        assert old in t.statement
        return dataclasses.replace(t, name=name, statement=t.statement.replace(t.name, name).replace(old, new))

    row, col = _pair("pair_row"), _pair("pair_col", "column")
    true = [row, col]
    mutants = [
        # the difference the other way: ρ(a)ᵀρ(b) = ρ(a − b)
        mutant(row, "pair_reversed", "(beta - alpha)", "(alpha - beta)"),
        # no transpose: R_n R_n' (X2.rel's mutant)
        mutant(col, "pair_no_tr", "mul (tr (rot2 c s (n * theta0)))", "mul ((rot2 c s (n * theta0)))"),
        # the sine's sign flipped in the premise: the addition formula of a sum
        mutant(row, "pair_sum_formula", "s (b - a) = c a * s b - s a * c b", "s (b - a) = c a * s b + s a * c b"),
    ]
    res = compile_batch_of(coq_lib, true + mutants)
    assert {t.name: res[t.name]["ok"] for t in true} == {t.name: True for t in true}
    assert {t.name: res[t.name]["ok"] for t in mutants} == {t.name: False for t in mutants}
