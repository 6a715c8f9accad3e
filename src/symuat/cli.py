"""The ``symuat`` command.

``symuat report [ID ...] [--format table|json|markdown|latex]`` runs the checks and prints one
bottom line per claim of the papers (holds / holds under some readings / fails, with strength
and correction); start here. ``symuat prove [ID ...] [--all] [--format table|json|latex]`` runs
the checks of the given claim IDs (``P5`` a claim, ``P5.f`` a step, ``P5.f[C-col,LR,conf]`` one
reading, ``P5.f[C-col]`` every reading with these tags) and prints one verdict per check, row by
row as they finish. Exit status: 0 when every check ran (a refutation is a result), 1 when a
check crashed, 2 for an unknown ID or a usage error.

Ctrl-C (SIGINT) stops a run: one line on stderr, exit status 130, worker processes ended, no
temporary file left; SIGTERM does the same with exit status 143 (:mod:`symuat.interrupt`).

``symuat list`` prints the claim IDs; ``symuat show ID ...`` prints each check in full
(method, counterexample, corrected statement).
"""

from __future__ import annotations

import argparse
import re
import sys

from symuat.errors import UnknownClaimError, WorkerLostError
from symuat.render.help import HelpFormatter
from symuat.verdicts.readings import READINGS


def _registry():
    import symuat.claims  # noqa: F401  (registers the catalogue)
    from symuat.kernel.registry import REGISTRY

    return REGISTRY


def _canonical(registry, pattern: str) -> str:
    """``p5`` → ``P5``, ``p5.F`` → ``P5.f``: an ID written in another case, when only one ID
    matches it; else the pattern unchanged."""
    base, bracket, rest = pattern.partition("[")
    ids = {c.id for c in registry.all_checks()} | set(registry.claims)
    if base in ids:
        return pattern
    same = [i for i in ids if i.lower() == base.lower()]
    return same[0] + bracket + rest if len(same) == 1 else pattern


def _suggest(registry, pattern: str, message: str) -> str:
    """The registry's message, with suggestions found regardless of case when it has none."""
    import difflib

    if "did you mean" in message:
        return message
    known = sorted({c.id for c in registry.all_checks()} | set(registry.claims))
    lower = {k.lower(): k for k in known}
    close = [lower[k] for k in difflib.get_close_matches(pattern.lower(), list(lower), n=4)]
    return message + (f"; did you mean {', '.join(close)}?" if close else "; symuat list names every claim")


def select(registry, patterns):
    """Checks for IDs, as :meth:`Registry.select`, plus partial readings: ``P5.f[C-col]`` selects
    every reading of ``P5.f`` whose tags include ``C-col`` (an error lists the valid readings).
    IDs are matched regardless of case (``p5`` is ``P5``); an unknown ID gets suggestions."""
    out = []
    for pattern in patterns:
        pattern = _canonical(registry, pattern.strip())
        m = re.fullmatch(r"([^\[]+)\[(.*)\]", pattern)
        if m is None or any(c.key == pattern for c in registry.all_checks()):
            try:
                hits = registry.select([pattern])
            except UnknownClaimError as exc:
                raise UnknownClaimError(_suggest(registry, pattern, str(exc))) from None
        else:
            base, tags = m.group(1), [t.strip() for t in m.group(2).split(",") if t.strip()]
            candidates = registry.select([base])
            hits = [c for c in candidates if c.reading and all(t in c.reading for t in tags)]
            if not hits:
                valid = sorted({",".join(c.reading) for c in candidates if c.reading})
                listed = "; ".join(valid[:12]) + (" …" if len(valid) > 12 else "")
                raise UnknownClaimError(
                    f"no reading of {base} has the tags {','.join(tags)!r}"
                    + (f"; valid readings: {listed}" if valid else f"; {base} has no readings"))
        out += [c for c in hits if c not in out]
    return out


EXIT_CODES = ("exit status: 0 every check ran (a refutation is a result, not a failure); 1 a check "
              "crashed (or a worker process was killed); 2 bad input (an unknown ID, a bad option); 130 interrupted (Ctrl-C); 143 terminated "
              "(SIGTERM)")
KEYS = ("IDs: P5 (a claim: every check of it), P5.f (one step), P5.f[C-col,LR,square] (one reading of "
        "it), P5.f[C-col] (every reading with these tags); case does not matter (p5 is P5). "
        "symuat list names every claim.")
EPILOG = "\n".join((KEYS, EXIT_CODES))
STATUSES = ("proved", "proved-at-sizes", "numeric-only", "refuted", "informal", "definition", "error")
CERTIFY = ("Export every symbolic `proved` of the catalogue (outside the core groups D, P, M, H, X1, X3: "
           "within a statement budget; every check left out is listed with its reason), every refutation "
           "a failing bottom line rests on (proved at its counterexample) and their corrections to Coq "
           "theorems, compile them with coqc and write the record the report and the docs read ('+coq'). "
           "Needs coqc (Coq 8.16) and MathComp (apt-get install coq libcoq-mathcomp-algebra). "
           "Takes about 7.5 minutes with --jobs 2 on 2 cores (2026-11-28, CI: library 25 s, proofs "
           "295 s, --coqchk 116 s more; coq/README.md).")
CERTIFY_EXIT = ("exit status: 0 the tier ran (a theorem Coq rejects is listed, not a crash); 1 --coqchk "
                "failed or found an axiom, or a crash; 2 bad input (no coqc, a bad --pattern); "
                "130 interrupted")
LIST_EXIT = "exit status: 0 listed; 2 a bad option"


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors fit the width and suggest the near choice:
    ``symuat prov`` → ``unknown choice 'prov'; did you mean 'prove'?`` (exit status 2)."""

    def add_argument(self, *args, **kwargs):
        """An option with a default and no help still shows its default in ``--help``."""
        if (args and str(args[0]).startswith("-") and "help" not in kwargs
                and kwargs.get("default") not in (None, False)):
            kwargs["help"] = "(default: %(default)s)"
        return super().add_argument(*args, **kwargs)

    def error(self, message):
        import difflib
        import textwrap

        from symuat.render.report import terminal_width

        m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if m:
            choices = re.findall(r"'([^']*)'", m.group(2))
            close = difflib.get_close_matches(m.group(1).lower(), choices, n=1, cutoff=0.5)
            message = (message[:m.start()] + f"unknown choice {m.group(1)!r}"
                       + (f"; did you mean {close[0]!r}?" if close else f" (choose from {', '.join(choices)})"))
        self.print_usage(sys.stderr)
        text = textwrap.fill(f"{self.prog}: error: {message}", terminal_width(), subsequent_indent="  ",
                             break_on_hyphens=False)
        self.exit(2, text + "\n")


def _parser() -> argparse.ArgumentParser:
    from symuat import __version__

    fmt = HelpFormatter
    parser = Parser(
        prog="symuat", formatter_class=fmt,
        description="Mechanical proofs and numeric checks of the UAT / DUAT papers' claims. "
                    "Start with `symuat report`.",
        epilog=EPILOG)
    parser.add_argument("--version", action="version", version=f"symuat {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    report = sub.add_parser(
        "report", formatter_class=fmt, epilog="\n".join((READINGS, EPILOG)),
        help="one bottom line per claim: holds / holds under some readings / fails",
        description="One bottom line per claim of the papers: holds, holds under some readings (a "
                    "reading is one choice on each axis the text leaves open, e.g. C-col,LR), or fails, "
                    "with its strength and the proved correction. Verdicts of an identical earlier run "
                    "(same sources, same library versions) are reused; --fresh re-runs every check. "
                    "--format json: {\"headline\": the counts of the first lines, \"claims\": one "
                    "object per row}.")
    report.add_argument("ids", nargs="*", metavar="ID", help="claim IDs (default: every claim)")
    report.add_argument("--format", choices=("table", "json", "markdown", "latex"), default="table")
    report.add_argument("--wide", action="store_true", help="no wrapping to the terminal's width")
    report.add_argument("--fresh", action="store_true",
                        help="run every check now, not reuse the verdicts of an identical earlier run")
    report.add_argument("--jobs", type=int, default=None, metavar="N",
                        help="processes to run the checks on (default: every core); output order is fixed")
    prove = sub.add_parser("prove", formatter_class=fmt, epilog="\n".join((READINGS, EPILOG)),
                           help="run checks and print one verdict per check",
                           description="Run the checks of the given claims and print one row per check "
                                       "as it finishes: status, whether it agrees with the paper, notes.")
    prove.add_argument("ids", nargs="*", metavar="ID", help="claim IDs or check keys (see below)")
    prove.add_argument("--all", action="store_true", help="every claim symuat knows")
    prove.add_argument("--format", choices=("table", "json", "latex"), default="table")
    prove.add_argument("--wide", action="store_true", help="full keys and notes, no wrapping to the terminal's width")
    prove.add_argument("--group", action="store_true",
                       help="one row per outcome of a step: the readings that share a status, an "
                            "agreement with the paper and notes, with the axis values that set them apart")
    show = sub.add_parser("show", formatter_class=fmt, epilog=EPILOG,
                          help="run checks and print each in full (method, counterexample, correction)",
                          description="Run the given checks and print each in full: statement, reading, "
                                      "method, counterexample or witness, corrected statement. --format "
                                      "json: the records of `prove --format json`, with the why line.")
    show.add_argument("ids", nargs="+", metavar="ID", help="claim IDs or check keys (see below)")
    show.add_argument("--format", choices=("text", "json"), default="text")
    show.add_argument("--wide", action="store_true", help="no wrapping to the terminal's width")
    for p in (prove, show):
        p.add_argument("--status", metavar="S[,S…]",
                       help="only the checks with these statuses: " + ", ".join(STATUSES))
        p.add_argument("--failed", action="store_true",
                       help="only the checks that disagree with the paper, crashed, or (symuat's own "
                            "extensions) are not established")
        p.add_argument("--jobs", type=int, default=None, metavar="N",
                       help="processes to run the checks on (default: every core); output order is fixed")
    listing = sub.add_parser("list", formatter_class=fmt, epilog=LIST_EXIT,
                             help="list the claims and how many checks each has",
                             description="Every claim symuat knows: its ID, how many checks it has, its title.")
    listing.add_argument("--format", choices=("table", "json"), default="table")
    certify = sub.add_parser("certify", formatter_class=fmt, description=CERTIFY, epilog=CERTIFY_EXIT,
                             help="export every symbolic `proved` of the catalogue to Coq and "
                                  "compile it (needs coqc 8.16 and MathComp; ~4 min on 2 cores)")
    certify.add_argument("--out", default=None, help="build directory (default: build/certify)")
    certify.add_argument("--jobs", type=int, default=2, metavar="N", help="coqc processes (default 2)")
    certify.add_argument("--coqchk", action="store_true",
                         help="re-check the compiled proofs, the library and MathComp with coqchk "
                              "(Coq's independent kernel checker; a failure or an axiom exits 1)")
    certify.add_argument("--pattern", default=None, metavar="REGEX",
                         help="claim IDs to export (a regular expression matched in full; default: every "
                              "claim). A record for a narrower pattern is written "
                              "to --out like any other")
    from symuat.models.command import add_parser as add_model_parser

    add_model_parser(sub)
    parser._symuat_sub = sub  # the sub-command parsers, for usage errors in their own words
    return parser


def _parse(argv):
    """Parse ``argv``; an option a sub-command does not know gets that sub-command's usage."""
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        chosen = parser._symuat_sub.choices.get(args.command, parser)
        if args.command == "model" and getattr(args, "model_command", None):
            inner = [a for a in chosen._subparsers._group_actions if hasattr(a, "choices")] if chosen._subparsers else []
            chosen = inner[0].choices.get(args.model_command, chosen) if inner else chosen
        chosen.error(f"unrecognized arguments: {' '.join(extra)}" + _option_hint(chosen, extra))
    return args


def _option_hint(parser, extra) -> str:
    """``; did you mean --format?`` for a mistyped option (case-insensitive), else nothing.

    >>> import argparse
    >>> p = argparse.ArgumentParser(); _ = p.add_argument("--format")
    >>> _option_hint(p, ["--formt", "json"])
    '; did you mean --format?'
    """
    import difflib

    known = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]
    hints = []
    for word in extra:
        if word.startswith("--"):
            name = word.split("=", 1)[0].lower()
            hints += [m for m in difflib.get_close_matches(name, known, n=1, cutoff=0.6) if m not in hints]
    return f"; did you mean {' or '.join(hints)}?" if hints else ""


def failed(result) -> bool:
    """A check a reader asking for what failed wants to see: it disagrees with the paper, it
    crashed, or (symuat's own extension) it is not established."""
    from symuat.verdicts.roll_up import POSITIVE, agrees_with_paper

    if result.error or result.verdict is None:
        return True
    if result.check.role == "extension":
        return result.verdict.status not in POSITIVE and str(result.verdict.status) not in ("informal", "definition")
    return agrees_with_paper(result.check, result.verdict) is False


def _filter(args):
    """The --status/--failed filter as a predicate on results (None: show everything)."""
    statuses = None
    if getattr(args, "status", None):
        statuses = {s.strip() for s in args.status.split(",") if s.strip()}
        unknown = statuses - set(STATUSES)
        if unknown:
            raise ValueError(f"--status: unknown status {', '.join(sorted(unknown))}; known: {', '.join(STATUSES)}")
    want_failed = getattr(args, "failed", False)
    if statuses is None and not want_failed:
        return None
    from symuat.render.report import status_of

    return lambda r: ((statuses is None or status_of(r) in statuses) and (not want_failed or failed(r)))


def main(argv: list[str] | None = None) -> int:
    if (sys.argv[1:] if argv is None else list(argv)) == ["--version"]:  # instant: no parser, no imports
        from symuat import __version__

        print(f"symuat {__version__}")
        raise SystemExit(0)  # as argparse's --version action does
    args = _parse(argv)
    if args.command == "model":
        from symuat.models.command import run as run_model

        bad = _not_utf8(args)
        if bad:
            print(f"symuat: {bad}", file=sys.stderr)
            return 2
        return run_model(args)
    if args.command == "certify":
        from symuat.certify.cli import run as run_certify

        return run_certify(args)
    if args.command == "report":  # before the catalogue's code is imported: the cache key describes that code
        from symuat.cache import source_digest

        args.sources = source_digest()
    registry = _registry()
    from symuat.render import report

    if args.command == "list":
        print(report.claim_list(registry.ordered_claims(), fmt=args.format))
        return 0
    if args.command == "prove" and args.group and args.format != "table":
        print(f"symuat prove: --group is a table layout; with --format {args.format} every check is "
              "its own record (drop --group)", file=sys.stderr)
        return 2
    if args.command == "prove" and not args.all and not args.ids:
        print("symuat prove: give claim IDs or --all (see `symuat list`, or `symuat report` for the "
              "bottom lines)", file=sys.stderr)
        return 2
    try:
        keep = _filter(args)
        if getattr(args, "all", False) or (args.command == "report" and not args.ids):
            checks = registry.all_checks()
        else:
            checks = select(registry, args.ids)
    except (UnknownClaimError, ValueError) as exc:
        print(f"symuat: {exc}", file=sys.stderr)
        return 2
    jobs = getattr(args, "jobs", None)
    if jobs is not None and jobs < 1:
        print(f"symuat {args.command}: --jobs must be at least 1", file=sys.stderr)
        return 2
    if args.command == "report":
        results, verdicts = cached_report(checks, registry, jobs=jobs, fresh=args.fresh,
                                          sources=getattr(args, "sources", None))
        render = {"table": lambda v: report.verdict_table(v, wide=args.wide), "json": report.verdicts_json,
                  "markdown": report.verdicts_markdown, "latex": report.verdicts_latex}[args.format]
        print(render(verdicts))
    elif args.command == "show":
        results = report.run_with_progress(checks, jobs=jobs)
        shown = [r for r in results if keep is None or keep(r)]
        if args.format == "json":
            print(report.details_json(shown))
        else:
            width = None if args.wide else report.terminal_width()
            print("\n\n".join(report.detail(r, width) for r in shown))
        if keep is not None and args.format != "json":
            print(f"\nshown: {len(shown)} of {report.plural(len(results), 'check')}")
    elif args.format == "table" and args.group:
        results = report.run_with_progress(checks, jobs=jobs)
        shown = [r for r in results if keep is None or keep(r)]
        lines = report.grouped_rows(shown, wide=args.wide)
        writer = report.TableWriter(wide=args.wide)
        writer.finish(results, shown=len(shown))
        legend = report.reading_legend(wide=args.wide) if any("readings: " in ln for ln in lines) else []
        print("\n".join(lines + writer.lines + legend))
    elif args.format == "table":
        writer = report.TableWriter(checks_keys(checks), wide=args.wide, out=sys.stdout)
        shown = []

        def row(r):
            if keep is None or keep(r):
                shown.append(r)
                writer.row(r)

        results = report.run_with_progress(checks, on_result=row, jobs=jobs)
        writer.finish(results, shown=len(shown))
    else:
        results = report.run_with_progress(checks, jobs=jobs)
        shown = [r for r in results if keep is None or keep(r)]
        print(report.to_json(shown) if args.format == "json" else report.to_latex(shown))
    crashed = [r for r in results if r.error]
    for r in crashed:
        print(f"symuat: check {r.check.key} crashed: {r.error}", file=sys.stderr)
    return 1 if crashed else 0


def cached_report(checks, registry, jobs=None, fresh: bool = False, sources: str | None = None):
    """The results of ``checks`` and the bottom lines rolled up from them: from :mod:`symuat.cache`
    when an identical run is stored (never when ``fresh``), else computed now (with progress on a
    terminal) and stored."""
    from symuat import cache
    from symuat.render import report
    from symuat.kernel.registry import REGISTRY
    from symuat.verdicts.roll_up import claim_verdicts

    # the key: before any check runs, on the sources as they were when the run began (``sources``)
    entry = cache.Entry(checks, sources=sources) if cache.enabled() and registry is REGISTRY else None
    if entry is not None and not fresh:
        hit = entry.load()
        if hit is not None and "verdicts" in hit[2]:
            results, edges, extra = hit
            for caller, keys in edges.items():
                REGISTRY.edges.setdefault(caller, set()).update(keys)
            return results, extra["verdicts"]
    results = report.run_with_progress(checks, jobs=jobs)
    verdicts = claim_verdicts(results, registry)
    if entry is not None:
        entry.store(results, REGISTRY.edges, {"verdicts": verdicts})  # not kept if a source changed meanwhile
    return results, verdicts


#: the options whose value is text to tokenize (a path may hold any bytes; a text must be UTF-8)
TEXT_OPTIONS = ("text", "token", "vs")


def _not_utf8(args) -> str | None:
    r"""The problem with a text option given as bytes that are not UTF-8 (Python hands them on as
    lone surrogates, which no tokenizer can encode), or None.

    >>> import argparse
    >>> print(_not_utf8(argparse.Namespace(text=["ok \udcff\udcfe"])))
    --text: not valid UTF-8 (b'ok \xff\xfe'); give the text in UTF-8
    >>> _not_utf8(argparse.Namespace(text=["café"], token=None))
    """
    for name in TEXT_OPTIONS:
        value = getattr(args, name, None)
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str):
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError:
                    raw = text.encode("utf-8", "surrogateescape")
                    return f"--{name}: not valid UTF-8 ({raw!r}); give the text in UTF-8"
    return None


def checks_keys(checks) -> list[str]:
    return [c.key for c in checks]


def _quiet_on_broken_pipe(run):
    """``symuat prove --all | head -1``: when the reader closes the pipe, stop quietly (exit 0),
    with no BrokenPipeError traceback and no second error when Python flushes stdout at exit."""
    import functools
    import os

    from symuat.interrupt import EXIT_TERMINATED, Terminated, sigterm_raises

    @functools.wraps(run)
    def wrapper(argv: list[str] | None = None) -> int:
        try:
            with sigterm_raises():
                code = run(argv)
                sys.stdout.flush()
            return code
        except Terminated:  # SIGTERM: as Ctrl-C (workers ended, temporary folders removed), exit 143
            print("symuat: terminated", file=sys.stderr)
            return EXIT_TERMINATED
        except KeyboardInterrupt:  # Ctrl-C: one line, exit 130 (128 + SIGINT); the runner ended its workers
            print("symuat: interrupted", file=sys.stderr)
            return 130
        except WorkerLostError as exc:  # a worker of the runner killed from outside: one line, exit 1
            print(f"symuat: {exc}", file=sys.stderr)
            return 1
        except BrokenPipeError:
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
            except (OSError, ValueError):  # stdout is not a real file (captured in tests)
                pass
            return 0

    return wrapper


main = _quiet_on_broken_pipe(main)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
