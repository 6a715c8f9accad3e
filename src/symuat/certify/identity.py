r"""Identities of matrices recorded by a procedure whose verdict is not the normal form's own.

A check may conclude from identities the index calculus proved and then read them (e.g. two
identities with basis vectors at fixed positions). Such identities are on multi-indices: a
statement about where entries are *drawn* (M1's picture) records flat positions instead
(:mod:`symuat.certify.picture`). Its procedure records each identity (kind ``"identity"``: ``lhs``, ``rhs``); the theorem is the
identity exported as :func:`~symuat.certify.export.export_identity` exports every other — for
symbolic sizes, a basis vector ``e_p ∈ ℝⁿ`` as ``selector (Ordinal h)`` under the hypothesis
``h : p < n`` (the vector exists), proved by the same generic tactic.

>>> import sympy as sp
>>> from sympy import MatrixSymbol
>>> from symuat.expr.basis import Basis
>>> N = sp.Symbol("N", positive=True, integer=True)
>>> W = MatrixSymbol("W", N, N)
>>> print(export_recorded_identity("c", {"lhs": W.T * Basis(1, N), "rhs": W.T * Basis(1, N)})[0].statement)
Theorem c (N : nat) (h_N_1 : (1 < N)%N) (W : mx R [:: N] [:: N]) :
  mul (tr W) (selector (Ordinal h_N_1)) =m mul (tr W) (selector (Ordinal h_N_1)).
"""

from __future__ import annotations

from symuat.certify.export import Exported, export_identity


def export_recorded_identity(name: str, data: dict) -> list[Exported]:
    """``lhs =m rhs`` for symbolic sizes (the identity the procedure recorded)."""
    return [export_identity(name, data["lhs"], data["rhs"])]
