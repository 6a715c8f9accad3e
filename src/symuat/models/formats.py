"""Checkpoint file formats, for every model family: ``config.json`` (typed fields, every field
accounted for), ``*.safetensors``, GGUF (metadata and tensors, dequantized to float64) and the
tokenizers. Every error is a :class:`ModelError` whose message starts with the file and says what
is wrong; nothing here knows a family.

* :class:`Fields` — a ``config.json`` (or GGUF metadata) read field by field with its type checked;
  it records what was read, so :meth:`Fields.refuse_unknown` refuses every field a family neither
  models nor knows to be inert;
* :class:`Tensors` — named float64 tensors taken by shape; :meth:`Tensors.refuse_unused` refuses a
  tensor nobody took (a bias the family does not model, a ``rope_freqs`` it would drop);
* :class:`GGUFFile` — a GGUF v2/v3 file read with ``struct`` (fast; ``gguf`` dequantizes);
* :func:`read_config`, :func:`read_safetensors`, :func:`folder_tensors`, :func:`json_tokenizer`,
  :func:`gguf_tokenizer`.

>>> f = Fields("config.json", {"hidden_size": 8, "rms_norm_eps": 1e-5, "use_cache": True})
>>> f.int("hidden_size"), f.number("rms_norm_eps")
(8, 1e-05)
>>> f.inert("use_cache")
>>> f.refuse_unknown("llama", "")
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np

from symuat.errors import SymuatError


class ModelError(SymuatError, ValueError):
    """A model cannot be loaded or used: the message names the file or the input and the problem."""


_MISSING = object()


class InMemory:
    """A checkpoint held in memory (:func:`symuat.models.memory.from_hf`): the ``config.json`` dict,
    the tensors and the tokenizer its saved folder would hold, read by the family loaders through
    :func:`check_folder`, :func:`read_config`, :func:`folder_tensors` and :func:`json_tokenizer`
    exactly as a folder is. Its name (``<in memory …>``) stands for the folder in messages.

    >>> m = InMemory("<in memory>", {"model_type": "llama"}, {}, None)
    >>> read_config(m)
    (PosixPath('<in memory>/config.json'), {'model_type': 'llama'})
    """

    def __init__(self, name: str, config: dict, tensors: dict, tokenizer):
        self.name, self.config, self.tensors, self.tokenizer = name, config, tensors, tokenizer

    def __fspath__(self) -> str:
        return self.name

    def __str__(self) -> str:
        return self.name

    def __truediv__(self, other) -> Path:
        return Path(self.name) / other


# --------------------------------------------------------------------------------------------
# files and folders
# --------------------------------------------------------------------------------------------


def read_bytes(path: Path, what: str) -> bytes:
    """The bytes of ``path``; a missing, unreadable or non-regular file is a :class:`ModelError`."""
    path = Path(path)
    try:
        return path.read_bytes()
    except FileNotFoundError as exc:
        raise ModelError(f"{path}: missing {what}") from exc
    except IsADirectoryError as exc:
        raise ModelError(f"{path}: a folder, not the {what}") from exc
    except PermissionError as exc:
        raise ModelError(f"{path}: cannot read the {what} (permission denied)") from exc
    except OSError as exc:
        raise ModelError(f"{path}: cannot read the {what} ({exc.strerror or exc})") from exc


def map_bytes(path: Path, what: str):
    """The bytes of ``path`` mapped read-only (``mmap``): a page is read when it is used, and a
    tensor kept in the file's form is a view of its pages, not a copy; the errors of :func:`read_bytes`
    (an empty file is read as ``b""``)."""
    import mmap

    path = Path(path)
    try:
        with path.open("rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
    except (OSError, ValueError):  # the messages of read_bytes, which meets the same errors
        return read_bytes(path, what)


def check_folder(folder: Path) -> Path:
    """``folder`` exists, is a folder and can be listed and read."""
    if isinstance(folder, InMemory):
        return folder
    folder = Path(folder)
    if not folder.exists():
        raise ModelError(f"{folder}: no such file or folder")
    if not folder.is_dir():
        raise ModelError(f"{folder}: not a folder (a checkpoint folder holds config.json and *.safetensors)")
    try:
        next(iter(folder.iterdir()), None)
    except PermissionError as exc:
        raise ModelError(f"{folder}: cannot read the folder (permission denied)") from exc
    except OSError as exc:
        raise ModelError(f"{folder}: cannot read the folder ({exc.strerror or exc})") from exc
    return folder


def read_config(folder: Path, *, kind: str = "checkpoint") -> tuple[Path, dict]:
    """``folder/config.json`` as a dict: present, readable, valid JSON, an object."""
    if isinstance(folder, InMemory):
        return folder / "config.json", dict(folder.config)
    path = check_folder(folder) / "config.json"
    if not path.exists():
        raise ModelError(f"{path}: missing (a {kind} folder needs config.json)")
    text = read_bytes(path, "config file")
    try:
        config = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError(f"{path}: not valid JSON ({exc})") from exc
    if not isinstance(config, dict):
        raise ModelError(f"{path}: not a JSON object")
    return path, config


def require_keys(path: Path, config: dict, required: tuple[str, ...], positive: tuple[str, ...]) -> None:
    """Every ``required`` key is in ``config`` and every ``positive`` key is a positive integer."""
    f = Fields(path, config)
    for key in required:
        f.raw(key)
    for key in positive:
        f.int(key)


# --------------------------------------------------------------------------------------------
# typed fields: config.json or GGUF metadata
# --------------------------------------------------------------------------------------------


class Fields:
    """A mapping of fields (``config.json``, GGUF metadata) read with its types checked.

    Every accessor records the key as *used*; :meth:`inert` records keys known not to change the
    computation; :meth:`refuse_unknown` raises on any other key present. ``what`` names the kind
    of field in messages (``field``, ``GGUF metadata key``)."""

    def __init__(self, path, data: dict, *, what: str = "field", prefix: str = ""):
        self.path, self.data, self.what, self.prefix = Path(path), data, what, prefix
        self.used: set[str] = set()

    def _key(self, key: str) -> str:
        return self.prefix + key

    def has(self, key: str) -> bool:
        return self._key(key) in self.data

    def raw(self, key: str, default=_MISSING):
        k = self._key(key)
        self.used.add(k)
        if k in self.data:
            return self.data[k]
        if default is _MISSING:
            raise ModelError(f"{self.path}: missing the {self.what} {k!r}")
        return default

    def fail(self, key: str, problem: str):
        what = "" if self.what == "field" else self.what + " "
        raise ModelError(f"{self.path}: {what}{self._key(key)} {problem}")

    def int(self, key: str, default=_MISSING, *, minimum: int = 1) -> int:
        value = self.raw(key, default)
        if value is None and default is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
            kind = "a positive integer" if minimum == 1 else f"an integer ≥ {minimum}"
            self.fail(key, f"must be {kind}, not {value!r}")
        return int(value)

    def number(self, key: str, default=_MISSING, *, positive: bool = True) -> float:
        value = self.raw(key, default)
        if value is None and default is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not math.isfinite(float(value)) or (positive and value <= 0):
            kind = "a positive finite number" if positive else "a finite number"
            self.fail(key, f"must be {kind}, not {value!r}")
        return float(value)

    def flag(self, key: str, default=_MISSING) -> bool:
        value = self.raw(key, default)
        if not isinstance(value, bool):
            self.fail(key, f"must be true or false, not {value!r}")
        return value

    def choice(self, key: str, choices, default=_MISSING):
        value = self.raw(key, default)
        if value not in choices:
            self.fail(key, f"is {value!r}; symuat supports {', '.join(repr(c) for c in choices)}")
        return value

    def require(self, key: str, ok: bool, problem: str):
        """Refuse ``key`` with ``problem`` unless ``ok`` (a value symuat does not model)."""
        self.used.add(self._key(key))
        if not ok:
            self.fail(key, problem)

    def inert(self, *keys: str) -> None:
        self.used.update(self._key(k) for k in keys)

    def refuse_unknown(self, family: str, supported: str, *, ignore=()) -> None:
        """Refuse the first field present that was neither read nor declared inert."""
        for key in self.data:
            if key in self.used or any(key.startswith(p) for p in ignore):
                continue
            raise ModelError(f"{self.path}: {self.what} {key!r} is not modelled by symuat's {family} family and "
                             f"not known to be inert, so symuat refuses the checkpoint rather than ignore it"
                             + (f" ({supported})" if supported else ""))


# --------------------------------------------------------------------------------------------
# tensors
# --------------------------------------------------------------------------------------------


class Tensors:
    """Named tensors (float64) of one checkpoint, taken by name and shape; the unused are refused."""

    def __init__(self, tensors: dict[str, np.ndarray], source: Path, *, names: dict[str, str] | None = None):
        self.tensors, self.source = tensors, Path(source)
        self.names = names or {}  # symuat's name → the file's own name (GGUF), for messages
        self.used: set[str] = set()

    def __contains__(self, key: str) -> bool:
        return key in self.tensors

    def _name(self, key: str) -> str:
        return self.names.get(key, key)

    def take(self, key: str, shape: tuple, *, finite: bool = False) -> np.ndarray:
        if key not in self.tensors:
            raise ModelError(f"{self.source}: tensor {self._name(key)!r} is missing")
        self.used.add(key)
        value = self.tensors[key]
        if not getattr(value, "streamed", False):  # a QuantizedRows stays in its file's form
            value = np.asarray(value, dtype=np.float64)
        if value.shape != tuple(shape):
            raise ModelError(f"{self.source}: tensor {self._name(key)!r} has shape {value.shape}, expected "
                             f"{tuple(shape)}")
        if finite:
            ok = np.isfinite(np.asarray(value))
            if not ok.all():
                bad = np.argwhere(~ok)
                raise ModelError(f"{self.source}: tensor {self._name(key)!r} has {len(bad)} non-finite value(s) "
                                 f"(NaN or inf), the first at index {tuple(int(i) for i in bad[0])}")
        return value

    def optional(self, key: str, shape: tuple, *, finite: bool = False) -> np.ndarray | None:
        return self.take(key, shape, finite=finite) if key in self.tensors else None

    def ignore(self, key: str) -> None:
        self.used.add(key)

    def refuse_unused(self, family: str, supported: str) -> None:
        for key in sorted(self.tensors):
            if key not in self.used:
                raise ModelError(f"{self.source}: tensor {self._name(key)!r} is not part of the {family} computation "
                                 f"symuat models, so symuat refuses the checkpoint rather than ignore it ({supported})")


#: safetensors dtypes read exactly: each is widened to float64 without rounding (bf16 is the top
#: half of a float32: its 16 bits shifted left 16 are the float32's bits); integer tensors (buffers
#: such as BERT's ``position_ids``) are read as stored
SAFETENSORS_FLOATS = {"BF16": "<u2", "F16": "<f2", "F32": "<f4", "F64": "<f8"}
SAFETENSORS_INTS = {"BOOL": "?", "U8": "u1", "I8": "i1", "U16": "<u2", "I16": "<i2", "U32": "<u4", "I32": "<i4",
                    "U64": "<u8", "I64": "<i8"}


def bf16_to_float32(bits: np.ndarray) -> np.ndarray:
    """bfloat16 values (their uint16 bit patterns) as float32, exactly: the bits are the top half.

    >>> bf16_to_float32(np.array([0x3F80, 0xC000, 0x3EAB], dtype=np.uint16)).tolist()
    [1.0, -2.0, 0.333984375]
    """
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def parse_safetensors(data: bytes, path: Path) -> dict[str, np.ndarray]:
    """The tensors of a safetensors file's bytes (8-byte header length, JSON header, data), read
    with NumPy: floats widened exactly (``BF16`` → float32 bits, then any float is exactly a
    float64), integers as stored; any other dtype (``F8_E4M3`` …) is refused naming the tensor.

    >>> import struct, json
    >>> head = json.dumps({"w": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}}).encode()
    >>> blob = struct.pack("<Q", len(head)) + head + np.array([0x3F80, 0x4040], "<u2").tobytes()
    >>> parse_safetensors(blob, Path("m.safetensors"))["w"].tolist()
    [1.0, 3.0]
    """
    import struct

    def corrupt(problem: str):
        return ModelError(f"{path}: not a readable safetensors file ({problem}); the file is truncated or corrupt")

    if len(data) < 8:
        raise corrupt(f"{len(data)} bytes, shorter than the 8-byte header length")
    (n,) = struct.unpack_from("<Q", data, 0)
    if 8 + n > len(data):
        raise corrupt(f"a header of {n} bytes in a file of {len(data)}")
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise corrupt(f"the header is not JSON: {exc}") from exc
    if not isinstance(header, dict):
        raise corrupt("the header is not a JSON object")
    body = memoryview(data)[8 + n:]
    out: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype, shape, (begin, end) = info["dtype"], [int(s) for s in info["shape"]], info["data_offsets"]
        except (TypeError, KeyError, ValueError) as exc:
            raise corrupt(f"tensor {name!r} has no dtype, shape and data_offsets") from exc
        kind = SAFETENSORS_FLOATS.get(dtype) or SAFETENSORS_INTS.get(dtype)
        if kind is None:
            raise ModelError(f"{path}: tensor {name!r} has dtype {dtype}, which symuat cannot widen exactly to "
                             f"float64 (it reads {', '.join(SAFETENSORS_FLOATS)} and integer tensors)")
        count = math.prod(shape)
        width = np.dtype(kind).itemsize
        if not (0 <= begin <= end <= len(body)) or end - begin != count * width or min(shape, default=0) < 0:
            raise corrupt(f"tensor {name!r} of shape {shape} ({dtype}) has data_offsets {[begin, end]} in a data "
                          f"section of {len(body)} bytes")
        values = np.frombuffer(body, dtype=kind, count=count, offset=begin).reshape(shape)
        out[name] = bf16_to_float32(values) if dtype == "BF16" else values.copy()
    return out


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of one ``.safetensors`` file (:func:`parse_safetensors`: floats widened exactly,
    ``BF16`` to float32, the others as stored)."""
    path = Path(path)
    return parse_safetensors(read_bytes(path, "weights file"), path)


SHARD_INDEX = "model.safetensors.index.json"


def weight_files(folder: Path) -> list[tuple[Path, set[str] | None]]:
    """The weights files of a checkpoint folder: the shards ``model.safetensors.index.json`` lists
    (each with the tensors its ``weight_map`` puts there), or every ``*.safetensors`` file."""
    folder = Path(folder)
    index = folder / SHARD_INDEX
    if not index.exists():
        files = sorted(folder.glob("*.safetensors"))
        if not files:
            raise ModelError(f"{folder}: no *.safetensors weights file")
        return [(f, None) for f in files]
    try:
        data = json.loads(read_bytes(index, "shard index").decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError(f"{index}: not valid JSON ({exc})") from exc
    wmap = data.get("weight_map") if isinstance(data, dict) else None
    if not isinstance(wmap, dict) or not all(isinstance(v, str) for v in wmap.values()):
        raise ModelError(f"{index}: has no weight_map object (tensor name → shard file)")
    shards: dict[str, set[str]] = {}
    for name, shard in wmap.items():
        if Path(shard).name != shard:
            raise ModelError(f"{index}: tensor {name!r} is mapped to {shard!r}, not a file of the folder")
        shards.setdefault(shard, set()).add(name)
    for shard in sorted(shards):
        if not (folder / shard).is_file():
            raise ModelError(f"{folder / shard}: missing shard (listed in {SHARD_INDEX})")
    for extra in sorted(folder.glob("*.safetensors")):
        if extra.name not in shards:
            raise ModelError(f"{extra}: a weights file {SHARD_INDEX} does not list, so symuat refuses the folder "
                             "rather than guess whether it belongs to the checkpoint")
    return [(folder / shard, names) for shard, names in sorted(shards.items())]


def tensors_float64(named) -> dict[str, np.ndarray]:
    """``(source, name, array)`` triples as one float64 mapping; a name given twice is refused."""
    out: dict[str, np.ndarray] = {}
    for source, k, v in named:
        if k in out:
            raise ModelError(f"{source}: tensor {k!r} is also in another *.safetensors file of the folder")
        out[k] = np.asarray(v, dtype=np.float64)
    return out


def folder_tensors(folder: Path) -> dict[str, np.ndarray]:
    """Every tensor of a checkpoint folder's weights (:func:`weight_files`: one file, several, or
    the shards of ``model.safetensors.index.json``), widened exactly to float64."""
    if isinstance(folder, InMemory):
        return dict(folder.tensors)
    def named():
        for f, listed in weight_files(folder):
            tensors = read_safetensors(f)
            if listed is not None and set(tensors) != listed:
                odd = sorted(set(tensors) ^ listed)[0]
                where = "holds" if odd in tensors else "lacks"
                raise ModelError(f"{f}: the shard {where} tensor {odd!r}, against the weight_map of {SHARD_INDEX}")
            for k, v in tensors.items():
                yield f, k, v
    return tensors_float64(named())


# --------------------------------------------------------------------------------------------
# GGUF
# --------------------------------------------------------------------------------------------


def supported_quants() -> list[str]:
    """GGUF tensor types the reader dequantizes: those ``gguf.quants.dequantize`` knows, and F16/F32/F64."""
    import gguf

    names = {"F32", "F16", "F64"} | {q.name for q in getattr(gguf.quants, "_type_traits", {})}
    return sorted(names)


class GGUFFile:
    """The metadata and tensor table of a GGUF file (v2/v3), read directly with ``struct``.

    ``gguf.GGUFReader`` builds a memory-mapped view per array element (≈ 15 s for SmolLM2's
    98 000 tokenizer strings); this reads the same layout in well under a second. Any read past
    the end of the file is a :class:`ModelError` (truncated file).
    """

    _SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}

    def __init__(self, path: Path):
        import struct

        self.path = path = Path(path)
        if path.is_dir():
            raise ModelError(f"{path}: a folder, not a GGUF file")
        self.buf = buf = map_bytes(path, "GGUF file")
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
        align = self.fields.get("general.alignment", 32)
        if isinstance(align, bool) or not isinstance(align, int) or align < 1:
            raise ModelError(f"{path}: GGUF metadata key general.alignment must be a positive integer, not {align!r}")
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
        if not ne or ne[0] % block:
            raise ModelError(f"{self.path}: tensor {name!r} ({qt.name}) has a row of {ne[0] if ne else 0} values, "
                             f"not a multiple of the block size {block}")
        row_bytes = ne[0] // block * type_size
        nbytes = n // block * type_size
        start = self.data_start + offset
        if start + nbytes > len(self.buf):
            raise ModelError(f"{self.path}: tensor {name!r} ends at byte {start + nbytes}, the file at "
                             f"{len(self.buf)}; the file is truncated or corrupt")
        data = np.frombuffer(self.buf, dtype=np.uint8, count=nbytes, offset=start).reshape(-1, row_bytes)
        return qt.name, data

    def tensor_arrays(self, rows: tuple[str, ...] = ()) -> tuple[dict[str, np.ndarray], dict[str, str]]:
        """Every tensor dequantized to float64 in the shape ``(ne_{k-1}, …, ne_0)``; and its type name.
        The 2-D tensors named in ``rows`` are kept in the file's form instead, their rows dequantized
        when read (:class:`~symuat.models.quantized_rows.QuantizedRows`: a tied vocabulary)."""
        import mmap

        from symuat.models.quantized_rows import QuantizedRows, dequantize

        tensors, quant = {}, {}
        for name, ne, qtype, offset in self.tensors:
            qname, data = self.raw(name, ne, qtype, offset)
            quant[name] = qname
            shape = tuple(int(s) for s in reversed(ne))  # GGUF lists ne0 (the fastest, 'in') first
            try:
                if name in rows and len(shape) == 2:
                    dequantize(data[:1], qname)  # a type gguf cannot dequantize is refused here, by name
                    tensors[name] = QuantizedRows(data, qname, shape)  # a view of the file's pages
                else:
                    tensors[name] = _dequantize_rows(data, qname).reshape(shape)
            except NotImplementedError as exc:
                raise ModelError(f"{self.path}: tensor {name!r} has quantization type {qname}, which symuat cannot "
                                 f"dequantize (supported: {', '.join(supported_quants())})") from exc
        if isinstance(self.buf, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
            self.buf.madvise(mmap.MADV_DONTNEED)  # the pages read so far leave the process (re-read if used)
        return tensors, quant

    def get(self, key: str, default=None):
        if key in self.fields:
            return self.fields[key]
        if default is not None:
            return default
        raise ModelError(f"{self.path}: GGUF metadata key {key!r} is missing")


def _dequantize_rows(data: np.ndarray, qtype: str) -> np.ndarray:
    """:func:`~symuat.models.quantized_rows.dequantize` applied ``BLOCK_ROWS`` rows at a time (a
    row's blocks are dequantized from that row's bytes alone, so the float32 temporaries of
    ``gguf``'s dequantizer stay small: a 262,144-row embedding is never held in float32 beside its
    float64), into one float64 array."""
    from symuat.models.quantized_rows import BLOCK_ROWS, dequantize

    rows = data.reshape(-1, data.shape[-1]) if data.ndim > 1 else data.reshape(1, -1)
    first = dequantize(rows[:BLOCK_ROWS], qtype)
    out = np.empty((rows.shape[0], first.shape[-1]), dtype=np.float64)
    out[:first.shape[0]] = first
    for r0 in range(BLOCK_ROWS, rows.shape[0], BLOCK_ROWS):
        out[r0:r0 + BLOCK_ROWS] = dequantize(rows[r0:r0 + BLOCK_ROWS], qtype)
    return out


def gguf_hf_name(name: str, blocks: dict[str, str], top: dict[str, str]) -> str:
    """A GGUF tensor name → transformers' name: ``top`` for whole-model tensors
    (``token_embd.weight`` …), ``blocks`` for ``blk.{i}.{part}.{weight|bias}`` parts; any other
    name is returned unchanged (the caller refuses it as unexpected)."""
    if name in top:
        return top[name]
    parts = name.split(".")
    if parts[0] == "blk" and len(parts) == 4 and parts[2] in blocks:
        return f"model.layers.{parts[1]}.{blocks[parts[2]]}.{parts[3]}"
    return name


def open_gguf(path) -> GGUFFile:
    path = Path(path)
    if not path.exists():
        raise ModelError(f"{path}: missing GGUF file")
    try:
        import gguf  # noqa: F401
    except ImportError as exc:
        raise ModelError("reading .gguf files needs the gguf package: pip install -e '.[model]'") from exc
    return GGUFFile(path)


# --------------------------------------------------------------------------------------------
# tokenizers
# --------------------------------------------------------------------------------------------


def json_tokenizer(folder: Path, *, required: bool = False, rows: int | None = None):
    """``folder/tokenizer.json`` as a ``tokenizers.Tokenizer`` (no padding, no truncation), or None;
    with ``rows`` (the checkpoint's embedding rows, its ``vocab_size``) refused unless it is this
    checkpoint's tokenizer (:func:`check_tokenizer_fits`). An in-memory checkpoint's tokenizer is
    held to the same rule."""
    if isinstance(folder, InMemory):
        if rows is not None and folder.tokenizer is not None:
            check_tokenizer_fits(folder.tokenizer, rows, "the tokenizer given with the model")
        return folder.tokenizer
    path = Path(folder) / "tokenizer.json"
    if not path.exists():
        if required:
            raise ModelError(f"{path}: missing tokenizer file")
        return None
    data = read_bytes(path, "tokenizer file")
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ModelError("tokenizing needs the tokenizers package: pip install -e '.[model]'") from exc
    try:
        tok = Tokenizer.from_str(data.decode("utf-8"))
    except Exception as exc:  # tokenizers raises its own exception type
        raise ModelError(f"{path}: not a readable tokenizer file ({exc})") from exc
    tok.no_padding()
    tok.no_truncation()
    if rows is not None:
        check_tokenizer_fits(tok, rows, path)
    return tok


#: the share of the embedding rows a checkpoint may leave unused as padding (a vocabulary rounded up
#: to a multiple of 64 or 128 for the hardware: Qwen2 151,665 tokens in 151,936 rows, phi-2 50,295
#: in 51,200, DeepSeek-V2 100,015 in 102,400 — all under 1/16)
PADDING_SHARE = 16


def check_tokenizer_fits(tok, rows: int, path) -> None:
    """Refuse a tokenizer that is not the checkpoint's, naming ``path`` (its ``tokenizer.json``).

    The rule: let ``top`` be the largest id the tokenizer can produce (added tokens included) and
    ``n`` the number of its tokens. The tokenizer fits ``rows`` embedding rows when

    * ``top < rows`` — every id it produces has a row (transformers would index out of range), and
    * ``n ≥ rows − rows // 16`` — the rows it never produces are padding, at most a sixteenth of
      the table (:data:`PADDING_SHARE`): transformers accepts any ``rows ≥ top + 1``, but a
      tokenizer that reaches only part of the table (MiniLM's 30,522 word pieces in SmolLM2's
      49,152 rows) tokenizes text into the ids of another vocabulary, and every state computed
      from them is a state of text nobody wrote.

    >>> from tokenizers import Tokenizer, models
    >>> tok = Tokenizer(models.WordLevel({f"t{i}": i for i in range(60)}, unk_token="t0"))
    >>> check_tokenizer_fits(tok, 64, "tokenizer.json")  # 4 rows of padding: fits
    >>> check_tokenizer_fits(tok, 59, "tokenizer.json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    symuat.models.formats.ModelError: tokenizer.json: produces ids up to 59, but the checkpoint has 59 embedding rows ...
    >>> check_tokenizer_fits(tok, 100, "tokenizer.json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    symuat.models.formats.ModelError: tokenizer.json: has 60 tokens for the checkpoint's 100 embedding rows ...
    """
    vocab = tok.get_vocab(with_added_tokens=True)
    top, n = (max(vocab.values()) if vocab else -1), len(set(vocab.values()))
    if top >= rows:
        raise ModelError(f"{path}: produces ids up to {top}, but the checkpoint has {rows} embedding rows "
                         "(vocab_size): it is not this checkpoint's tokenizer")
    if n < rows - rows // PADDING_SHARE:
        raise ModelError(f"{path}: has {n} tokens for the checkpoint's {rows} embedding rows (vocab_size); at "
                         f"most {rows // PADDING_SHARE} may be padding: it is not this checkpoint's tokenizer")


def gguf_tokenizer(f: GGUFFile):
    """The byte-level BPE tokenizer stored in a GGUF (``tokenizer.ggml.model = gpt2``)."""
    try:
        from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
    except ImportError as exc:
        raise ModelError("tokenizing needs the tokenizers package: pip install -e '.[model]'") from exc
    kind = f.get("tokenizer.ggml.model", "")
    if kind != "gpt2":
        raise ModelError(f"{f.path}: tokenizer model {kind!r} is not supported (byte-level BPE 'gpt2' is)")
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


def is_path(text: str) -> bool:
    """A ``--model`` argument names a path (not a packaged model) when it has a separator or exists."""
    return os.sep in text or bool(os.altsep and os.altsep in text) or Path(text).exists() or text.endswith(".gguf")


def json_safe(value):
    """Strict JSON: a NaN or an infinity becomes ``null``; arrays become nested lists."""
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value
