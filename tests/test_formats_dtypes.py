"""Weights in every exact dtype and in shards (model tier).

bf16, f16, f32 and f64 safetensors are widened to float64 exactly (bf16 through its float32 bits,
no torch at load time); any other dtype is refused naming the tensor; a sharded folder
(``model.safetensors.index.json``) loads the same tensors as one file, and a shard listed but
missing is refused naming it.
"""

import json
import os
import struct
from pathlib import Path

import numpy as np
import pytest

from symuat.models.formats import ModelError, folder_tensors, parse_safetensors, read_safetensors

from test_families import TOL, _check, hf_decoder


def _torch():
    try:
        import torch
    except ImportError:
        if os.environ.get("SYMUAT_REQUIRE_REFERENCE") == "1":
            pytest.fail("torch is required here (SYMUAT_REQUIRE_REFERENCE=1) but not installed")
        pytest.skip("torch not installed")
    return torch


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32", "float64"])
def test_every_exact_dtype_is_read_as_torchs_own_float64_widening(tmp_path, dtype):
    torch = _torch()
    from safetensors.torch import save_file

    g = torch.Generator().manual_seed(0)
    values = (torch.randn(5, 7, generator=g, dtype=torch.float64) * 1e3).to(getattr(torch, dtype))
    save_file({"w": values, "ids": torch.arange(4)}, str(tmp_path / "m.safetensors"))
    got = read_safetensors(tmp_path / "m.safetensors")
    assert np.array_equal(np.asarray(got["w"], np.float64), values.to(torch.float64).numpy())
    assert got["ids"].dtype == np.int64 and got["ids"].tolist() == [0, 1, 2, 3]


def test_bf16_widening_is_exact_at_every_bit_pattern():
    torch = _torch()
    bits = np.arange(1 << 16, dtype=np.uint16)
    from symuat.models.formats import bf16_to_float32

    with np.errstate(invalid="ignore"):  # signalling NaN patterns
        ours = bf16_to_float32(bits).astype(np.float64)
    theirs = torch.from_numpy(bits.view(np.int16).copy()).view(torch.bfloat16).to(torch.float64).numpy()
    same = (ours == theirs) | (np.isnan(ours) & np.isnan(theirs))
    assert same.all()


def test_a_dtype_that_is_not_exactly_float64_is_refused_naming_the_tensor(tmp_path):
    torch = _torch()
    from safetensors.torch import save_file

    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("no float8 in this torch")
    save_file({"model.layers.0.mlp.up_proj.weight": torch.zeros(2, 2, dtype=torch.float8_e4m3fn)},
              str(tmp_path / "m.safetensors"))
    with pytest.raises(ModelError, match=r"m\.safetensors: tensor 'model\.layers\.0\.mlp\.up_proj\.weight' has dtype "
                                         r"F8_E4M3"):
        read_safetensors(tmp_path / "m.safetensors")


def test_a_truncated_or_inconsistent_file_is_refused_as_corrupt():
    head = json.dumps({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}).encode()
    blob = struct.pack("<Q", len(head)) + head + bytes(8)
    with pytest.raises(ModelError, match=r"x\.safetensors: .*tensor 'w'.*truncated or corrupt"):
        parse_safetensors(blob, Path("x.safetensors"))
    with pytest.raises(ModelError, match="truncated or corrupt"):
        parse_safetensors(b"\x01\x02", Path("x.safetensors"))


def _bf16(folder: Path, **kw) -> Path:
    """A random Llama folder saved by transformers in bfloat16."""
    import transformers

    hf_decoder(folder, **kw)
    model = transformers.AutoModelForCausalLM.from_pretrained(str(folder))
    model.to(_torch().bfloat16).save_pretrained(str(folder))
    return folder


def test_a_bf16_saved_checkpoint_is_exact_against_the_float64_reference(tmp_path):
    folder = _bf16(tmp_path / "bf16")
    header = json.loads((folder / "model.safetensors").read_bytes()[8:][:struct.unpack("<Q", (
        folder / "model.safetensors").read_bytes()[:8])[0]])
    assert {v["dtype"] for k, v in header.items() if k != "__metadata__"} == {"BF16"}
    report, v = _check(folder)
    assert report["reference"] and v["passed"], v
    assert all(r["forward_vs_reference"] <= TOL for r in report["texts"][0]["states"])


def test_a_sharded_folder_loads_the_same_tensors_and_a_missing_shard_is_named(tmp_path):
    import transformers

    one = hf_decoder(tmp_path / "one")
    model = transformers.AutoModelForCausalLM.from_pretrained(str(one))
    sharded = tmp_path / "sharded"
    model.save_pretrained(str(sharded), max_shard_size="4KB")
    (sharded / "tokenizer.json").write_bytes((one / "tokenizer.json").read_bytes())
    shards = sorted(sharded.glob("*.safetensors"))
    assert len(shards) > 1 and (sharded / "model.safetensors.index.json").exists()
    a, b = folder_tensors(one), folder_tensors(sharded)
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    report, v = _check(sharded)
    assert report["reference"] and v["passed"], v
    shards[1].unlink()
    with pytest.raises(ModelError, match=rf"{shards[1].name}: missing shard"):
        folder_tensors(sharded)


def test_a_weights_file_the_shard_index_does_not_list_is_refused(tmp_path):
    import transformers

    one = hf_decoder(tmp_path / "one")
    model = transformers.AutoModelForCausalLM.from_pretrained(str(one))
    model.save_pretrained(str(tmp_path / "s"), max_shard_size="4KB")
    (tmp_path / "s" / "stray.safetensors").write_bytes((one / "model.safetensors").read_bytes())
    with pytest.raises(ModelError, match=r"stray\.safetensors: a weights file model\.safetensors\.index\.json does "
                                         "not list"):
        folder_tensors(tmp_path / "s")


def test_a_shard_that_disagrees_with_the_weight_map_is_refused(tmp_path):
    import transformers

    one = hf_decoder(tmp_path / "one")
    model = transformers.AutoModelForCausalLM.from_pretrained(str(one))
    model.save_pretrained(str(tmp_path / "s"), max_shard_size="4KB")
    index = tmp_path / "s" / "model.safetensors.index.json"
    data = json.loads(index.read_text())
    shards = list(data["weight_map"].values())
    name = next(k for k, v in sorted(data["weight_map"].items()) if shards.count(v) > 1)  # its shard stays listed
    data["weight_map"][name] = next(v for v in sorted(set(data["weight_map"].values()))
                                    if v != data["weight_map"][name])
    index.write_text(json.dumps(data))
    with pytest.raises(ModelError, match=r"the shard (holds|lacks) tensor .*against the weight_map"):
        folder_tensors(tmp_path / "s")
