r"""The Gemma 2 family (``model_type`` gemma2): sandwich norms, GQA, alternating local (sliding-window)
and global layers, attention soft-capping, final-logit soft-capping, ``query_pre_attn_scalar``, the
embedding scale :math:`\sqrt M`, norm weights applied as :math:`1+w`. The folder reader, the layer and
the reference islands are :mod:`symuat.models.gemma_common`'s; the soft-caps :mod:`symuat.models.softcap`'s.

**The DUAT form.** One layer is Gemma 3's without the QK-norms: with the patterns :math:`H_i`, the RMS
scales of the four norms and the up-projection frozen at the layer's input it is exactly Eq. 20,
:math:`W1=I+D_{\rm post}AD_{\rm in}`, :math:`W3=D_{\rm post\,ffw}(I_N\otimes W_{\rm down}^\top)\operatorname{diag}(\operatorname{vec}_r(ZW_u))`.
The attention soft-cap :math:`c\tanh(s/c)` acts on the scores before the mask and the softmax, so it is
*inside* :math:`H_i`: frozen with the pattern, exact.

**The soft-capped logit** (X10): the logit is :math:`\mathrm{cap}_c(\ell)=c\tanh(\ell/c)` of the pre-cap
logit :math:`\ell=\rho\cdot x'_L`. symuat freezes the secant slope :math:`\kappa=\mathrm{cap}_c(\ell)/\ell`
at the model's own :math:`\ell` (like the σ-slopes of the attribution views), so the head frozen at the
last state is the linear lift :math:`D_\kappa(I_N\otimes W_E)S_f` and every term of the exact
decomposition of :math:`\ell` is multiplied by the same :math:`\kappa`: the terms sum to the capped logit
exactly (asserted by ``explain``), and :math:`\ell=\sum` terms :math:`/\kappa` is the pre-cap logit.

What changes the computation (anything else present is refused):

* ``config.json``: the Llama size fields (``hidden_size`` … ``head_dim``, ``rms_norm_eps``, ``vocab_size``,
  ``max_position_embeddings``, ``tie_word_embeddings``), ``hidden_activation`` (``hidden_act`` is not read by
  transformers' Gemma 2: inert), ``rope_parameters``/``rope_theta``/``rope_scaling`` (default, linear, llama3),
  ``query_pre_attn_scalar``, ``sliding_window``, ``layer_types`` (default: every second layer global,
  ``Gemma2Config``), ``final_logit_softcapping`` and ``attn_logit_softcapping`` (defaults 30 and 50; null: none);
  ``attention_bias`` and ``use_bidirectional_attention`` true are refused.
* Tensors: ``model.embed_tokens.weight``, ``model.norm.weight``, ``lm_head.weight`` (untied only, or equal to
  the embedding), per layer ``self_attn.{q,k,v,o}_proj.weight``, ``mlp.{gate,up,down}_proj.weight`` and the
  four norms ``input_layernorm``, ``post_attention_layernorm``, ``pre_feedforward_layernorm``,
  ``post_feedforward_layernorm``.
"""

from __future__ import annotations

from symuat.models import gemma_common
from symuat.models.family import Family
from symuat.models.softcap import FROZEN_ATTENTION, FROZEN_FINAL, SoftcapLM

FEATURES = ("sandwich norms: RMSNorm before and after each sub-layer, weights applied as 1 + w (WP10)",
            "GQA, head_dim != M/h, scores scaled by query_pre_attn_scalar^-1/2",
            "alternating local sliding-window and global layers (layer_types)",
            "attention soft-capping c tanh(s/c) inside the frozen patterns",
            "final-logit soft-capping: the capped logit = kappa x (the exact sum of the pre-cap terms), kappa the "
            "frozen secant slope",
            "tanh-GELU gated MLP, embedding scale sqrt(M), tied or untied head")

#: config.json fields that change the computation, each modelled (inert: gemma_common.INERT_FIELDS)
CONFIG_FIELDS = ("model_type", "vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
                 "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_activation", "hidden_act",
                 "max_position_embeddings", "rms_norm_eps", "tie_word_embeddings", "rope_parameters", "rope_theta",
                 "rope_scaling", "attention_bias", "query_pre_attn_scalar", "sliding_window", "layer_types",
                 "final_logit_softcapping", "attn_logit_softcapping", "use_bidirectional_attention")


def load_folder(folder) -> SoftcapLM:
    """A Hugging Face Gemma 2 folder (``config.json`` + ``*.safetensors`` + ``tokenizer.json``)."""
    return gemma_common.load_folder(folder, family="gemma2", model_type="gemma2")


def reference_islands(hf_model):
    """HF Gemma 2's float32 islands made float64 (:class:`symuat.models.gemma_common.GemmaIslands`)."""
    return gemma_common.GemmaIslands(hf_model)


REFERENCE_NOTE = ("transformers' {cls} built from the checkpoint's own files (from_pretrained{how}) in float64, "
                  "attn_implementation='eager' (the soft-caps in float64 as HF computes them); its float32 islands made "
                  "float64 for the call: Gemma2RMSNorm (x.float(), (1 + w).float()), the RoPE angles (HF's own "
                  "rope_init_fn evaluated in float64; position x inv_freq in float64), eager attention's softmax "
                  "(dtype=float32), and the embedding scale buffer torch.tensor(hidden_size ** 0.5) set to the "
                  "float64 sqrt(M). 'stock_hf_float64_gap' (on the text's first 'tokens' tokens, at most 1,024) is unpatched HF float64 vs the float64 forward: a finding "
                  "about HF, not a tolerance of symuat. HF's last hidden state is taken after the final RMSNorm, so "
                  "the last state is compared after that norm; HF's logits are soft-capped, as symuat's")

FROZEN = ("the attention patterns H_i of every layer and head (RoPE, the score scale, the attention soft-cap "
          "c tanh(s/c), the causal band of a local layer or the causal mask of a global one, softmax, at the input)",
          "the RMS scales of all four norms of every layer (input, post-attention, pre- and post-feed-forward: the "
          "sandwich norms' diagonal lifts) and of the final norm",
          "the gated MLP's up-projection W_u z (the dynamic W3 = D_post_ffw W_down diag(W_u z))",
          "the dynamic biases e_j = W2_j R_{j-1} inside each sigma (they carry the earlier layers' sigma-terms)",
          FROZEN_FINAL)
EXACT = ("with those frozen, the capped logit is an exact identity: logit = kappa (r.A_L x'_0 + sum_j r.U_{L,j} "
         "gelu_tanh(V_j x'_0 + e_j)) (no biases: c_L = 0), r the readout of the token at the last position through "
         "the final RMSNorm and the head, kappa = c tanh(l/c)/l the frozen secant slope of the final soft-cap at the "
         "pre-cap logit l (1 without a cap); the terms / kappa sum to l")

#: why ``symuat model fold`` refuses a Gemma 2 checkpoint
FOLD_REFUSAL = ("fold does not write Gemma 2 checkpoints (llama, bert). What §9 says would fold: the pre-norms "
                "input_layernorm and pre_feedforward_layernorm into W_Q, W_K, W_V and W_gate, W_up (WP1, with the "
                "multiplier 1 + w, WP10); what must stay: the sandwich post-norms (WP2.sandwich), and the unembedding "
                "is not centred: under final-logit soft-capping a per-row shift of the pre-cap logits changes the "
                "capped logits and the softmax (X10.wp3 is refuted with an exact counterexample; TransformerLens #650)")

FAMILY = Family(name="gemma2", kind="decoder", model_types=("gemma2",), features=FEATURES, load_folder=load_folder,
                frozen=FROZEN, exact=EXACT, reference_islands=reference_islands, reference_note=REFERENCE_NOTE,
                fold_refusal=FOLD_REFUSAL, module=__name__)

__all__ = ["FAMILY", "load_folder", "reference_islands", "REFERENCE_NOTE", "FROZEN", "EXACT", "CONFIG_FIELDS",
           "FROZEN_ATTENTION", "FOLD_REFUSAL"]
