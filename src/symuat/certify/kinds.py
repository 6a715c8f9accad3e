"""Exporters for the ``proved`` verdicts that are not identities of matrices.

A decision procedure records what its conclusion rests on
(:func:`symuat.kernel.certificates.record`, a *kind* and its data); the exporter this table
(:data:`EXPORTERS`) names for that kind turns the record into Coq theorems (:class:`~symuat.certify.export.Exported`)
stating exactly what the procedure concluded. A check with no record, or with a kind no exporter
handles, is not exported (:class:`~symuat.certify.coq_terms.Unsupported`, with the reason).
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from symuat.certify import (bands, density, exponential, identity, implication, independence, kron_rank, picture, printed,
                            rank, rotary, vanishing, witness)
from symuat.certify.coq_terms import Unsupported
from symuat.certify.export import Exported

#: kind → exporter(base_name, data) → theorems: the one table (an exporter module only defines
#: its functions; a new kind is one module and one line here)
EXPORTERS: dict[str, Callable[[str, dict], list[Exported]]] = {
    "density": density.export_density,
    "identity": identity.export_recorded_identity,
    "flat_column": picture.export_flat_column,
    "flat_listing": picture.export_flat_listing,
    "printed_sum": printed.export_printed,
    "witness": witness.export_witness,
    "dependence": witness.export_dependence,
    "softmax_witness": witness.export_softmax_witness,
    "implication": implication.export_implication,
    "uniform_limit": implication.export_uniform_limit,
    "vanishing": vanishing.export_vanishing,
    "band_masks": bands.export_band_masks,
    "softmax_shift": exponential.export_softmax_shift,
    "capped_sum": exponential.export_capped_sum,
    "pair_rotation": rotary.export_pair_rotation,
    "independence": independence.export_independence,
    "dependence_hypotheses": independence.export_dependence_on_hypotheses,
    "rank_product": rank.export_rank_product,
    "token_block_span": rank.export_token_block_span,
    "rank_kron": kron_rank.export_rank_kron,
}


def export_certificates(base: str, verdict, certificates: list) -> list[Exported]:
    """The theorems for a non-identity ``proved``: one exporter call per recorded certificate
    (``base`` suffixed by its position), or :class:`Unsupported` naming what is missing."""
    method = " ".join(str(getattr(verdict, "method", "")).split())[:120]
    if not certificates:
        raise Unsupported("not an identity of matrices (the exporter's fragment); proved by: " + method)
    out: list[Exported] = []
    for n, (kind, data) in enumerate(certificates):
        fn = EXPORTERS.get(kind)
        if fn is None:
            raise Unsupported(f"no Coq exporter for a {kind} certificate; proved by: {method}")
        out += fn(f"{base}_{kind}{n}", data)
    # every theorem's accepted proof term is probed for the library lemmas it applies (the
    # derivation the claim page shows), as an identity's is
    return [t if t.probes else dataclasses.replace(t, probes=((t.name, "direct"),)) for t in out]
