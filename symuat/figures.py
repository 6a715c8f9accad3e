"""Pictures of structure: the zero/nonzero pattern of the MHA lifts, token blocks labelled.

Needs matplotlib (the ``docs`` extra). Patterns are computed exactly from the symbolic
constructions (:func:`symuat.kernel.structure.generic_support`), not from a float run.
"""

from __future__ import annotations

from pathlib import Path


def _save(fig, path) -> Path:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def structure_figure(projection: str, mask: str, path, *, N: int = 4, h: int = 2, d: int = 2,
                     dv: int = 2) -> Path:
    """Three panels — W'_HV, W'_O, W'_HVO (duat sense, row flattening) — for one reading."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    from symuat.attention import mha_symbols
    from symuat.kernel.structure import generic_support

    s = mha_symbols(projection, mask)
    M = h * d
    sizes = {"N": N, "h": h, "d": d, "d_v": dv, "M": M}
    panels = [
        ("W'_HV", s.W_HV("row"), N * h * dv, N * (M if projection == "std" else M)),
        ("W'_O", s.W_O("row"), N * M, N * h * dv),
        ("(W'_HVO)ᵀ  (maps x' to H̊')", s.W_HVO("row"), N * M, N * M),
    ]
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.6))
    cmap = ListedColormap(["#f4f4f4", "#1f4e79"])
    for ax, (title, expr, rows, cols) in zip(axes, panels):
        pattern = generic_support(expr, sizes)
        ax.imshow(pattern, cmap=cmap, interpolation="nearest", vmin=0, vmax=1)
        density = pattern.mean()
        ax.set_title(f"{title}\n{pattern.shape[0]}×{pattern.shape[1]}, density {density:.3f}", fontsize=10)
        rb, cb = pattern.shape[0] // N, pattern.shape[1] // N
        for k in range(1, N):
            ax.axhline(k * rb - 0.5, color="#c0392b", lw=0.8)
            ax.axvline(k * cb - 0.5, color="#c0392b", lw=0.8)
        ax.set_xticks([k * cb + cb / 2 - 0.5 for k in range(N)], [f"in {k}" for k in range(N)], fontsize=7)
        ax.set_yticks([k * rb + rb / 2 - 0.5 for k in range(N)], [f"out {k}" for k in range(N)], fontsize=7)
    fig.suptitle(f"MHA lifts, {projection} projections, {mask} attention "
                 f"(N={N} tokens, h={h} heads, d={d}, d_v={dv}; red lines: token blocks)", fontsize=11)
    return _save(fig, path)


def dynamic_parameters_figure(texts: list[str], path, model: str = "minilm") -> Path:
    """How the input-dependent parameters of the DUAT form change with the input, per layer.

    Left: the size of each layer's attention matrix W'_MHA(x) = Σ_i H_i ⊗ B_iᵀ (Frobenius norm per
    token, from its factors). Middle: the dynamic bias e_j of the unrolled form (norm per token).
    Right: the LayerNorm scales 1/std of the last layer, token by token. One line per sentence.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from symuat.attention import MHAOperator, attention_patterns
    from symuat.models import BertNumpy, load_bert, model_path, tokenize
    from symuat.transformer import layer_norm_scales, to_duat

    folder = model_path(model)
    bert = BertNumpy(load_bert(folder))
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    for text in texts:
        ids = tokenize(text, folder)
        X = bert.embed(ids)
        N = X.shape[0]
        duat = to_duat(bert.blocks, X)
        norms, states = [], [X]
        for blk in bert.blocks:
            H = attention_patterns(states[-1], blk.WQ, blk.WK, blk.heads, projection="std", bQ=blk.bQ,
                                   bK=blk.bK, scale=blk.scale)
            B = MHAOperator(H, blk.WV, blk.WO, projection="std").blocks()
            # ‖Σ_i H_i ⊗ B_iᵀ‖_F² = Σ_{i,k} tr(H_iᵀH_k) tr(B_iᵀB_k)
            gram_H = np.einsum("inm,knm->ik", H, H)
            gram_B = np.einsum("iab,kab->ik", B, B)
            norms.append(np.sqrt(np.sum(gram_H * gram_B)) / np.sqrt(N))
            states.append(blk.forward(states[-1]))
        label = text if len(text) < 40 else text[:37] + "…"
        layers = np.arange(1, len(bert.blocks) + 1)
        axes[0].plot(layers, norms, "o-", label=label)
        axes[1].plot(layers, [np.linalg.norm(e) / np.sqrt(N) for e in duat.e], "o-", label=label)
        last = bert.blocks[-1]
        axes[2].plot(np.arange(N), layer_norm_scales(states[-2] + 0, last.eps), ".-", label=label)
    axes[0].set(title="‖W'_MHA(x)‖_F per token, by layer", xlabel="layer")
    axes[1].set(title="dynamic bias e_j of the DUAT form\n(norm per token)", xlabel="layer j", yscale="log")
    axes[2].set(title="LayerNorm 1/std per token entering the last layer", xlabel="token")
    for ax in axes:
        ax.legend(fontsize=7)
    fig.suptitle("all-MiniLM-L6-v2: the DUAT parameters depend on the input", fontsize=11)
    return _save(fig, path)
