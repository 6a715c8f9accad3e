r"""Proofs Coq re-checks: symuat's symbolic ``proved`` identities exported to Coq/MathComp.

* :mod:`symuat.certify.coq_terms` — how a statement's names, sizes and matrix terms are written in
  Coq (shared by every exporter and the normal form's printer);
* :mod:`symuat.certify.export` — a checked statement ``lhs = rhs`` → a Coq theorem over the
  library in ``coq/`` (entrywise, all dimensions), proved by one generic tactic;
* :mod:`symuat.certify.run` — the certify tier: run the checks, capture the statements their
  ``proved`` rests on, write the ``.v`` files, run ``coqc``, write the record;
* :mod:`symuat.certify.record` — read the record back (only when it matches the sources).
"""
