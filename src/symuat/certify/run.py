"""The certify tier: export every symbolic ``proved`` of the selected groups and let Coq check it.

For each check whose verdict is ``proved`` by the index-level normal form (directly, or every
link of a chain), the statements that normal form compared equal are captured while the check
runs (:data:`symuat.kernel.index_calculus.OBSERVER`), exported one file per check
(:mod:`symuat.certify.export`) and compiled with ``coqc`` against the library in ``coq/``
(compiled first). A check is ``certified`` only if every theorem of its file compiled in this
run; otherwise the reason is recorded (``unsupported``: outside the exported fragment;
``failed``: Coq rejected or the tactic did not close the goal; ``excluded``: outside the core
groups and over the tier's statement budget, :func:`over_budget`).

The tier (:data:`TIER`) runs every claim of the catalogue, so its count is certified / *all*
symbolic ``proved`` checks, and every check it does not certify is listed with its reason.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from symuat.certify.coq_terms import Unsupported
from symuat.certify.depth import NOT_STATED, STEP_CHECK, THEOREMS as DEPTH_THEOREMS, export_depth, own_step, step_pair
from symuat.certify.export import AXIOMS_CHECK, batch_file, export_identity, file_order, probe_file, side_statement
from symuat.certify.kinds import export_certificates
from symuat.certify.record import COQ_DIR, TIER, fingerprint, out_dir, toolchain
from symuat.certify.rotary import PREMISES
from symuat.certify import exact_dependence, independence, kron_rank, undefined, vanishing
from symuat.certify.witness import SOFTMAX_PREMISES
from symuat.certify.density import export_density_refutation
from symuat.certify.refutation import (DENIED_HOLDS, DENSITY_REFUTATION, ROTATION_PREMISES, ROTATION_REFUTATION,
                                      SHAPE_CLAIM, export_check_refutation, export_shape_correction)

#: the core groups (claim IDs): every statement of theirs the exporter writes is sent to Coq
CORE = r"(D|P|M|H)\d+|X1|X3"

# the certify tier's claims, :data:`TIER` (kept in :mod:`symuat.certify.record`, which reads it): every
# claim of the catalogue, so that its count is certified / *all* symbolic ``proved`` checks; outside
# :data:`CORE` a check is sent to Coq within :data:`BUDGET`

#: the statement budget of a check outside :data:`CORE` (characters of all its theorems'
#: statements, together): a deterministic rule on the statement, not a clock, so the count is the
#: same on a loaded machine. With the prenex form by computation (``coq/SymuatReflect.v``) the
#: whole tier at 1,100 characters took 411 s wall, 517 s CPU with coqchk (2026-11-27, 2 cores
#: shared, load 3–5): 217 of 325 checks, against 182 at 480 characters (205 s wall). Left out at
#: 1,100: L2.main.exact[L=2] (1,276), X9.layer (1,192) and X9.layer[sequential] (1,583); with no
#: budget and statements to 6,000 characters (X3.sandwich, L2.main.exact[L=3], [L=4] sent too) it
#: had not finished after 12 minutes. At 1,200 X9.layer (1,192) is sent too: its batch took 19.6 s
#: CPU with the closing comparison by computation (``kclose``, 2026-11-27, load 8); at 1,600
#: X9.layer[sequential] (1,583) did not compile within the 660 s process limit. At 1,300
#: L2.main.exact[L=2] (1,276) is sent too: it compiles in 10.6 s wall (coqc and its probes,
#: 2026-11-27, load 2–3 beside a CI run); X9.layer[sequential] stays out
BUDGET = 1300

#: the statement budget of a refutation (a theorem proved by computing its witness, not by the
#: normal form's search: its cost grows more slowly with its length). At 4,000 characters every
#: T8/T9 witness is sent (the longest, depth 3, 3,153 characters; the 50 distinct statements of
#: the 396 refuted readings compile in 72 s, the 14 of depth 3 in 42 s of it; 2026-11-27)
REFUTATION_BUDGET = 4000


def in_core(key: str) -> bool:
    """Whether the check ``key`` is sent to Coq whatever its statements' length: a check of a
    :data:`CORE` claim, an induction over the depth (:data:`~symuat.certify.depth.THEOREMS`) or
    the one-layer identity their step is (:data:`~symuat.certify.depth.STEP_CHECK`)."""
    claim = re.match(r"[^.\[]*", key).group()  # the claim ID: "H7" of "H7[std,bidir]", "L2" of "L2.2.1"
    return key in DEPTH_THEOREMS or key == STEP_CHECK or bool(re.fullmatch(CORE, claim))


def over_budget(key: str, theorems, budget: int | None = BUDGET) -> str | None:
    """Why the check ``key`` with these exported ``theorems`` is left out of the tier (its reason,
    listed by ``symuat certify``), or None: a check of :data:`CORE`, an induction over the depth
    (:data:`~symuat.certify.depth.THEOREMS`) and any check with no ``budget`` are always sent; any
    other whose statements total more than ``budget`` characters is not.

    >>> class T: statement = "x" * 1400
    >>> over_budget("P1", [T()]) is None, over_budget("L2.2.1", [T()], budget=None) is None
    (True, True)
    >>> print(over_budget("L2.2.1", [T()]))
    its statements total 1400 characters, over the tier's budget of 1300 for a check outside the core groups (D, P, M, H, X1, X3)
    """
    if budget is None or in_core(key):
        return None
    size = sum(len(t.statement) for t in theorems)
    if size <= budget:
        return None
    return (f"its statements total {size} characters, over the tier's budget of {budget} for a check "
            "outside the core groups (D, P, M, H, X1, X3)")


#: certificate kinds exported beside the identities of a check proved by the normal form (a step of
#: it that is no identity of matrices: the one 2×2 block of RoPE's relative position)
BESIDE_IDENTITIES = ("pair_rotation",)

#: how :func:`~symuat.kernel.decide.mistakes.mistakes_refuted` states a ``proved``
MISTAKES = "every cited mistake"


def export_mistakes(key: str, verdict, captured: dict, unequal: dict, certificates: dict) -> list:
    """The theorems of "every cited mistake is refuted" (``key``, proved by
    :func:`~symuat.kernel.decide.mistakes.mistakes_refuted` from the verdicts of the mistakes'
    own checks, the check's recorded dependencies): each mistake's refutation, as
    :func:`~symuat.certify.refutation.export_check_refutation` states it (one mistake it cannot
    state leaves the check unsupported, with that mistake's reason)."""
    from symuat.kernel.registry import REGISTRY

    deps = [d for d in sorted(REGISTRY.edges.get(key, ())) if d in captured]
    refuted = [d for d in deps if str(captured[d][0].status) == "refuted"]
    m = re.search(r"\((\d+)\)", verdict.method)
    if not refuted or len(refuted) != len(deps) or (m and int(m.group(1)) != len(refuted)):
        raise Unsupported(f"the mistakes' checks were not all captured refuted ({len(refuted)} of {len(deps)})")
    out: list = []
    for n, d in enumerate(refuted):
        v, pairs = captured[d]
        try:
            out += export_check_refutation(coq_name(key, n), v, unequal.get(d, []), pairs, certificates.get(d, []))
        except Unsupported as exc:
            raise Unsupported(f"the mistake {d}: {exc}") from None
    return out


def reused_refutation(key: str, verdict, captured: dict, unequal: dict) -> str | None:
    """The refuted check whose refutation ``verdict`` (of ``key``) reuses: a check with no unequal
    comparison of its own whose counterexample is that check's (the same object: a link
    ``REGISTRY.verdict`` returned, T7.exact's T3.1), or None."""
    cex = verdict.counterexample
    if cex is None or unequal.get(key):
        return None
    return next((k for k, (v, _) in captured.items() if k != key and v is not verdict and unequal.get(k)
                 and v.counterexample is cex), None)


def reused_verdict(key: str, verdict, captured: dict) -> str | None:
    """The one check ``key`` links to (``REGISTRY.edges``) whose verdict ``key``'s *is* (the same
    object, ``REGISTRY.verdict``: A6.biases is L2.9[b'_{2,2}]'s verdict), or None: such a check
    records no statement of its own and stands or falls with that check's theorems."""
    from symuat.kernel.registry import REGISTRY

    same = [d for d in sorted(REGISTRY.edges.get(key, ())) if d in captured and captured[d][0] is verdict]
    return same[0] if len(same) == 1 else None


def verdict_of_check(key: str, verdict, pairs: list, captured: dict, unequal: dict, certificates: dict) -> str | None:
    """For a check that captured nothing of its own (no pair, comparison or certificate): the
    check whose verdict its verdict *is* (:func:`reused_verdict`; T6.aaai[W3=unchanged] is
    L2.8.sum[W3=unchanged]'s), whose captured statements its refutation and correction state — or None."""
    if pairs or unequal.get(key) or certificates.get(key):
        return None
    return reused_verdict(key, verdict, captured)


def shared_statement(theorems) -> tuple:
    """What a check's theorems state and how they are proved, up to their names: two refuted
    checks with the same (T8's readings that differ only after the depth of their witness) are
    certified by one set of theorems, the first check's.

    >>> from symuat.certify.export import Exported
    >>> a = Exported("ra", "Theorem ra : ~ (forall n : nat, n = 0%N).", "move=> H; by move: (H 1%N).")
    >>> b = Exported("rb", "Theorem rb : ~ (forall n : nat, n = 0%N).", "move=> H; by move: (H 1%N).")
    >>> shared_statement([a]) == shared_statement([b])
    True
    """
    out = []
    for t in theorems:
        rename = lambda text: re.sub(rf"\b{re.escape(t.name)}\b", "\u2022", text)
        out.append((rename(t.statement), rename(t.proof), rename(t.sides)))
    return tuple(out)


def selected(check, pattern: str, depth: bool = True) -> bool:
    """Whether ``check`` is in a certify run of ``pattern`` (claim IDs): its claim matches, or
    (``depth``) it is an induction over the number of layers that :mod:`symuat.certify.depth` states
    as one Coq theorem for every depth (L2, T7, T9, X6), or the one-layer identity their step is."""
    return bool(re.fullmatch(pattern, check.id.split(".")[0])) or (
        depth and (check.key in DEPTH_THEOREMS or check.key == STEP_CHECK))
LIBRARY = ("SymuatMx.v", "SymuatReflect.v", "SymuatBlocks.v", "SymuatTac.v", "SymuatLemmas.v", "SymuatWitness.v",
           "SymuatCount.v", "SymuatDepth.v", "SymuatFlat.v", "SymuatUnroll.v", "SymuatRotary.v", "SymuatArith.v",
           "SymuatSmall.v", "SymuatEnv.v", "SymuatKron.v", "SymuatRef.v", "SymuatFamily.v")


def proved_for_symbolic_sizes(verdict) -> bool:
    """A ``proved`` verdict (for symbolic dimensions; ``proved-at-sizes`` is a different status),
    by any procedure: identities, quantity formulas, rank bounds, exact witnesses, …"""
    return verdict is not None and str(verdict.status) == "proved"


def symbolic_proved(verdict) -> bool:
    """A symbolic ``proved`` that rests on identities of matrices decided by the index-level
    normal form — the statements the exporter turns into Coq theorems."""
    return proved_for_symbolic_sizes(verdict) and (
        verdict.method.startswith("index-level normal form")
        or verdict.method.startswith("every link: index-level normal form"))


#: how :func:`coq_name` writes the characters of a key that a Coq name cannot carry: ``_CODE_``
#: with a mnemonic (upper case) for the common ones, the lower-case hex code point otherwise
_ESCAPES = {".": "", "[": "L", "]": "R", ",": "C", "-": "D", "=": "E"}
_UNESCAPES = {v: k for k, v in _ESCAPES.items()}
_PLAIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


def coq_name(key: str, n: int) -> str:
    """The Coq name of the ``n``-th theorem of check ``key``, injective in ``(key, n)``: ASCII
    letters and digits stay, every other character becomes ``_CODE_`` (:data:`_ESCAPES`, else its
    hex code point), so ``A4.concl[layer-wise=k]`` and ``A4.concl[layer-wise=≥k]`` get different
    names; :func:`key_of_coq_name` reads the pair back.

    >>> coq_name("P5.a[conf]", 0)
    'c_P5__a_L_conf_R__0'
    >>> coq_name("A4.concl[layer-wise=≥k]", 0)
    'c_A4__concl_L_layer_D_wise_E__2265_k_R__0'
    >>> key_of_coq_name(coq_name("A4.concl[layer-wise=≥k]", 3))
    ('A4.concl[layer-wise=≥k]', 3)
    """
    base = "".join(c if c in _PLAIN else f"_{_ESCAPES.get(c, format(ord(c), 'x'))}_" for c in key)
    return f"c_{base}_{int(n)}"


def key_of_coq_name(name: str) -> tuple[str, int]:
    """The inverse of :func:`coq_name` (ValueError for a name it does not write)."""
    if not name.startswith("c_") or "_" not in name[2:]:
        raise ValueError(f"{name!r} is not a certify theorem name")
    base, _, n = name[2:].rpartition("_")
    if not n.isdigit() or str(int(n)) != n:
        raise ValueError(f"{name!r} does not end in a theorem number")
    out, k = [], 0
    while k < len(base):
        if base[k] in _PLAIN:
            out.append(base[k])
            k += 1
            continue
        end = base.find("_", k + 1)
        code = base[k + 1:end] if base[k] == "_" and end > 0 else None
        if code is None or not (code in _UNESCAPES or re.fullmatch(r"[0-9a-f]+", code)):
            raise ValueError(f"{name!r}: bad escape at {k}")
        char = _UNESCAPES[code] if code in _UNESCAPES else chr(int(code, 16))
        if code not in _UNESCAPES and (char in _PLAIN or char in _ESCAPES or format(ord(char), "x") != code):
            raise ValueError(f"{name!r}: not the canonical escape of {char!r}")
        out.append(char)
        k = end + 1
    return "".join(out), int(n)


def compile_library(out: Path) -> float:
    lib = out / "lib"
    lib.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    for name in LIBRARY:
        shutil.copy(COQ_DIR / name, lib / name)
        _coqc(lib, lib / name, timeout=600)
    return time.perf_counter() - start


#: the logical path of the exported theorems' files (``theories/batchK.v`` is ``SymuatCertified.batchK``)
THEORIES = "SymuatCertified"


#: the Coq processes running now (any thread), ended at once when the run is interrupted
_RUNNING: set = set()
_RUNNING_LOCK = threading.Lock()
_STOPPED = threading.Event()
#: the run's proofs are done: a Coq process asked to be niced starts at the default priority
_UNNICED = threading.Event()


def _run_coq(cmd: list[str], timeout: float, cwd=None, nice: int = 0) -> subprocess.CompletedProcess:
    """``subprocess.run(cmd, capture_output=True, text=True)`` with a limit of ``timeout`` seconds of
    **CPU** (``RLIMIT_CPU``, set on the process as it starts; raised as ``TimeoutExpired``), not of
    wall clock: on a loaded machine a Coq process waits longer but uses the same CPU, so the load
    never decides whether it finishes (a wall-clock limit of 1,800 s failed coqchk at load 12–15).
    The process is registered in :data:`_RUNNING`, so that an interruption of the run (Ctrl-C,
    SIGTERM: :func:`_stop_coq`) ends it at once, from whatever thread waits for it; once the run
    is stopped no Coq process starts. ``nice``: run it at that niceness (``nice -n``, which execs
    the command: the limit stays on it), so that it takes the cores the other Coq processes leave
    idle."""
    if _STOPPED.is_set():
        raise RuntimeError("the certify run was interrupted")
    if nice and shutil.which("nice") and not _UNNICED.is_set():
        cmd = ["nice", "-n", str(nice), *cmd]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=cwd)
    with _RUNNING_LOCK:  # registered, or stopped already: an interruption between Popen and here
        _RUNNING.add(proc)  # (the process runs, :func:`_stop_coq` did not see it) ends it now
        stopped = _STOPPED.is_set()
    try:
        if stopped:
            raise RuntimeError("the certify run was interrupted")
        _limit_cpu(proc.pid, timeout)
        stdout, stderr = proc.communicate()
        if proc.returncode == -signal.SIGXCPU:  # its CPU limit (the hard one, a second later, is SIGKILL)
            raise subprocess.TimeoutExpired(cmd, timeout, output=stdout, stderr=stderr)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        with _RUNNING_LOCK:
            _RUNNING.discard(proc)
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


def _limit_cpu(pid: int, seconds: float) -> None:
    """At most ``seconds`` of CPU for the process ``pid`` (then SIGXCPU, and SIGKILL a second later);
    nothing if it has ended already."""
    import resource

    limit = max(1, int(seconds))
    try:
        resource.prlimit(pid, resource.RLIMIT_CPU, (limit, limit + 1))
    except (ProcessLookupError, PermissionError):  # ended already (its exit status is read as usual)
        pass


def _stop_coq() -> None:
    """End every running Coq process and start no other (an interrupted run)."""
    with _RUNNING_LOCK:  # with :func:`_run_coq`'s registration: each Coq process is seen by one of the two
        _STOPPED.set()
        running = list(_RUNNING)
    for proc in running:
        proc.kill()


def _unnice() -> None:
    """Give the running niced Coq processes (:func:`_run_coq`'s ``nice``) the default priority:
    niced, they took the cores the proofs left idle; once nothing else of the run is left, on a
    loaded machine they would wait behind every other process. Without the right to lower a
    niceness (not root) they stay as they are."""
    import os

    _UNNICED.set()
    with _RUNNING_LOCK:
        running = [p for p in _RUNNING if p.args and p.args[0] == "nice"]
    for proc in running:
        try:
            os.setpriority(os.PRIO_PROCESS, proc.pid, 0)
        except OSError:
            pass


def _coqc(lib: Path, path: Path, timeout: int) -> subprocess.CompletedProcess:
    own = [] if path.parent == lib else ["-R", str(path.parent), THEORIES]
    proc = _run_coq(["coqc", "-q", "-w", "-all", "-R", str(lib), "Symuat", *own, str(path)],
                    timeout=timeout, cwd=path.parent)
    if proc.returncode != 0 and path.parent == lib:
        raise RuntimeError(f"the Coq library {path.name} does not compile:\n{proc.stdout}{proc.stderr}")
    return proc


def _theorem_results(stdout: str) -> dict:
    """theorem name → whether Coq's kernel accepted it without axioms: its ``symuat-qed`` marker
    (printed after ``Defined``) is present and the batch's axiom check (printed once, after every
    theorem: :func:`~symuat.certify.export.axioms_check`) lists no ``Axioms:``. ``None`` for a
    marker without that check (the batch stopped before it: a theorem after it failed)."""
    markers = re.findall(r"^\s*symuat-qed (\S+)", stdout, re.M)
    check = re.search(r"symuat-axioms-begin\n(.*?)symuat-axioms-end", stdout, re.S)
    clean = None if check is None else "Axioms:" not in check.group(1)
    return {name: clean for name in markers}


def axioms_of(lib: Path, compiled: Path, names: list[str], timeout: int = 600) -> dict:
    """name → whether the theorem of the compiled batch ``compiled`` (a ``.v`` whose ``.vo`` exists)
    rests on no axiom: ``Print Assumptions`` of each, in a file that loads the batch. Run only when
    the batch's own check listed an axiom, to name the theorems that use it."""
    text = f"From {THEORIES} Require Import {compiled.stem}.\n" + "".join(
        f"Goal True. idtac \"symuat-axioms-of {n}\". Abort.\nPrint Assumptions {n}.\n" for n in names)
    proc, printed = _beside(lib, compiled, "axioms", text, "symuat-axioms-of", timeout)
    return {name: proc.returncode == 0 and "Axioms:" not in rest for name, rest in printed.items()}


def _beside(lib: Path, compiled: Path, suffix: str, text: str, marker: str, timeout: int):
    """Run ``text``, a file that loads the compiled batch ``compiled`` (``batchK_suffix.v`` beside
    it; what ``coqc`` writes for it is removed, :func:`_drop_compiled`), and return the process and
    name → what it printed after ``marker NAME``."""
    path = compiled.with_name(f"{compiled.stem}_{suffix}.v")
    path.write_text(text)
    proc = _coqc(lib, path, timeout)
    _drop_compiled(path)
    printed: dict = {}
    for part in re.split(rf"^\s*{marker} ", proc.stdout, flags=re.M)[1:]:
        name, _, rest = part.partition("\n")
        printed[name.strip()] = rest
    return proc, printed


def deal(theorems: list, n: int, key) -> list[list]:
    """``theorems`` dealt to ``n`` files in turn, those whose side lemmas state the same word for
    word (the ones many identities share, :func:`~symuat.certify.export.side_statement`) to the
    same file, where it is proved once (:func:`~symuat.certify.export.share_proofs`); each file
    ordered by ``key``."""
    groups: dict = {}
    for t in theorems:
        groups.setdefault(side_statement(t) or t.name, []).append(t)
    files: list = [[] for _ in range(n)]
    for k, group in enumerate(groups.values()):
        files[k % n] += group
    return [sorted(f, key=key) for f in files]


def _drop_compiled(path: Path) -> None:
    """Remove what ``coqc`` wrote for ``path`` (a file that only prints: no theorem of it is
    certified, so coqchk has nothing to re-check in it); the ``.v`` stays, to be read."""
    for suffix in (".vo", ".vok", ".vos", ".glob"):
        path.with_suffix(suffix).unlink(missing_ok=True)
    path.with_name("." + path.stem + ".aux").unlink(missing_ok=True)


def _tactic_logs(stdout: str) -> dict:
    """theorem name → what the tactics printed while they built it: the output after the previous
    theorem's ``symuat-qed`` marker (its side lemmas come before its own ``symuat-begin``) up to
    its own."""
    out, last = {}, 0
    for m in re.finditer(r"^\s*symuat-qed (\S+)\s*$", stdout, re.M):
        out[m.group(1)] = stdout[last:m.start()]
        last = m.end()
    return out


def _probe(lib: Path, compiled: Path, theorems: list, stdout: str, timeout: int, aliases: dict) -> dict:
    """name → the ``symuat-probe``/``symuat-uses`` lines for the accepted ``theorems`` of the
    compiled batch ``compiled`` (:func:`~symuat.certify.export.probe_file`, one more ``coqc``
    that loads it)."""
    if not any(t.probes for t in theorems):
        return {}
    proc, printed = _beside(lib, compiled, "probes", probe_file(compiled.stem, theorems, _tactic_logs(stdout), aliases),
                            "symuat-probes-of", timeout * len(theorems) + 60)
    if proc.returncode != 0:
        raise RuntimeError(f"the probes of {compiled.name} do not compile:\n{proc.stdout}{proc.stderr}")
    return printed


class CoqProcessLimit(RuntimeError):
    """A ``coqc`` process ran past its process-level limit: the tier fails as a whole (no proof is
    timed inside Coq, so a slow machine never turns into fewer certified checks)."""


def compile_batch(lib: Path, theorems: list, path: Path, timeout: int = 600) -> dict:
    """Compile ``theorems`` in batch files (``path``, ``path`` with suffixes on restarts).

    No proof runs under Coq's ``Timeout`` (a wall clock would decide what is certified: at load
    12–16 the H7 proofs timed out). The ``coqc`` process has a generous limit, ``timeout`` seconds
    of CPU per theorem plus 60 (:func:`_run_coq`: not of wall clock); past it
    :class:`CoqProcessLimit` is raised — the run fails loudly, no theorem is counted as not
    certified for being slow.

    A failing theorem stops ``coqc``: it is named from the error's line, recorded as failed with
    Coq's message, and the theorems after it are compiled again in a new file (those before it
    passed ``Qed`` already: their markers are in the output). A theorem counts as accepted only
    with its own marker and no axioms, so a failure is never masked.  Returns
    name → ``{"ok", "reason", "log"}`` (``"vo"``: the compiled file that holds it, for coqchk).
    The theorems accepted before a failure are compiled again after the rest, so that they are
    in a file that compiles whole."""
    results: dict = {}
    todo = list(theorems)
    attempt = 0
    while todo:
        todo = file_order(todo)  # the order its file holds them in (:func:`batch_file`), a restart's too
        target = path if attempt == 0 else path.with_name(f"{path.stem}_r{attempt}.v")
        aliases: dict = {}
        text, starts = batch_file(todo, aliases=aliases)
        target.write_text(text)
        limit = timeout * len(todo) + 60
        try:
            proc = _coqc(lib, target, limit)
            stdout, stderr, code = proc.stdout, proc.stderr, proc.returncode
        except subprocess.TimeoutExpired:
            raise CoqProcessLimit(f"coqc did not finish {target.name} ({len(todo)} theorems) within its process "
                                  f"limit of {limit} s of CPU; no proof is timed inside Coq, so the tier fails "
                                  "rather than count a slow proof as not certified") from None
        accepted = _theorem_results(stdout)
        if code == 0 and False in accepted.values():  # an axiom in the batch: whose?
            accepted = {**accepted, **axioms_of(lib, target, list(accepted), timeout)}
        logs = _split_logs(stdout)
        for t in todo:
            if t.name in accepted:  # None: passed Defined, its axioms not yet checked (compiled again below)
                results[t.name] = {"ok": accepted[t.name], "log": logs.get(t.name, ""),
                                   "reason": "" if accepted[t.name] is not False else "Coq: the proof uses axioms"}
        if code == 0:
            probes = _probe(lib, target, [t for t in todo if results.get(t.name, {}).get("ok")], stdout, timeout,
                            aliases)
            for t in todo:  # in a compiled file (``.vo``): re-checked by coqchk
                if t.name in results:
                    results[t.name]["vo"] = target.stem
                    results[t.name]["log"] += probes.get(t.name, "")
            missing = [t for t in todo if t.name not in results]
            for t in missing:  # compiled, but no marker: never counted as certified
                results[t.name] = {"ok": False, "log": "", "reason": "no Qed marker in coqc's output"}
            break
        # the failing theorem: the one whose lines hold the error (else the first without a marker)
        line = None
        m = re.search(r'File "[^"]*", line (\d+)', stderr) or re.search(r'File "[^"]*", line (\d+)', stdout)
        if m and code is not None:
            line = int(m.group(1))
        failed = None
        if line is not None:
            for first, name in starts:
                if first <= line:
                    failed = name
        if failed == AXIOMS_CHECK:  # every theorem passed: the check itself is the tool's error
            raise RuntimeError(f"the axiom check of {target.name} does not compile:\n{stdout}{stderr}")
        if failed is None or failed in results:
            pending = [t.name for t in todo if t.name not in results]
            failed = pending[0] if pending else None
        if failed is None:
            break
        # Coq prints "Error:" on a line of its own and the message on the lines after it
        where = next((t for t in (stderr, stdout) if "Error" in t), "")
        reason = ("Coq: " + " ".join(where[where.find("Error"):].split())[:300]) if where else (stderr or stdout).strip()[-300:]
        results[failed] = {"ok": False, "log": logs.get(failed, ""), "reason": reason}
        names = [t.name for t in todo]
        # the theorems after the failure, then those accepted before it once more: in a file that
        # compiles whole they get a ``.vo``, which coqchk re-checks (a batch ordered shortest
        # first, :func:`certify`'s extension batch, repeats little)
        before = [t for t in todo[:names.index(failed)]
                  if t.name in results and results[t.name]["ok"] is not False]
        todo = [t for t in todo[names.index(failed) + 1:]  # (one passed in an earlier file, unchecked, too)
                if t.name not in results or results[t.name]["ok"] is None] + before
        attempt += 1
    for entry in results.values():  # passed Defined in a file that never compiled whole: unchecked
        if entry["ok"] is None:
            entry.update(ok=False, reason="no axiom check: its batch never compiled whole")
    return results


#: coqchk's verdicts on a compiled library, by the bytes of its files (:func:`coqchk_library`)
_LIBRARY_CHECKED: dict = {}
_LIBRARY_CHECKED_LOCK = threading.Lock()


def _coqchk(args: list[str], timeout: int, nice: int = 0) -> tuple[str, int | None, float]:
    """``coqchk -o`` with ``args`` (not ``-silent``: its ``Checking library:`` and ``Admitting
    library:`` lines are read); its output, exit code (None: timed out) and seconds."""
    start = time.perf_counter()
    try:
        proc = _run_coq(["coqchk", "-o", *args], timeout=timeout, nice=nice)
        text, code = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired:
        text, code = f"coqchk used its limit of {timeout} s of CPU", None
    return text, code, round(time.perf_counter() - start, 1)


def _axioms(text: str) -> str:
    m = re.search(r"\* Axioms:(.*?)(?:\n\s*\*|\Z)", text, re.S)
    return " ".join(m.group(1).split()) if m else "(no summary)"


def _libraries(text: str, what: str) -> set[str]:
    return set(re.findall(rf"^{what} library: (\S+)", text, re.M))


def coqchk_library(lib: Path, timeout: int = 1800, nice: int = 0) -> dict:
    """Re-check the compiled library (``lib/*.vo``, logical path ``Symuat``) and, as its
    dependencies, MathComp and Coq's standard library, with ``coqchk`` (Coq's stand-alone kernel
    checker, which re-types the compiled proof terms without the tactics or ``coqc``); ``ok`` only
    if it exits 0 and lists no axioms. ``"checked"``: every library it checked (logical names).

    The verdict is kept for the run's process, by the sha256 of each file in ``lib`` (the same
    bytes checked again give the same verdict): the library is what every certify run compiles."""
    vos = sorted(lib.glob("*.vo"))
    key = (str(shutil.which("coqchk")),) + tuple((v.name, hashlib.sha256(v.read_bytes()).hexdigest()) for v in vos)
    with _LIBRARY_CHECKED_LOCK:
        if key in _LIBRARY_CHECKED:
            return _LIBRARY_CHECKED[key]
    text, code, seconds = _coqchk(["-R", str(lib), "Symuat", *(f"Symuat.{Path(n).stem}" for n in LIBRARY)], timeout,
                                  nice)
    checked = _libraries(text, "Checking")
    axioms = _axioms(text)
    entry = {"ok": code == 0 and axioms == "<none>" and bool(checked), "seconds": seconds, "axioms": axioms,
             "checked": sorted(checked)}
    if not entry["ok"]:
        entry["reason"] = " ".join(text.split())[-400:]
    else:
        with _LIBRARY_CHECKED_LOCK:
            _LIBRARY_CHECKED[key] = entry
    return entry


def coqchk_theories(out: Path, stems: list[str], timeout: int = 1800, nice: int = 0) -> tuple[str, int | None, float]:
    """coqchk of the tier's files ``stems`` (``out/theories/STEM.vo``) ``-norec``: their
    dependencies admitted (:func:`coqchk` says what makes that a full check)."""
    args = ["-R", str(out / "lib"), "Symuat", "-R", str(out / "theories"), THEORIES]
    return _coqchk(args + [a for stem in stems for a in ("-norec", f"{THEORIES}.{stem}")], timeout, nice)


def coqchk(out: Path, timeout: int = 1800, library: dict | None = None, jobs: int = 1, early: dict | None = None) -> dict:
    """Re-check every compiled file of the tier (``out/theories/*.vo``, logical path
    :data:`THEORIES`) with ``coqchk``, the library and everything it rests on included, in two
    parts: :func:`coqchk_library` checks the library with MathComp and Coq's standard library
    (``library``: its result, when the run started it beside the proofs); then coqchk checks the
    tier's files ``-norec``, admitting their dependencies. ``ok`` only if both exit 0, the second
    admitted no library the first did not check, and every assumption coqchk lists is a constant
    of such an admitted library (a constant sealed in a module of an admitted library is listed as
    an assumption; the first check found none): an axiom of the tier's own files, or of a library
    nobody checked, fails it. ``"axioms"``: ``<none>`` when ok, else what was listed. ``jobs``:
    the tier's files are checked by that many coqchk processes at once (each takes some files).
    ``early``: file stem → the future of its :func:`coqchk_theories`, started when the file was
    compiled (the run's batches that finish first are checked while the others compile)."""
    lib = library or coqchk_library(out / "lib", timeout)
    vos = sorted((out / "theories").glob("*.vo"), key=lambda v: -v.stat().st_size)
    stems = [v.stem for v in vos]
    early = {stem: f for stem, f in (early or {}).items() if stem in stems}
    rest = [stem for stem in stems if stem not in early]
    parts = [rest[k::max(1, jobs)] for k in range(max(1, jobs))]
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        runs = list(pool.map(lambda part: coqchk_theories(out, part, timeout), [p for p in parts if p]))
    runs += [f.result() for f in early.values()]
    seconds = round(time.perf_counter() - start, 1)
    text = "\n".join(t for t, _, _ in runs)
    code = next((c for _, c, _ in runs if c != 0), 0)
    admitted = set().union(*(_libraries(t, "Admitting") for t, _, _ in runs))
    unchecked = sorted(admitted - set(lib.get("checked", ())))
    listings = [_axioms(t) for t, _, _ in runs]
    listed = " ".join(a for a in listings if a != "<none>") or "<none>"
    foreign = [a for a in (listed.split() if "(no summary)" not in listings else [])
               if a != "<none>" and not any(a.startswith(m + ".") for m in admitted)]
    ok = bool(lib["ok"]) and code == 0 and "(no summary)" not in listings and not unchecked and not foreign
    axioms = "<none>" if ok else (lib["axioms"] if not lib["ok"] else " ".join(foreign) or listed)
    entry = {"ok": ok, "seconds": round(lib["seconds"] + seconds, 1), "axioms": axioms,
             "files": sorted(v.name for v in vos), "library_seconds": lib["seconds"], "theories_seconds": seconds}
    if not ok:
        entry["reason"] = (lib.get("reason") if not lib["ok"] else
                           f"admitted without a check ({len(unchecked)} libraries): {', '.join(unchecked)}"[:400] if unchecked else
                           f"assumed: {', '.join(foreign)}"[:400] if foreign else
                           " ".join(text.split())[-400:])
    return entry


def _split_logs(stdout: str) -> dict:
    out: dict = {}
    current = None
    for line in stdout.splitlines():
        m = re.match(r"symuat-begin (\S+)", line.strip())
        if m:
            current = m.group(1)
            out[current] = ""
        if current is not None:
            out[current] += line + "\n"
    return out


def capture(checks, certificates: dict | None = None, unequal: dict | None = None,
            results: list | None = None) -> dict:
    """Run ``checks``; return key → (verdict, [(lhs, rhs, hypotheses)] the normal form proved
    equal; ``hypotheses`` is None, or the hypotheses the identity needed (it does not hold
    without them), which the exported theorem states as premises).

    ``certificates``, if given, receives key → [(kind, data)]: what the other decision
    procedures rested their conclusions on (:mod:`symuat.kernel.certificates`). ``unequal``, if
    given, receives key → [(lhs, rhs, n)]: the pairs the normal form compared unequal (what a
    refutation refutes, :mod:`symuat.certify.refutation`), each with the number ``n`` of equal
    pairs captured before it; ``results``, the checks' results."""
    from symuat.kernel import assumptions, certificates as certs, index_calculus
    from symuat.kernel.registry import _RUNNING

    seen: dict = {}
    kept = certificates if certificates is not None else {}

    def sink(kind, data):
        running = _RUNNING.get()
        if running is not None:
            kept.setdefault(running.key, []).append((kind, data))

    def observer(lhs, rhs, result):
        running = _RUNNING.get()
        if running is not None and not result.equal and unequal is not None:
            # with the number of equal pairs seen before it: those after the last unequal pair are
            # the check's correction (decided after its refutation, :func:`correction_pairs`)
            unequal.setdefault(running.key, []).append((lhs, rhs, len(seen.get(running.key, []))))
        if running is not None and result.equal:
            hyps = assumptions.active()
            if hyps:  # proved under hypotheses: does the identity hold without them?
                with assumptions.assuming(()):
                    plain = index_calculus._compare_entries(lhs, rhs).equal
                if not plain:
                    # the theorem states them as premises (export_identity(hypotheses=...))
                    seen.setdefault(running.key, []).append((lhs, rhs, tuple(hyps)))
                    return
            seen.setdefault(running.key, []).append((lhs, rhs, None))

    # a check's verdict is computed once per process (Check.verdict): one computed before this
    # capture (a report, a test) would be reused without its procedure running, so nothing would
    # be observed; the selected checks are run afresh here and their earlier verdicts put back
    saved = [(check, check._verdict) for check in checks]
    for check in checks:
        check._verdict = None
    token = index_calculus.OBSERVER.set(observer)
    try:
        out = {}
        with certs.listening(sink):
            for check in checks:
                result = check.run()
                if results is not None:
                    results.append(result)
                out[check.key] = (result.verdict, seen.get(check.key, []))
    finally:
        index_calculus.OBSERVER.reset(token)
        for check, verdict in saved:
            if verdict is not None:
                check._verdict = verdict
    return out


def _as_list(x) -> list:
    return [x] if isinstance(x, str) else list(x)


def chains_of(stdout: str) -> dict:
    """theorem name → the derivation its accepted proof terms apply: ``{"lhs": [...], "step":
    "meq_via_nf", "rhs": [...]}`` (a normal-form proof: each side's lemmas) or ``{"direct":
    [...]}``, from the ``symuat-uses TAG NAME`` lines the probes print after ``Defined``
    (:func:`symuat.certify.normal_form.probe_text`), in the library's order."""
    out = {}
    for name, log in _split_logs(stdout).items():
        tail = log.split(f"symuat-qed {name}", 1)
        if len(tail) < 2:
            continue
        chain: dict = {tag: [] for tag in re.findall(r"^\s*symuat-probe (\w+)", tail[1], re.M)}
        if not chain:  # not probed (a theorem of another kind than an identity)
            continue
        for tag, lemma in re.findall(r"^\s*symuat-uses (\w+) (\S+)", tail[1], re.M):
            chain.setdefault(tag, []).append(lemma)
        if "lhs" in chain or "rhs" in chain:
            chain = {"lhs": chain.get("lhs", []), "step": "meq_via_nf", "rhs": chain.get("rhs", [])}
        else:
            chain = {"direct": chain.get("direct", [])}
        out[name] = chain
    return out


def bottom_line_refutations(results: list) -> list[str]:
    """The keys of the refuted checks a ``fails`` or "holds under some readings" bottom line rests
    on (:attr:`~symuat.verdicts.roll_up.ClaimVerdict.grounds`), in the claims' order."""
    from symuat.verdicts.roll_up import claim_verdicts

    refuted = {r.check.key for r in results if r.verdict is not None and str(r.verdict.status) == "refuted"}
    return list(dict.fromkeys(k for cv in claim_verdicts(results) if cv.verdict in ("fails", "holds-under-readings")
                              for k in cv.grounds if k in refuted))


def bottom_line_corrections(results: list) -> list[str]:
    """The keys of the checks whose corrections a ``fails`` or "holds under some readings" bottom
    line gives (:attr:`~symuat.verdicts.roll_up.ClaimVerdict.corrected_from`)."""
    from symuat.verdicts.roll_up import claim_verdicts

    return list(dict.fromkeys(k for cv in claim_verdicts(results) if cv.verdict in ("fails", "holds-under-readings")
                              for k in cv.corrected_from))


def resting_on_checks(record: dict) -> None:
    """A correction that rests on checks (``rests_on``: T10's on T10.c[token-shared]) is certified
    only with them: else ``unsupported``, naming those left.

    >>> r = {"checks": {"A": {"status": "unsupported"}}, "corrections": {"K": {"status": "certified", "rests_on": ["A"]}}}
    >>> resting_on_checks(r); r["corrections"]["K"]["status"], r["corrections"]["K"]["reason"]
    ('unsupported', 'rests on A, not certified')
    """
    for entry in record["corrections"].values():
        left = [d for d in entry.get("rests_on", []) if record["checks"].get(d, {}).get("status") != "certified"]
        if entry["status"] == "certified" and left:
            entry.update(status="unsupported", reason=f"rests on {', '.join(left)}, not certified")


def correction_pairs(verdict, pairs: list, unequal: list) -> list:
    """The identities the refuted ``verdict``'s correction rests on: the pairs the normal form
    proved equal after the check's last unequal comparison (its correction is decided after its
    refutation), if the correction is ``proved`` by the normal form; else :class:`Unsupported`."""
    fix = verdict.corrected.verdict if verdict.corrected is not None else None
    if fix is None or not symbolic_proved(fix):
        method = " ".join(str(getattr(fix, "method", "none")).split())[:120]
        raise Unsupported(f"the correction is not an identity proved by the normal form ({method})")
    after = max((n for *_, n in unequal), default=0)
    found = pairs[after:]
    if not found:
        raise Unsupported("the correction's identities were not captured")
    return found


def certify(pattern: str = TIER, out: Path | None = None, jobs: int = 2, timeout: int = 600,
            progress=None, check: bool = False, budget: int | None = BUDGET, depth: bool = True) -> dict:
    """The certify tier; writes ``out/record.json`` and returns the record. ``check``: re-check the
    compiled files with ``coqchk`` too (:func:`coqchk`, recorded under ``"coqchk"``). ``timeout``:
    the process limit per theorem of a batch, in CPU seconds (:func:`compile_batch`; :class:`CoqProcessLimit`
    past it, and no record is written). ``budget``: the statement budget outside the core
    (:func:`over_budget`; a check over it is recorded ``excluded`` with the reason; None: none).
    ``depth``: the inductions over the depth are in the run whatever ``pattern`` (:func:`selected`)."""
    import symuat.claims  # noqa: F401  (registration)
    from symuat.kernel.registry import REGISTRY

    _STOPPED.clear()  # a new run (an earlier one in this process may have been interrupted)
    _UNNICED.clear()
    refutation_budget = None if budget is None else max(budget, REFUTATION_BUDGET)
    out = Path(out or out_dir())
    if out.exists():
        shutil.rmtree(out)
    (out / "theories").mkdir(parents=True)
    checks = [c for c in REGISTRY.all_checks() if selected(c, pattern, depth)]
    certificates: dict = {}
    unequal: dict = {}
    results: list = []
    # the library compiles (coqc) while the checks run (Python): neither waits for the other; then
    # coqchk of the library (with MathComp: most of coqchk's time) starts at once, in a thread of its
    # own, on the core the checks leave idle, then beside the proofs — not niced: niced, it was the
    # run's last process, alone on a core for ~40 s after the proofs (quiet full run, 2 cores,
    # 2026-11-28: 236 s wall niced, 227 s not; the same 414 s CPU). An interruption ends its
    # process with the others' (:func:`_stop_coq`)
    checking = ThreadPoolExecutor(max_workers=1 + max(1, jobs)) if check else None

    def build_library():
        seconds = compile_library(out)
        return seconds, (checking.submit(coqchk_library, out / "lib", nice=0) if checking else None)

    with ThreadPoolExecutor(max_workers=1) as library:
        compiled = library.submit(build_library)
        try:
            captured = capture(checks, certificates, unequal, results)
            lib_seconds, library_check = compiled.result()
        except BaseException:  # Ctrl-C, SIGTERM (in the checks or waiting for the library): its coqc ends now
            _stop_coq()
            if checking:
                checking.shutdown(wait=False, cancel_futures=True)
            raise
    record = {"fingerprint": fingerprint(), "toolchain": toolchain(), "pattern": pattern, "checks": {},
              "library_seconds": round(lib_seconds, 1), "budget": budget}
    todo = []
    identities: set = set()  # checks exported as identities (a proof through the normal form or direct)
    for key, (verdict, pairs) in captured.items():
        if not proved_for_symbolic_sizes(verdict):
            continue
        entry = {"status": None, "theorems": [], "hashes": [], "reason": ""}
        record["checks"][key] = entry
        identity = symbolic_proved(verdict)
        if key in DEPTH_THEOREMS:
            # an induction over the depth: one theorem for every number of layers (coq/SymuatDepth.v),
            # its step discharged by the one-layer identity symuat's normal form proved
            # (and, for a check with a one-layer identity of its own, that identity: own_step)
            try:
                theorems = [export_depth(coq_name(key, 0), key, step=step_pair(captured), own=own_step(captured, key))]
            except Unsupported as exc:
                entry.update(status="unsupported", reason=str(exc))
                continue
            entry["theorems"] = [t.name for t in theorems]
            entry["hashes"] = [t.digest for t in theorems]
            todo.append((key, theorems))
            continue
        if key in NOT_STATED:  # an induction over depth the exporter does not state: why
            entry.update(status="unsupported", reason=NOT_STATED[key])
            continue
        if not pairs and not certificates.get(key):
            # a check whose verdict *is* another check's (REGISTRY.verdict: A6.biases is
            # L2.9[b'_{2,2}]'s): it stands or falls with that check's exported theorems
            same = reused_verdict(key, verdict, captured)
            if same:
                entry.update(status=None, via=same)
                continue
            if identity:
                entry.update(status="unsupported", reason="no statement captured (the verdict is reused from another check)")
                continue
        try:
            if identity:
                theorems = [export_identity(coq_name(key, n), lhs, rhs, hypotheses=hyps or ())
                            for n, (lhs, rhs, hyps) in enumerate(pairs)]
                # a step that is no identity of matrices, recorded beside them (WP8.relative's one pair)
                beside = [c for c in certificates.get(key, []) if c[0] in BESIDE_IDENTITIES]
                if beside:
                    theorems += export_certificates(coq_name(key, len(theorems)), verdict, beside)
            elif verdict.method.startswith(MISTAKES):
                # "every cited mistake is refuted": the refutation of each mistake's check
                theorems = export_mistakes(key, verdict, captured, unequal, certificates)
            else:
                # proved for symbolic sizes by another procedure: exported from what it recorded
                # (symuat.certify.kinds), else counted in the denominator and listed with the reason
                theorems = export_certificates(coq_name(key, 0), verdict, certificates.get(key, []))
        except Unsupported as exc:
            entry.update(status="unsupported", reason=str(exc))
            continue
        if any(kind == "pair_rotation" for kind, _ in certificates.get(key, [])):
            entry["reason"] = PREMISES  # what the theorem assumes of cos and sin, said with the certification
        elif vanishing.premises(certificates.get(key, [])):
            entry["reason"] = vanishing.premises(certificates.get(key, []))  # what it assumes of σ
        elif any(kind == "softmax_witness" for kind, _ in certificates.get(key, [])):
            entry["reason"] = SOFTMAX_PREMISES  # what it assumes of exp and of W_V, W_O
        kron = [data for kind, data in certificates.get(key, []) if kind == "rank_kron"]
        if kron and kron[0].get("order") == "col":
            # the theorem covers every reordering of I_N ⊗ (BA)ᵀ; that the col lift (BA)ᵀ ⊗ I_N is one
            # is not proved in Coq: the check is not counted as certified until it is
            entry.update(status="unsupported", reason="a rank of the col lift (BA)ᵀ ⊗ I_N: Coq proves the rank for every "
                         "reordering of rows and columns of I_N ⊗ (BA)ᵀ (SymuatKron), but not that this lift is "
                         "one (the perfect shuffles); not counted until it is")
            continue
        if kron:  # how the Coq objects correspond to symuat's lift
            entry["reason"] = kron_rank.reason(kron[0])
        entry["reason"] = entry["reason"] or independence.reason(certificates.get(key, []))  # what was certified
        # refutations (the mistakes', a dependence's witness) are computations: the refutations' budget
        computed = verdict.method.startswith(MISTAKES) or all(t.proof.endswith("symuat_refute.") for t in theorems)
        allowed = refutation_budget if computed else budget
        # the one-pair rotation lemma is a fixed 2×2 computation, not a prenex sum: outside the budget
        sized = [t for t in theorems if not t.proof.startswith("symuat_rot2")]
        # so is a constancy proved by conversion (independence.by_conversion): no sum is expanded
        sized = [t for t in sized if not independence.by_conversion(t)]
        if over_budget(key, sized, allowed):
            entry.update(status="excluded", reason=over_budget(key, sized, allowed))
            continue
        entry["theorems"] = [t.name for t in theorems]
        entry["hashes"] = [t.digest for t in theorems]
        todo.append((key, theorems))
        if identity:
            identities.add(key)

    # the refuted checks a failing bottom line rests on: the refutation, as a theorem (one theorem
    # for the checks whose refutations state the same: T8's readings that agree up to the depth
    # their witness has, :func:`shared_statement`)
    record["refutations"] = {}
    stated: dict = {}  # a refutation's statement and proof, up to its name → the first check's key
    for key in bottom_line_refutations(results):
        verdict, pairs = captured[key]
        entry = {"status": None, "theorems": [], "hashes": [], "reason": ""}
        record["refutations"][key] = entry
        reused = reused_refutation(key, verdict, captured, unequal)
        if reused:
            # refuted by a link that is another check (T7's readings by T3.1's): the identity that
            # check compared unequal, at the counterexample the verdict reuses
            entry["link"] = reused
        # the verdict *is* another check's (T6.aaai[W3=unchanged] is L2.8.sum[W3=unchanged]'s):
        # that check's refutation, from what it captured
        via = None if reused else verdict_of_check(key, verdict, pairs, captured, unequal, certificates)
        if via:
            entry["link"] = via
            pairs = captured[via][1]
        try:
            theorems = export_check_refutation("r" + coq_name(key, 0), verdict, unequal.get(reused or via or key, []),
                                               pairs, certificates.get(via or key, []))
        except Unsupported as exc:
            entry.update(status="unsupported", reason=str(exc))
            continue
        entry["kind"] = "identity" if verdict.method.startswith(DENIED_HOLDS) else "refutation"
        if vanishing.refutation_premises(certificates.get(key, [])):
            entry["reason"] = vanishing.refutation_premises(certificates.get(key, []))  # what it assumes of σ
        entry["reason"] = entry["reason"] or undefined.reason(theorems)  # a statement other than the values at the counterexample
        if any(kind == ROTATION_REFUTATION for kind, _ in certificates.get(key, [])):
            entry["reason"] = ROTATION_PREMISES  # the premise that the RoPE blocks are rotations
        if any(kind == "exact_dependence" for kind, _ in certificates.get(key, [])):
            entry["reason"] = exact_dependence.REASON  # T10: the exporter's own small witness, not the kernel's
        if any(kind == "reference_refutation" for kind, _ in certificates.get(key, [])):
            from symuat.certify.reference import reason as reference_reason

            entry["reason"] = reference_reason(theorems) or entry["reason"]  # A4: the exporter's own witness
        same = stated.setdefault(shared_statement(theorems), key)
        if same != key:
            entry["same_statement"] = same  # its theorems are the first's: status copied below
            continue
        if over_budget(key, theorems, refutation_budget):
            entry.update(status="excluded", reason=over_budget(key, theorems, refutation_budget))
            continue
        entry["theorems"] = [t.name for t in theorems]
        entry["hashes"] = [t.digest for t in theorems]
        todo.append((key, theorems, "refutations"))

    # the proved corrections those bottom lines give: exported as every proved identity is
    record["corrections"] = {}
    for key in bottom_line_corrections(results):
        verdict, pairs = captured[key]
        entry = {"status": None, "theorems": [], "hashes": [], "reason": "", "kind": "identity"}
        record["corrections"][key] = entry
        computed: set = set()
        fix = verdict.corrected.verdict if verdict.corrected is not None else None
        same = [k for k, (v, _) in captured.items() if v is fix and k in record["checks"]]
        if same:
            # the correction *is* a check's verdict (T8's: L2.main.exact[induction], one theorem
            # for every depth): it stands or falls with that check's theorems
            entry.update(via=same[0], kind="check")
            continue
        try:
            # a refuted negation's correction is the identity it denied: the direct tactic, as its
            # refutation (:func:`symuat.certify.refutation.export_check_refutation`)
            direct = "symuat_entry." if verdict.method.startswith(DENIED_HOLDS) else None
            counted = [d for kind, d in certificates.get(key, []) if kind == DENSITY_REFUTATION]
            shaped = [d for kind, d in certificates.get(key, []) if kind == SHAPE_CLAIM]
            printed = [(kind, d) for kind, d in certificates.get(key, []) if kind == "printed_sum"]
            members = [d for kind, d in certificates.get(key, []) if kind == exact_dependence.MEMBERS]
            if members:
                # a corrected list of the parameters that depend on the input (T10's): each member's
                # dependence at a witness, the identities that fix the others, and the checks it
                # rests on (REGISTRY.edges: T10.c[token-shared]), certified on their own
                entry["kind"] = "dependence list"
                theorems = exact_dependence.export_members("k" + coq_name(key, 0), members[0])
                computed = {t.name for t in theorems}  # computations at a witness: outside the budget
                after = max((n for *_, n in unequal.get(key, [])), default=0)
                theorems += [export_identity("k" + coq_name(key, len(theorems) + n), lhs, rhs, hypotheses=hyps or ())
                             for n, (lhs, rhs, hyps) in enumerate(pairs[after:])]
                entry["rests_on"] = sorted(d for d in REGISTRY.edges.get(key, ()) if d in captured)
                entry["reason"] = exact_dependence.MEMBERS_REASON
            elif counted:  # a refuted density: its correction is the derived density (support, witness, count)
                entry["kind"] = "count"
                theorems = [t for t in export_density_refutation("k" + coq_name(key, 0), counted[0])
                            if not t.name.endswith("_refute")]
            elif shaped:  # a refuted shape: its correction is the shape the expression has
                entry["kind"] = "shape"
                theorems = export_shape_correction("k" + coq_name(key, 0), shaped[-1])
            elif printed and fix is not None and str(fix.status) == "proved":
                # a refuted printed row: its correction, the row printed right, for every size
                entry["kind"] = "printed sum"
                theorems = export_certificates("k" + coq_name(key, 0), fix, printed)
            else:
                # a verdict that *is* another check's: the identities that check captured
                via = verdict_of_check(key, verdict, pairs, captured, unequal, certificates)
                if via:
                    entry["link"] = via
                    pairs = captured[via][1]
                theorems = [export_identity("k" + coq_name(key, n), lhs, rhs, proof=direct, hypotheses=hyps or ())
                            for n, (lhs, rhs, hyps) in enumerate(correction_pairs(verdict, pairs,
                                                                                 unequal.get(via or key, [])))]
        except Unsupported as exc:
            entry.update(status="unsupported", reason=str(exc))
            continue
        sized = [t for t in theorems if t.name not in computed]
        if over_budget(key, sized, budget):
            entry.update(status="excluded", reason=over_budget(key, sized, budget))
            continue
        entry["theorems"] = [t.name for t in theorems]
        entry["hashes"] = [t.digest for t in theorems]
        todo.append((key, theorems, "corrections"))

    # batches: the theorems dealt to ``jobs`` files, longest statements first (a balanced load)
    # (the theorems over the depth in a file of their own: it compiles whole, so coqchk re-checks
    # them whatever fails in the other batches; those of checks outside the core in 3 files a
    # job, each shortest first: a failure there — X8.affine's — touches no core file, and the
    # theorems it compiles again, :func:`compile_batch`, are the few short ones before it)
    outside = {t.name for key, ts, *_ in todo if not in_core(key) for t in ts}
    allthm = sorted((t for _, ts, *_ in todo for t in ts), key=lambda t: -len(t.statement))
    depth = [t for t in allthm if getattr(t, "library", "")]
    rest = [t for t in allthm if not getattr(t, "library", "") and t.name not in outside]
    extension = sorted((t for t in allthm if t.name in outside and not getattr(t, "library", "")),
                       key=lambda t: len(t.statement))
    # the extension in 3 files a job: a failing theorem's file is compiled again without it
    # (:func:`compile_batch`), and a small file is little to compile again; the short depth file
    # last, to fill a core the others leave idle
    chunks = 3 * max(1, jobs)
    batches = (deal(rest, max(1, jobs), key=lambda t: -len(t.statement))
               + deal(extension, chunks, key=lambda t: len(t.statement)) + [depth])
    batches = [b for b in batches if b]

    early: dict = {}  # a batch's compiled files, coqchk'd as soon as they exist (at nice 10)

    def build(item):
        k, batch = item
        res = compile_batch(out / "lib", batch, out / "theories" / f"batch{k}.v", timeout)
        if checking is not None:
            for stem in sorted({r["vo"] for r in res.values() if r.get("vo")}):
                early[stem] = checking.submit(coqchk_theories, out, [stem], nice=10)
        return res

    start = time.perf_counter()
    results: dict = {}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        try:
            for res in pool.map(build, enumerate(batches)):
                results.update(res)
        except BaseException:  # Ctrl-C, SIGTERM: the threads' coqc end now, not when their batch is done
            _stop_coq()
            raise
    for n, (key, theorems, *section) in enumerate(todo, 1):
        entry = record[section[0] if section else "checks"][key]
        got = [results.get(t.name, {"ok": False, "log": "", "reason": "not compiled"}) for t in theorems]
        entry["proofs"] = {t.name: {"proof": t.proof_kind if (key in identities and not section)
                                    or entry.get("kind") == "identity" or getattr(t, "library", "")
                                    else "certificate"} for t in theorems}
        for t in theorems:
            if getattr(t, "fallback", ""):
                entry["proofs"][t.name]["fallback"] = t.fallback
            if getattr(t, "library", ""):  # an induction over depth: the library theorem and its step
                entry["proofs"][t.name].update(library=t.library, step=t.step)
                if getattr(t, "check_step", ""):
                    entry["proofs"][t.name]["check_step"] = t.check_step
        if all(r["ok"] for r in got):
            entry["status"] = "certified"
            chains = chains_of("".join(r["log"] for r in got))
            for t in theorems:
                if t.name in chains:
                    entry["proofs"][t.name]["chain"] = chains[t.name]
            entry["lemmas"] = list(dict.fromkeys(
                l for t in entry["theorems"] for part in ("lhs", "step", "rhs", "direct")
                for l in _as_list(chains.get(t, {}).get(part, []))))
        else:
            entry["status"] = "failed"
            entry["reason"] = next(r["reason"] for r in got if not r["ok"])
        if progress:
            progress(n, len(todo), key, entry["status"])
    # a check or a correction whose verdict *is* a check's: that check's status and theorems
    for entry in (*record["checks"].values(), *record["corrections"].values()):
        via = entry.get("via")
        if via:
            dep = record["checks"].get(via, {})
            entry.update(status=dep.get("status") or "unsupported", theorems=dep.get("theorems", []),
                         hashes=dep.get("hashes", []), lemmas=dep.get("lemmas", []),
                         proofs=dep.get("proofs", {}),
                         reason=f"the verdict of {via}" + (f": {dep.get('reason')}" if dep.get("reason") else ""))
    resting_on_checks(record)
    for key, entry in record["refutations"].items():
        same = entry.get("same_statement")
        if same:
            dep = record["refutations"][same]
            entry.update({k: dep.get(k) for k in ("status", "theorems", "hashes", "lemmas", "proofs", "reason")
                          if k in dep})
    record["compile_seconds"] = round(time.perf_counter() - start, 1)
    if check:
        after = time.perf_counter()
        _unnice()  # the proofs are done: what coqchk has left runs at the others' priority
        try:
            record["coqchk"] = coqchk(out, library=library_check.result(), jobs=jobs, early=early)
        finally:
            checking.shutdown()
        # what coqchk added to the run: the library's check ran beside the proofs
        record["coqchk"]["after_proofs_seconds"] = round(time.perf_counter() - after, 1)
        # the certified theorems coqchk re-checked (those in a file coqc compiled whole; a
        # theorem before a failing one in its batch passed Qed but has no .vo)
        certified = [t for section in ("checks", "refutations", "corrections") for e in record[section].values()
                     if e["status"] == "certified" and not e.get("via") and not e.get("same_statement") for t in e["theorems"]]
        covered = [t for t in certified if results.get(t, {}).get("vo")]
        record["coqchk"]["theorems"] = f"{len(covered)} of {len(certified)}"
    statuses = [e["status"] for e in record["checks"].values()]
    record["summary"] = {s: statuses.count(s) for s in ("certified", "failed", "unsupported", "excluded")}
    record["summary"]["symbolic_proved"] = len(statuses)
    kinds = [p["proof"] for e in record["checks"].values() if e["status"] == "certified"
             and not e.get("via") for p in e.get("proofs", {}).values()]
    record["summary"]["proofs"] = {k: kinds.count(k) for k in ("normal form", "direct", "certificate",
                                                               "induction over depth")}
    refuted = [e["status"] for e in record["refutations"].values()]
    record["summary"]["refutations"] = {s: refuted.count(s) for s in ("certified", "failed", "unsupported", "excluded")}
    record["summary"]["refutations"]["total"] = len(refuted)
    fixed = [e["status"] for e in record["corrections"].values()]
    record["summary"]["corrections"] = {s: fixed.count(s) for s in ("certified", "failed", "unsupported", "excluded")}
    record["summary"]["corrections"]["total"] = len(fixed)
    (out / "record.json").write_text(json.dumps(record, indent=1, sort_keys=True))
    from symuat.certify import record as rec

    rec.load.cache_clear()
    return record
