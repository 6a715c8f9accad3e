"""What every benchmark shares: single-threaded BLAS, the machine stamp, interleaved timing with
medians, and memory measured in separate runs (tracemalloc slows Python down, so it is never on
while a time is taken).

Import this module before numpy: it sets ``OPENBLAS_NUM_THREADS=1`` (``OPENBLAS_CORETYPE`` is
left alone) and, once numpy/torch are loaded, :func:`single_thread` pins both to one thread.
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import datetime
import platform
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Callable

RESULTS = Path(__file__).with_name("results")
ROOT = Path(__file__).resolve().parents[1]
#: the package's parent (the src layout)
SRC = ROOT / "src"


def single_thread() -> None:
    """One BLAS thread (threadpoolctl, when installed) and one torch thread (when installed)."""
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except ImportError:
        pass
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass


def _versions() -> str:
    out = [f"Python {platform.python_version()}"]
    for name in ("numpy", "scipy", "sympy", "torch", "transformers"):
        try:
            module = __import__(name)
            out.append(f"{name} {module.__version__}")
        except ImportError:
            out.append(f"{name} absent")
    return ", ".join(out)


def _blas() -> str:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown (threadpoolctl not installed)"
    import numpy  # noqa: F401  (load its BLAS)

    try:
        import torch  # noqa: F401
    except ImportError:
        pass
    libs = [f"{i.get('internal_api')} {i.get('version')} ({i.get('user_api')}, {i.get('architecture')}, "
            f"{i.get('num_threads')} thread{'s' if i.get('num_threads') != 1 else ''}, {Path(i['filepath']).name})"
            for i in threadpool_info()]
    return "; ".join(libs) or "none found"


def load() -> str:
    try:
        one, five, fifteen = os.getloadavg()
        return f"{one:.2f} / {five:.2f} / {fifteen:.2f} (1 / 5 / 15 min)"
    except OSError:  # pragma: no cover
        return "unknown"


def load_one() -> str:
    """The 1-minute load average, for a row's 'load before → after'."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:  # pragma: no cover
        return "?"


def stamp(how: str) -> list[str]:
    """The header of a results file: date, machine, BLAS, versions, load, and how it was measured."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        cores = os.cpu_count()
    return [
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}",
        f"- machine: {platform.machine()}, {cores} cores usable ({os.cpu_count()} online), {platform.system()} {platform.release()}",
        f"- BLAS (threadpoolctl): {_blas()}; OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}, "
        f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', 'unset')}",
        f"- versions: {_versions()}",
        f"- load average when the file was written: {load()} — the machine is shared, so absolute "
        "times are noisy; the ratios, taken from interleaved rounds in one process, are the figures",
        f"- how: {how}",
        "- regenerate: `python benchmarks/run.py` (`--quick` for a short run)",
    ]


def interleaved(variants: dict[str, Callable], rounds: int, warmup: int = 1,
                repeat: int = 1) -> dict[str, list[float]]:
    """Wall times of every variant, ``rounds`` rounds, every variant once per round, the order
    rotated from round to round (so no variant always runs right after a particular other).
    With ``repeat`` > 1 a sample is the mean of that many consecutive calls (for calls of a few
    milliseconds, where one call is at the mercy of the scheduler)."""
    names = list(variants)
    for _ in range(warmup):
        for name in names:
            variants[name]()
    times = {name: [] for name in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            start = time.perf_counter()
            for _ in range(repeat):
                variants[name]()
            times[name].append((time.perf_counter() - start) / repeat)
    return times


def median(values) -> float:
    return statistics.median(values)


def spread(values) -> str:
    """The interquartile range relative to the median, a noise indicator."""
    if len(values) < 4:
        return f"min {min(values) / median(values):.2f}–max {max(values) / median(values):.2f} of median"
    q = statistics.quantiles(values, n=4)
    return f"IQR {q[0] / median(values):.2f}–{q[2] / median(values):.2f} of median"


def peak_bytes(fn: Callable) -> int:
    """Peak of the allocations made during one call (tracemalloc; numpy reports to it). Run apart
    from any timing."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def peak_and_kept(fn: Callable) -> tuple[int, int]:
    """Peak of the allocations during one call, and what is still allocated while its result is
    held (tracemalloc). Run apart from any timing."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        result = fn()
        kept, peak = tracemalloc.get_traced_memory()
        del result
        return peak, kept
    finally:
        tracemalloc.stop()


def mib(n: float) -> str:
    return f"{n / 2**20:.1f} MiB"


def write(name: str, title: str, how: str, body: list[str]) -> str:
    text = "\n".join([f"# {title}", "", *stamp(how), "", *body]) + "\n"
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / name).write_text(text, encoding="utf-8")
    print(text, flush=True)
    return text


def quick_flag() -> bool:
    return "--quick" in sys.argv
