#!/usr/bin/env python3
"""Long prompts: time and peak memory of ``symuat model check`` and ``model explain`` against the
prompt length (512 … 8,192 tokens) for SmolLM2-135M and Gemma-3-270M, beside transformers' own
float64 forward at the same lengths.

    python benchmarks/bench_long.py [--quick] [--lengths 512,1024] [--models smollm2,gemma3]
    python benchmarks/bench_long.py --rows smollm2:2048:explain,smollm2:4096:explain   # those rows again, in place
    python benchmarks/run.py long

Every figure is one run in its own subprocess (so a peak is that run's alone): wall time
(``time.perf_counter`` around the child), CPU time (the child's user + system, ``os.wait4``) and
peak resident set size (the child's ``ru_maxrss``), with one BLAS thread and one torch thread.

* check — ``symuat model check --model M --text-file F --no-reference --format json``: every
  hidden state and every row's logits from the DUAT form against the float64 forward (the
  reference is measured apart, below); its worst per-row error is reported;
* explain — ``symuat model explain --model M --text-file F [--vs ' the'] --by head --view both
  --no-reference --format json``: the residual and the DUAT views, by head and by source token,
  the DUAT rewrite's own decomposition; whether every view adds up (within 1e-12);
* HF float64 — transformers' ``AutoModelForCausalLM`` of the same file in float64 (its default
  ``sdpa`` attention), ``torch.no_grad``, every hidden state, the logits of the last row
  (``logits_to_keep=1``): what a user's float64 forward costs.

The prompts are built deterministically: the Declaration's first paragraphs
(:data:`symuat.models.families.gemma3.LONG_TEXT`) repeated and cut at exactly the length in the model's
own tokens (so 8,192 Gemma tokens cross the 512-token sliding window many times).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import common

LENGTHS = (512, 1024, 2048, 4096, 8192)
QUICK = (512, 1024)
MODELS = ("smollm2", "gemma3")
TIMEOUT = 3600  # seconds per run
#: the logit difference explained: against the first of these that is not the predicted token
#: itself (explain refuses that one, exit 2: at 2,048 and 4,096 SmolLM2 tokens it predicts " the")
VS = (" the", " a")
SAME_TOKEN = "is the explained token itself"

HF_FORWARD = """
import sys, torch
from symuat.models import family, reference
torch.set_num_threads(1)
model = family.load(sys.argv[1]) if sys.argv[1] != 'gemma3' else None
if model is None:
    from symuat.models.families import gemma3
    src, tok = gemma3.resolve('gemma3'), None
    tok = gemma3.load_tokenizer(src)
    ids = tok.encode(open(sys.argv[2], encoding='utf-8').read()).ids
else:
    src, ids = model.source, model.tokenize(open(sys.argv[2], encoding='utf-8').read()).tolist()
    del model
hf = reference.hf_model(src, decoder=True) if sys.argv[1] != 'gemma3' else None
if hf is None:
    from symuat.models.families import gemma3
    hf = gemma3._hf_model(src)
hf.config._attn_implementation = 'sdpa'
for m in hf.modules():
    if hasattr(m, 'config') and hasattr(m.config, '_attn_implementation'):
        m.config._attn_implementation = 'sdpa'
with torch.no_grad():
    out = hf(input_ids=torch.tensor([ids]), output_hidden_states=True, use_cache=False, logits_to_keep=1)
print(len(ids), len(out.hidden_states), tuple(out.logits.shape))
"""


def prompt(model: str, n: int, folder: Path) -> Path:
    """A text of exactly ``n`` tokens of ``model``'s tokenizer, written to ``folder``."""
    from symuat.models.families import gemma3
    from symuat.models import family, formats

    if model == "gemma3":
        tok = gemma3.load_tokenizer(gemma3.resolve("gemma3"))
    else:  # the GGUF's tokenizer alone (the weights are not loaded in this process)
        tok = formats.gguf_tokenizer(formats.open_gguf(family.resolve(model).path))
    text = gemma3.LONG_TEXT
    while len(tok.encode(text).ids) < n + 8:
        text = text + " " + gemma3.LONG_TEXT
    enc = tok.encode(text)
    cut = text[:enc.offsets[n - 1][1]]  # a <bos> the tokenizer adds counts as one of the n
    assert len(tok.encode(cut).ids) == n, (model, n, len(tok.encode(cut).ids))
    path = folder / f"{model}-{n}.txt"
    path.write_text(cut, encoding="utf-8")
    return path


def measure(argv: list[str]) -> dict:
    """One child, its stdout and the tail of its stderr (the wrapper of :func:`_run_child` times it)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", PYTHONPATH=str(common.SRC))
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        out, err = child.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        return {"status": "timeout"}
    return {"status": child.returncode, "out": out.decode(), "err": err.decode()[-2000:]}


def _run_child(argv: list[str]) -> dict:
    """``measure`` through a tiny wrapper that reports the grandchild's own rusage (``os.wait4``)."""
    wrapper = ("import os, sys, json, time; t = time.perf_counter(); pid = os.fork()\n"
               "if pid == 0:\n    os.execvp(sys.argv[1], sys.argv[1:])\n"
               "_, st, ru = os.wait4(pid, 0); w = time.perf_counter() - t\n"
               "print('@@' + json.dumps({'wall': w, 'cpu': ru.ru_utime + ru.ru_stime, 'rss': ru.ru_maxrss * 1024, "
               "'code': os.waitstatus_to_exitcode(st)}), file=sys.stderr)")
    res = measure([sys.executable, "-c", wrapper, *argv])
    if res.get("status") == "timeout":
        return res
    stats = [line for line in res["err"].splitlines() if line.startswith("@@")]
    res.update(json.loads(stats[-1][2:]) if stats else {"code": res["status"]})
    return res


def _verdict(kind: str, out: str) -> str:
    try:
        rep = json.loads(out)
    except ValueError:
        return "no report"
    if kind == "check":
        worst = rep.get("worst")
        return f"{'PASS' if rep.get('passed') else 'FAIL'}, worst {worst:.1e}" if worst is not None else "FAIL"
    views = rep.get("views", {})
    split = max((v.get("rel_error") or 0.0) for v in views.values()) if views else float("nan")
    return f"{'PASS' if rep.get('passed') else 'FAIL'}, views add up to {split:.1e}"


def run(quick: bool = False, lengths=None, models=None, only=None) -> str:
    """Every (model, length) figure, written to ``long.md``; ``only`` — a set of ``(model, n, what)`` —
    re-runs just those rows and puts them in place in the existing file, saying so under it."""
    common.single_thread()
    lengths = lengths or (QUICK if quick else LENGTHS)
    models = models or MODELS
    sym = [sys.executable, "-m", "symuat.cli", "model"]
    rows = ["| model | tokens | what | wall | CPU (user+sys) | peak RSS | result |", "|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            for n in lengths:
                path = prompt(model, n, Path(tmp))
                runs = {
                    "check": lambda vs: sym + ["check", "--model", model, "--text-file", str(path),
                                               "--no-reference", "--format", "json"],
                    "explain": lambda vs: sym + ["explain", "--model", model, "--text-file", str(path), "--vs", vs,
                                                 "--by", "head", "--view", "both", "--no-reference", "--format",
                                                 "json"],
                    "HF float64 forward": lambda vs: [sys.executable, "-c", HF_FORWARD, model, str(path)],
                }
                for what, argv in runs.items():
                    if only and (model, n, what) not in only:
                        continue
                    for vs in VS:
                        print(f"  {model} {n} {what} (load {common.load()})", file=sys.stderr, flush=True)
                        r = _run_child(argv(vs))
                        if what != "explain" or r.get("code") != 2 or SAME_TOKEN not in r.get("err", ""):
                            break
                    if r.get("status") == "timeout":
                        rows.append(f"| {model} | {n} | {what} | > {TIMEOUT} s | — | — | timed out |")
                        continue
                    result = _verdict(what, r["out"]) if what != "HF float64 forward" else (
                        "ran" if r["code"] == 0 else f"exit {r['code']}: {r['err'][-120:]!r}")
                    if what == "explain" and vs != VS[0]:
                        result += f" (vs {vs!r}: {VS[0]!r} is the predicted token)"
                    rows.append(f"| {model} | {n} | {what} | {r['wall']:.0f} s | {r['cpu']:.0f} s | "
                                f"{r['rss'] / 2 ** 30:.2f} GiB | {result} |")
    if only:
        return _replace_rows(rows[2:])
    partial = set(lengths) != set(LENGTHS) or set(models) != set(MODELS)
    how = ("each figure one run in its own subprocess: wall = time.perf_counter around it, CPU = its user + system "
           "time and peak RSS = its ru_maxrss, both from os.wait4; one BLAS and one torch thread; check/explain "
           "without the HF reference (measured apart as 'HF float64 forward': sdpa, every hidden state, "
           "logits_to_keep=1); prompts: the Declaration repeated, cut at exactly the length in the model's tokens. "
           "The machine is shared: wall times move with the load stamped above; CPU times much less")
    body = []
    if partial:
        body += [f"**PARTIAL RUN**: lengths {', '.join(map(str, lengths))}, models {', '.join(models)} only "
                 f"(the full run: lengths {', '.join(map(str, LENGTHS))}, models {', '.join(MODELS)}).", ""]
    body += rows
    return common.write("long.md", "Long prompts: time and peak memory against length", how, body)


def _replace_rows(rows: list[str]) -> str:
    """``long.md`` with each of ``rows`` in place of its (model, tokens, what) row, and a line under the
    table that says which rows were re-run, when and at what load."""
    path = common.RESULTS / "long.md"
    text = path.read_text(encoding="utf-8").rstrip("\n").splitlines()
    key = lambda line: tuple(c.strip() for c in line.split("|")[1:4])
    new = {key(r): r for r in rows}
    text = [new.get(key(line), line) if line.startswith("| ") else line for line in text]
    import time

    text += ["", f"Re-run on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} (load {common.load()}), the "
             f"rest of the file unchanged: " + "; ".join(" ".join(k) for k in new)]
    out = "\n".join(text) + "\n"
    path.write_text(out, encoding="utf-8")
    print(out, flush=True)
    return out


if __name__ == "__main__":
    args = sys.argv[1:]
    pick = lambda flag: next((args[i + 1] for i, a in enumerate(args[:-1]) if a == flag), None)
    ls, ms, rr = pick("--lengths"), pick("--models"), pick("--rows")
    only = None
    if rr:  # --rows smollm2:2048:explain,… : re-run those rows in place
        only = {(m, int(n), w.replace("-", " ")) for m, n, w in (r.split(":") for r in rr.split(","))}
        ls, ms = ",".join(sorted({str(n) for _, n, _ in only})), ",".join(sorted({m for m, _, _ in only}))
    run(common.quick_flag(), tuple(int(x) for x in ls.split(",")) if ls else None,
        tuple(ms.split(",")) if ms else None, only)
