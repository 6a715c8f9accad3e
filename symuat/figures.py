"""Pictures of structure: the zero/nonzero pattern of the MHA lifts, token blocks labelled.

Needs matplotlib (the ``docs`` extra). Patterns are computed exactly from the symbolic
constructions (:func:`symuat.kernel.structure.generic_support`), not from a float run.
"""

from __future__ import annotations

from pathlib import Path


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
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
