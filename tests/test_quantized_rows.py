"""A vocabulary kept in its file's form (:mod:`symuat.models.quantized_rows`): every number it gives
is the one of the whole float64 matrix — rows, logits streamed by vocabulary blocks, the products
of the lenses and of transposed chains, the digest — whatever the block size; and nothing on those
paths makes the whole float64 matrix."""

import hashlib

import numpy as np
import pytest

from symuat.models.quantized_rows import QuantizedRows, dequantize
from symuat.numeric.operators import RowMap

gguf = pytest.importorskip("gguf")


@pytest.fixture(scope="module")
def q8():
    """A Q8_0 (V = 50, M = 64) matrix as a GGUF stores it, and its whole float64 dequantization."""
    W = np.random.default_rng(3).standard_normal((50, 64)).astype(np.float32)
    data = gguf.quants.quantize(W, gguf.GGMLQuantizationType.Q8_0)
    dense = np.asarray(gguf.quants.dequantize(data, gguf.GGMLQuantizationType.Q8_0), dtype=np.float64)
    return QuantizedRows(data, "Q8_0", (50, 64)), dense


@pytest.mark.parametrize("block", [50, 7, 1])
def test_rows_logits_and_products_equal_the_whole_matrix_for_every_block_size(q8, block):
    E, dense = q8
    E.block_rows = block
    rng = np.random.default_rng(block)
    X, y, G = rng.standard_normal((5, 64)), rng.standard_normal(64), rng.standard_normal((3, 50))
    assert np.array_equal(E[[4, 0, 4]], dense[[4, 0, 4]]) and np.array_equal(E[7], dense[7])
    assert np.array_equal(E[np.array([[1, 2], [3, 4]])], dense[[[1, 2], [3, 4]]]) and np.array_equal(E[2:9], dense[2:9])
    logits = X @ E.T  # streamed: one block of the vocabulary at a time
    assert logits.shape == (5, 50) and np.abs(logits - X @ dense.T).max() <= 1e-14 * np.abs(X @ dense.T).max()
    assert np.abs(E @ y - dense @ y).max() <= 1e-14 * np.abs(dense @ y).max()
    assert np.abs(G @ E - G @ dense).max() <= 1e-13 * np.abs(G @ dense).max()  # the blocks' sums add up
    assert E.sha256() == hashlib.sha256(dense.tobytes()).hexdigest()
    assert np.array_equal(np.asarray(E), dense)
    E.block_rows = 8192


def test_a_wrong_byte_changes_the_row_the_logits_and_the_digest(q8):
    E, dense = q8
    data = E.data.copy()
    data[11, 5] ^= 1  # one quantized value of row 11
    bad = QuantizedRows(data, "Q8_0", E.shape)
    X = np.ones((1, 64))
    assert not np.array_equal(bad[11], dense[11]) and np.array_equal(bad[10], dense[10])
    assert (X @ bad.T)[0, 11] != (X @ dense.T)[0, 11]
    assert bad.sha256() != E.sha256()


def test_the_head_operator_keeps_it_streamed_and_never_makes_the_whole_matrix(q8, monkeypatch):
    E, dense = q8
    monkeypatch.setattr(QuantizedRows, "__array__", lambda *a, **k: pytest.fail("the whole matrix was made"))
    head = RowMap(E.T, 2)  # the LM head (I_N ⊗ W_E): the decoders' head(X)
    x = np.random.default_rng(0).standard_normal(2 * 64)
    assert np.abs(head @ x - (x.reshape(2, 64) @ dense.T).reshape(-1)).max() <= 1e-13
    assert head.shape == (100, 128)


def test_dequantize_refuses_a_type_gguf_cannot_read_and_bad_rows_are_refused(q8):
    E, _ = q8
    with pytest.raises(IndexError):
        E[[50]]
    with pytest.raises(ValueError, match="stored rows"):
        QuantizedRows(E.data[:3], "Q8_0", (4, 64))
    assert dequantize(np.zeros((1, 4), np.uint8), "F32").tolist() == [[0.0]]


def test_q8_0_formed_in_float64_is_gguf_s_float32_dequantization_for_every_scale_and_every_int8():
    """Every float16 scale (all 65,536 bit patterns: subnormals, inf, nan) against every int8: the
    float64 ``d·q`` of :func:`dequantize_q8_0` is ``gguf``'s float32 ``d·q``, widened — the product
    of an 11-bit and an 8-bit significand is exact in both formats."""
    from symuat.models.quantized_rows import dequantize_q8_0

    scales = np.arange(2**16, dtype=np.uint16).view(np.float16).view(np.uint8).reshape(-1, 1, 2)
    q = np.arange(-128, 128, dtype=np.int8).view(np.uint8).reshape(1, 8, 32)   # 8 blocks a row
    data = np.concatenate([np.broadcast_to(scales, (2**16, 8, 2)), np.broadcast_to(q, (2**16, 8, 32))], axis=2)
    data = np.ascontiguousarray(data).reshape(2**16, 8 * 34)
    with np.errstate(invalid="ignore", over="ignore"):
        ours = dequantize_q8_0(data)
        theirs = np.asarray(gguf.quants.dequantize(data, gguf.GGMLQuantizationType.Q8_0), dtype=np.float64)
    assert ours.shape == theirs.shape == (2**16, 256)
    assert np.array_equal(ours, theirs, equal_nan=True)
    assert np.array_equal(dequantize(data[:3], "Q8_0"), theirs[:3])
