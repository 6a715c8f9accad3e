"""What a reading tag means: one line per reading axis, for the claim pages' legends.

A check's key names its reading with tags (``P5.f[C-col,LR,square,W12x]``). The tags are values of
the reading axes of ``claims.md`` §0.3 and of the entries (:data:`symuat.verdicts.roll_up.AXES`, and
``key=value`` tags, whose key is the axis). :func:`legend` turns the tags a claim uses into one
line per axis — its question, then each value used and what it means — so a page defines every
tag it shows. A tag that names no axis is an *item* (each must hold: ``Eq. 24``, ``aaai``).

>>> for line in legend(["C-col", "LR", "square", "W12x", "RL"]): print(line)
mm — matrix ⋄ matrix (D5, never defined): C-col = A ⋄ B is AᵀB, column by column as D4
parse — an unbracketed chain a ⋄ b ⋄ c: LR = (a ⋄ b) ⋄ c; RL = a ⋄ (b ⋄ c)
shape — the shapes: square = all matrices n × n, as stated
last — the last member of P5's printed preamble: W12x = W₁₂x
"""

from __future__ import annotations

#: the reading syntax, where readings are printed (``report``, ``prove --group``, ``show``)
READINGS = ("readings: tags joined by ',' make one reading (one choice per axis, e.g. C-col,LR); "
            "';' separates readings; a|b on an axis: either value (nnz-frac,col|row is two readings)")

#: axis → (its question, {value: meaning}); the axes of symuat.verdicts.roll_up.AXES and the keyed ones
AXIS_TEXT: dict[str, tuple[str, dict[str, str]]] = {
    "flattening": ("how a token matrix is flattened into a vector (T_D)",
                   {"col": "vec_c, column-major", "row": "vec_r, row-major"}),
    "prime": ("what the prime means (x' = T_D(x), W' the lifted matrix)",
              {"dia": "y' = (W')ᵀx', the ⋄ sense", "duat": "y' = W'x'",
               "transposed": "the lift of Wᵀ (H4's transposed sense)"}),
    "mm": ("matrix ⋄ matrix (D5, never defined)",
           {"C-col": "A ⋄ B is AᵀB, column by column as D4", "C-prod": "A ⋄ B is the ordinary product AB"}),
    "parse": ("an unbracketed chain a ⋄ b ⋄ c", {"LR": "(a ⋄ b) ⋄ c", "RL": "a ⋄ (b ⋄ c)"}),
    "shape": ("the shapes", {"conf": "any conformable shapes, non-square too (symuat's generalisation)",
                             "square": "all matrices n × n, as stated"}),
    "projections": ("the MHA projections (H0)", {"split": "the paper's per-head slices",
                                                 "std": "standard full-width projections"}),
    "mask": ("the attention mask", {"bidir": "none (every token sees every token)",
                                    "causal": "token n sees tokens n' ≤ n only"}),
    "lift": ("what a lifted parameter may depend on", {"const": "the layer's parameters only",
                                                       "pointwise": "also the input"}),
    "list": ("a list of reassignments", {"seq": "evaluated one by one, in printed order",
                                         "sim": "every right side uses the values before the list"}),
    "alpha": ("the outer weights of D2", {"α-full": "a full matrix", "α-diag": "a diagonal matrix"}),
    "beta": ("L1's bias", {"β-const": "a constant vector", "β(x)": "a function of the input"}),
    "side": ("the side of the operation", {"left": "the left factor or argument", "right": "the right one"}),
    "sparsity": ("what 'sparsity' counts", {"nnz-frac": "the fraction of nonzero entries",
                                            "zero-frac": "the fraction of zero entries"}),
    "x_i": ("what x_i is in H5", {"slice": "a slice of the input", "input": "the whole input"}),
    "lhs": ("H5's left side", {"matrix": "the output as a matrix", "flat": "the flattened output"}),
    "last": ("the last member of P5's printed preamble",
             {"W12": "W₁₂, read literally", "W12x": "W₁₂x", "W12dia": "W₁₂ ⋄ x"}),
    "block": ("the Transformer block", {"B-both": "y = x + MHA(x), next = y + FFN(y) (both skips)",
                                       "B-ffn": "y = MHA(x), next = y + FFN(y) (the FFN skip only)"}),
    "form": ("the form the result is compared with", {"D2": "the static UAT form (D2)",
                                                      "D6": "the dynamic UAT form (D6)"}),
    "d3to4": ("how D3's lifts lead to H4", {"lifts": "through the lifts D3 defines", "arbitrary": "any matrices"}),
    "layernorm": ("the LayerNorm", {"none": "no LayerNorm", "pre": "before each sub-layer (pre-norm)",
                                    "post": "after each residual sum (post-norm)"}),
    "network": ("the network unrolled", {"eq20": "the Eq. 20 form (DUAT per layer)",
                                         "eq30": "the Eq. 30/31 form (Transformer blocks)"}),
    # key=value axes of the entries
    "W1": ("T3's W'_{i+1,1}", {"mha": "(W'_HVO)ᵀ(x_i)", "id+mha": "I + (W'_HVO)ᵀ(x_i)"}),
    "W1rhs": ("W'_{j+1,1} on the right of T8's later rules", {"acc": "the value the first rule just produced",
                                                             "raw": "the raw W1_{j+1}"}),
    "unprimed": ("T8's unprimed W_{j,1}, b_{j,3}", {"acc": "the combined values after step j−1", "raw": "raw"}),
    "abs": ("the absorption W'_{j,2} ← W'_{j,2}W'_{j,1} (Eq. 31)",
            {"all": "at every layer", "j1": "at j = 1 only, as the i = 0 list shows",
             "none": "never (symuat's, for the Eq. 20 form)"}),
    "W3": ("the index or update of W'_{·,3}", {"all": "multiplied by every later raw W1_t", "once": "once, by W'_{j+1,1}",
                                              "i": "W'_{i,3} in front of σ", "i+1": "W'_{i+1,3} in front of σ",
                                              "multiplied": "multiplied by the reassignment",
                                              "unchanged": "left unchanged"}),
    "W2": ("the W'_{i+1,2} on the right of T6", {"absorbed": "already absorbed (Eq. 31)", "raw": "not absorbed"}),
    "W2in34": ("Eq. 34's W'_{j,2}", {"final": "the final combined matrix",
                                     "layer": "the layer's own (after absorption, before accumulation)"}),
    "W3in34": ("Eq. 34's W'_{k,3}", {"final": "its final value", "stage": "its value after layer j−1's updates"}),
    "b3in34": ("Eq. 34's b'_{j−1,3}", {"acc": "the accumulated linear-path bias", "raw": "the raw bias of layer j−1"}),
    "index": ("the layer index of T1's parameters", {"i": "index i", "i+1": "index i+1"}),
    "b_i1,b_i3": ("T5's b_{i,1} and b_{i,3}", {"one": "one quantity", "two": "two quantities"}),
    "W13": ("L2's W'_{i+1,1} in front of UAT^R_i", {"original": "raw", "reassigned": "reassigned"}),
    "front": ("L2's factor in front of UAT^R_i", {"raw": "raw", "reassigned": "reassigned"}),
    "hyp": ("the smallness hypothesis of A1", {"S1": "|S₁| → 0 (UAT)", "S2": "|S₂| → 0 (DUAT)", "none": "none"}),
    "to0": ("A1's '→ 0'", {"limit": "a limit along a sequence of networks", "uniform": "a uniform bound sup|S_k| ≤ δ"}),
    "sums": ("UAT Eq. 12's index ranges", {"literal": "j = 1..N₁, j = 1..N₂ as printed", "Λ": "sums over Λ₁, Λ₂"}),
    "layers": ("what A2's 'layers' are", {"units": "hidden units of D1's one-hidden-layer sum",
                                          "deep": "layers of a deep network"}),
    "parameters": ("which parameters are small (A2)", {"inner": "the inner w_j, θ_j", "outer": "the outer α_j",
                                                      "all": "all of them"}),
    "σ": ("the activation", {"logistic": "the logistic sigmoid", "tanh": "tanh", "relu": "ReLU", "gelu": "GELU"}),
    "rest": ("the other parameters (A2)", {"fixed": "held fixed", "any": "arbitrary"}),
    "Δ": ("A4's ΔW", {"induced": "the change fine-tuning induces in the combined parameter",
                      "raw": "the lift of the raw LoRA increment"}),
    "b2": ("A4's b'_{j,2}", {"kept": "unchanged", "recomputed": "recomputed (T9) from the fine-tuned network"}),
    "idx": ("the index of A4's ΔW", {"j": "j", "j+1": "j+1, as printed"}),
    "op": ("the operator before σ in Eq. 18", {"plus": "+, as printed", "times": "a product, as in Eq. 11"}),
    "layer-wise": ("which layers A4's LoRA adjusts", {"k": "layer k only", "≥k": "layer k and every later one"}),
    "rank": ("the LoRA rank", {"r": "r"}),
}


def _axis_of(tag: str) -> tuple[str, str] | None:
    from symuat.verdicts.roll_up import TAG_AXIS

    if tag in TAG_AXIS:
        return TAG_AXIS[tag], tag
    if "=" in tag:
        key, value = tag.rsplit("=", 1)
        return key, value
    return None


def legend(tags) -> list[str]:
    """One line per axis among ``tags`` (in the order of first use): the axis, its question and
    the meaning of each value used; then one line for the items, if any."""
    axes: dict[str, list[str]] = {}
    shown: dict[str, list[str]] = {}
    items: list[str] = []
    for tag in tags:
        hit = _axis_of(tag)
        if hit is None:
            if tag not in items:
                items.append(tag)
            continue
        axis, value = hit
        if value not in axes.setdefault(axis, []):
            axes[axis].append(value)
            shown.setdefault(axis, []).append(tag)
    lines = []
    for axis, values in axes.items():
        question, meanings = AXIS_TEXT.get(axis, (f"the reading of {axis}", {}))
        keyed = "=" in shown[axis][0]
        parts = [f"{tag} = {meanings[v]}" if v in meanings else tag
                 for tag, v in zip(shown[axis], values)]
        lines.append(f"{axis} — {question}: " + "; ".join(parts) if not keyed
                     else f"{axis}=… — {question}: " + "; ".join(parts))
    if items:
        lines.append("items — not readings; each must hold: " + ", ".join(items))
    return lines
