"""Pictures of structure: the zero/nonzero pattern of the MHA lifts, token blocks labelled.

Needs matplotlib (the ``docs`` extra). Patterns are computed exactly from the symbolic
constructions (:func:`symuat.kernel.structure.generic_support`), not from a float run.
"""

from __future__ import annotations

from pathlib import Path


#: font sizes that stay readable when a figure is shown at page width (~900 px)
FONT = {"font.size": 14, "axes.titlesize": 15, "axes.labelsize": 14, "xtick.labelsize": 13,
        "ytick.labelsize": 13, "legend.fontsize": 13, "figure.titlesize": 16}


def _save(fig, path) -> Path:
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return path


def _mha_instance(projection: str, mask: str, N: int, M: int, h: int, seed: int = 0):
    """A random float64 MHA (weights and input) and its W'_HVO, densely (small sizes only)."""
    import numpy as np

    from symuat.expr.attention import MHAOperator, attention_patterns

    rng = np.random.default_rng(seed)
    d = M // h
    if projection == "split":
        WQ, WK, WV = (rng.standard_normal((h, d, d)) for _ in range(3))
        WO = rng.standard_normal((M, M))
    else:
        WQ, WK, WV = (rng.standard_normal((h, M, d)) for _ in range(3))
        WO = rng.standard_normal((h * d, M))
    X = rng.standard_normal((N, M))
    H = attention_patterns(X, WQ, WK, h, mask, projection=projection)
    return MHAOperator(H, WV, WO, projection=projection).dense()


def block_spectrum(projection: str, mask: str, *, N: int = 6, M: int = 8, h: int = 2, seed: int = 0):
    """Singular values of the N² token blocks of W'_HVO stacked as rows (each block flattened).

    H6's "entries are highly correlated", made precise: block (a, b) is Σ_i (H_i)_{ab} B_iᵀ, so
    every block lies in span{B_1ᵀ, …, B_hᵀ} and at most ``h`` singular values are nonzero.

    >>> s = block_spectrum("split", "bidir", N=4, M=4, h=2)
    >>> int((s > 1e-10 * s[0]).sum())
    2
    """
    import numpy as np

    W = _mha_instance(projection, mask, N, M, h, seed)
    blocks = W.reshape(N, M, N, M).transpose(0, 2, 1, 3).reshape(N * N, M * M)
    return np.linalg.svd(blocks, compute_uv=False)


def structure_figure(projection: str, mask: str, path, *, N: int = 4, h: int = 2, d: int = 2,
                     dv: int = 2) -> Path:
    """Four panels for one reading: the exact zero/nonzero patterns of W'_HV, W'_O and
    (W'_HVO)ᵀ (duat sense, row flattening, token blocks outlined) — "dense" — and the singular
    values of the token blocks of W'_HVO — "entries highly correlated": h nonzero values."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    from symuat.expr.attention import mha_symbols
    from symuat.kernel.structure import generic_support

    s = mha_symbols(projection, mask)
    M = h * d
    sizes = {"N": N, "h": h, "d": d, "d_v": dv, "M": M}
    panels = [
        ("$W'_{HV}$", s.W_HV("row")),
        ("$W'_{O}$", s.W_O("row")),
        ("$(W'_{HVO})^{T}$  (maps $x'$ to $\\mathring{H}'$)", s.W_HVO("row")),
    ]
    with plt.rc_context(FONT):
        fig, axes = plt.subplots(2, 2, figsize=(12, 11))
        cmap = ListedColormap(["#f4f4f4", "#1f4e79"])
        for ax, (title, expr) in zip(axes.flat, panels):
            pattern = generic_support(expr, sizes)
            ax.imshow(pattern, cmap=cmap, interpolation="nearest", vmin=0, vmax=1)
            ax.set_title(f"{title}\n{pattern.shape[0]}×{pattern.shape[1]}, density {pattern.mean():.3f}")
            rb, cb = pattern.shape[0] // N, pattern.shape[1] // N
            for k in range(1, N):
                ax.axhline(k * rb - 0.5, color="#c0392b", lw=1.2)
                ax.axvline(k * cb - 0.5, color="#c0392b", lw=1.2)
            ax.set_xticks([k * cb + cb / 2 - 0.5 for k in range(N)], [str(k + 1) for k in range(N)])
            ax.set_yticks([k * rb + rb / 2 - 0.5 for k in range(N)], [str(k + 1) for k in range(N)])
            ax.set_xlabel("input token")
            ax.set_ylabel("output token")
        axes[0, 0].legend(handles=[Patch(color="#1f4e79", label="structurally nonzero"),
                                   Patch(facecolor="#f4f4f4", edgecolor="#999", label="always zero")],
                          loc="upper center", bbox_to_anchor=(1.1, -0.16), ncol=2, frameon=False)
        Ns, Ms = 6, 8
        sv = block_spectrum(projection, mask, N=Ns, M=Ms, h=h)
        ax = axes[1, 1]
        k = np.arange(1, len(sv) + 1)
        floor = np.finfo(float).tiny
        ax.semilogy(k, np.where(sv > 0, sv, floor), "o", color="#1f4e79")
        ax.axvline(h + 0.5, color="#c0392b", ls="--", lw=1.2, label=f"h = {h} heads")
        ax.set_title(f"entries correlated: the {Ns * Ns} token blocks\nspan only {h} dimensions")
        ax.set_xlabel("index of singular value")
        ax.set_ylabel("singular value (float64)")
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        ax.legend(loc="upper right")
        fig.suptitle(f"MHA lifts, {projection} projections, {mask} attention (exact patterns: N={N} tokens, "
                     f"h={h} heads, d={d}, d_v={dv};\nspectrum: random float64 weights, N={Ns}, M={Ms}; "
                     "red lines: token blocks)")
        fig.tight_layout()
        return _save(fig, path)


def dynamic_parameters_figure(texts: list[str], path, bert) -> Path:
    """How the input-dependent parameters of the DUAT form change with the input, per layer, for a
    loaded BERT encoder ``bert`` (:class:`symuat.models.families.bert.BertNumpy`; passed in, so this
    numeric module does not import the model layer).

    Left: the size of each layer's attention matrix W'_MHA(x) = Σ_i H_i ⊗ B_iᵀ (Frobenius norm per
    token, from its factors). Middle: the dynamic bias e_j of the unrolled form (norm per token).
    Right: the LayerNorm scales 1/std of the last layer, token by token. One line per sentence.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from symuat.expr.attention import MHAOperator, attention_patterns
    from symuat.numeric.transformer import layer_norm_scales, to_duat

    curves = []
    for text in texts:
        ids = bert.tokenize(text)
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
        layers = np.arange(1, len(bert.blocks) + 1)
        curves.append((text, layers, norms, [np.linalg.norm(e) / np.sqrt(N) for e in duat.e],
                       layer_norm_scales(states[-2] + 0, bert.blocks[-1].eps)))
    from matplotlib.ticker import MaxNLocator

    with plt.rc_context(FONT):
        fig, axes = plt.subplots(1, 3, figsize=(13, 5.2))
        for k, (text, layers, norms, e_norms, scales) in enumerate(curves):
            style = dict(marker="os^"[k % 3], linestyle="-", label=f"sentence {k + 1}: “{text}”")
            axes[0].plot(layers, norms, **style)
            axes[1].plot(layers, e_norms, **style)
            axes[2].plot(np.arange(1, len(scales) + 1), scales, **style)
        axes[0].set(title="attention matrix $W'(x)$", xlabel="layer", ylabel="Frobenius norm per token")
        axes[1].set(title="dynamic bias $e_j$", xlabel="layer $j$", ylabel="norm per token")
        axes[2].set(title="LayerNorm scale, last layer", xlabel="token position", ylabel="1 / std of the token")
        for ax in axes:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.grid(alpha=0.3)
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=1, frameon=False, bbox_to_anchor=(0.5, -0.02))
        fig.suptitle("all-MiniLM-L6-v2: the parameters of the DUAT form depend on the input")
        fig.tight_layout(rect=(0, 0.12, 1, 1))
    return _save(fig, path)


def duat_terms_figure(dec, words, path) -> None:
    """The DUAT decomposition of one logit (``symuat.models.rewrite.decompose_logit``): the linear path,
    each layer's σ-term (0-based) and the bias terms with their running sum, and the linear path per
    input token."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    L = dec.layers.size
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4), gridspec_kw={"width_ratios": [4, 1]})
    x = np.arange(L + 2)
    vals = np.concatenate([[dec.linear], dec.layers, [dec.bias]])
    ax.bar(x, vals, color=["#777"] + ["#3a6ea5"] * L + ["#aaa"])
    ax.plot(x, np.cumsum(vals), "o-", color="#c0392b", ms=3, label="running sum")
    ax.axhline(dec.logit, color="#c0392b", ls=":", lw=1, label=f"model logit {dec.logit:.4f}")
    ax.set_xticks(x, ["lin"] + [str(j) for j in range(L)] + ["bias"], fontsize=7)
    ax.set_xlabel("term: linear path from the embeddings, σ-term of layer j, bias")
    ax.set_ylabel(f"contribution to the logit of {dec.token_text!r}")
    ax.set_title(f"exact DUAT decomposition (|sum − logit| = {dec.abs_error:.1e})", fontsize=10)
    ax.legend(fontsize=8)
    ax2.barh(np.arange(len(words)), dec.linear_per_token, color="#777")
    ax2.set_yticks(np.arange(len(words)), [repr(w) for w in words], fontsize=7)
    ax2.invert_yaxis()
    ax2.set_title("linear path, per input token", fontsize=9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
