"""The papers' objects as SymPy nodes, one concept per module, each with its index rule for the kernel
and its NumPy twin: the unevaluated constructors (:mod:`~symuat.expr.algebra`), the diamond product,
flattening, the factored Kronecker product, head-indexed families, basis vectors, the elementwise σ,
the decoder's parts, and the constructions built from them — Linear/FFN lifts, multi-head attention
(also at explicit sizes), residual unrolling, pruning (A1) and smallness (A2) statements.

Shares the ``core`` layer with the kernel (:mod:`symuat.kernel`): a node's entry rule is written in
the kernel's index calculus, and the kernel's procedures read a few nodes."""
