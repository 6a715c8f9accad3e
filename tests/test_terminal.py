"""The terminal output a reader sees: it fits the terminal's width, wraps instead of clipping what
matters (verdict, readings that hold, correction), filters, helps, and starts fast."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from symuat import cli
from symuat.render import report
from symuat.verdicts.roll_up import claim_verdicts

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")  # the package's parent


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.fixture(scope="module")
def verdicts(all_results, registry):
    return claim_verdicts(list(all_results.values()), registry)


@pytest.mark.parametrize("width", [60, 80, 100])
def test_report_fits_the_width_and_clips_nothing_essential(verdicts, width):
    text = report.verdict_table(verdicts, width=width)
    lines = text.splitlines()
    too_long = [ln for ln in lines if len(ln) > width]
    assert not too_long, f"{len(too_long)} lines longer than {width}: {too_long[:3]}"
    flat = _squash(text)
    for v in verdicts:
        assert _squash(f"{v.id}") in flat
        if v.corrected and not v.extension and v.verdict != "holds":
            assert _squash(report.pretty(v.corrected)) in flat, f"{v.id}: correction clipped"
        if v.verdict == "holds-under-readings" and len(v.readings_that_hold) <= 6:
            shown = v.readings_that_hold_compact or "; ".join(v.readings_that_hold)
            assert _squash(shown) in flat, f"{v.id}: readings that hold clipped"
    # no word cut with an ellipsis (the only "…" says how many more readings there are)
    assert all("… and" in ln for ln in lines if "…" in ln)


def test_report_marks_a_conclusion_that_holds_through_wrong_steps(verdicts):
    text = report.verdict_table(verdicts, width=100)
    for v in verdicts:
        if v.verdict == "holds" and (v.failing_step_names or v.wrong_glosses):  # H2's steps, H8's gloss
            row = next(ln for ln in text.splitlines() if ln.startswith(f"{v.id} "))
            assert "✔" not in row and "◑" in row and "parts wrong" in row


def test_columns_80_cli_report(tmp_path):
    env = dict(os.environ, COLUMNS="80", SYMUAT_CACHE="off")
    out = subprocess.run([sys.executable, "-m", "symuat.cli", "report", "P5", "T8", "T9"], capture_output=True,
                         text=True, env=env, cwd=ROOT, check=True).stdout
    assert max(len(ln) for ln in out.splitlines()) <= 80
    assert "eq30,W1rhs=raw,unprimed=acc" in out  # the one reading under which T8 holds, not clipped
    assert "e_L=W2_L(c_(L-1)+R_(L-1))+b2_L" in _squash(out)


def test_terminal_width_from_columns_with_a_floor(monkeypatch):
    monkeypatch.setenv("COLUMNS", "132")
    assert report.terminal_width() == 132
    monkeypatch.setenv("COLUMNS", "10")
    assert report.terminal_width() == report.MIN_WIDTH


def test_prove_puts_a_long_counterexample_on_its_own_line(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert cli.main(["prove", "P5.f"]) == 0
    out = capsys.readouterr().out
    assert max(len(ln) for ln in out.splitlines()) <= 80
    cex = [ln for ln in out.splitlines() if "counterexample at" in ln]
    assert cex and all(ln.startswith("      counterexample at") for ln in cex)
    # prove's footer counts checks, and says so; "reading" is left to the report's meaning
    assert any(ln.startswith("Checks on the readings the text admits:") for ln in out.splitlines())
    assert "Admitted readings:" not in out


def test_failed_and_status_filters(capsys):
    assert cli.main(["prove", "P5", "--failed", "--format", "json"]) == 0
    import json

    rows = json.loads(capsys.readouterr().out)
    assert rows and all(r["agrees_with_paper"] is False or r["status"] == "error" for r in rows)
    assert cli.main(["prove", "P5", "--status", "proved", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and {r["status"] for r in rows} == {"proved"}
    assert cli.main(["show", "P5.f", "--status", "refuted"]) == 0
    out = capsys.readouterr().out
    assert "shown:" in out and ": proved" not in out
    assert cli.main(["prove", "P5", "--status", "bogus"]) == 2
    assert "known: proved" in capsys.readouterr().err


def test_ids_in_any_case_and_suggestions(capsys):
    assert cli.main(["prove", "p1", "--format", "json"]) == 0
    capsys.readouterr()
    assert cli.main(["prove", "p55"]) == 2
    assert "did you mean P5" in capsys.readouterr().err


def test_a_sub_command_usage_error_shows_that_sub_command(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["report", "--formt", "json"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: symuat report") and "--formt" in err
    assert "did you mean --format?" in err


def test_figure_without_matplotlib_fails_before_any_computation(monkeypatch, tmp_path, capsys):
    import symuat.models.compare as compare
    import symuat.models.explain_run as explain_run

    def never(*a, **k):
        raise AssertionError("the computation ran before the --figure check")

    monkeypatch.setattr(compare, "explain", never)
    monkeypatch.setattr(explain_run, "run_explain", never)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib → ImportError
    for extra in ([], ["--vs", " London", "--by", "head"]):
        code = cli.main(["model", "explain", "--model", "smollm2", "--token", " Paris", *extra,
                         "--figure", str(tmp_path / "paris.png")])
        err = capsys.readouterr().err
        assert code == 2 and "--figure needs matplotlib" in err, (extra, err)
        assert not (tmp_path / "paris.png").exists()


@pytest.mark.parametrize("command", ["report", "prove", "show"])
def test_help_names_keys_and_exit_codes(command, capsys):
    with pytest.raises(SystemExit):
        cli.main([command, "--help"])
    out = capsys.readouterr().out
    assert "exit status: 0" in out and "P5.f[C-col,LR,square]" in out


@pytest.mark.parametrize("command", ["check", "explain", "install"])
def test_model_help_names_exit_codes_and_the_packaged_models(command, capsys):
    from symuat.models.command import PACKAGED
    from symuat.models.family import packaged_names

    assert sorted(PACKAGED) == packaged_names()  # the help's list is the families' list
    with pytest.raises(SystemExit):
        cli.main(["model", command, "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "exit status: 0" in out and "2 bad input" in out
    assert ("smollm2, gemma3" if command == "explain" else "minilm, smollm2, gemma3" if command == "check"
            else "{all,minilm,smollm2,gemma3}") in out


def test_version_and_help_do_not_load_the_catalogue():
    code = ("import sys, io, contextlib\nfrom symuat import cli\n"
            "for argv in (['--version'], ['--help'], ['model', '--help']):\n"
            "    try:\n        with contextlib.redirect_stdout(io.StringIO()):\n            cli.main(argv)\n    except SystemExit:\n        pass\n"
            "heavy = [m for m in ('sympy', 'scipy', 'symuat.claims', 'symuat.models.families.bert') if m in sys.modules]\n"
            "print('HEAVY', heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert "HEAVY []" in out


def test_prove_group_puts_a_step_on_one_screen(all_results):
    """``prove T8 --failed --group``: the 382 failing readings of T8 in a screen (one row per
    outcome, numbers that differ shown as ranges), every reading counted once, at 80 columns."""
    t8 = [r for r in all_results.values() if r.check.id == "T8" and cli.failed(r)]
    lines = report.grouped_rows(t8, width=80)
    assert len(t8) > 300 and len(lines) < 80
    assert max(len(ln) for ln in lines) <= 80
    counts = [int(m.group(1)) for ln in lines if (m := re.search(r"(\d+) of \d+ readings", ln))]
    assert sum(counts) == len(t8)
    assert any("readings: eq20" in ln for ln in lines) and any("–" in ln for ln in lines)


def test_prove_group_on_the_command_line(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert cli.main(["prove", "P5", "--group"]) == 0
    out = capsys.readouterr().out
    assert max(len(ln) for ln in out.splitlines()) <= 80
    assert "readings:" in out and "checks:" in out
    assert cli.main(["prove", "P5", "--group", "--format", "json"]) == 2
    assert "--group is a table layout" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# issue 36: every command and every --help fits 80 columns; tables have JSON twins
# ---------------------------------------------------------------------------------------------

#: every parser symuat has (its --help), and the claim commands run at 80 columns
HELPS = [[], ["report"], ["prove"], ["show"], ["list"], ["certify"], ["model"], ["model", "check"],
         ["model", "explain"], ["model", "install"], ["model", "fold"]]
RUNS = [["report", "P5", "T8", "A1", "H8"], ["prove", "P5", "H8", "WP7"], ["prove", "WP7", "--group"],
        ["prove", "T8", "--failed", "--group"], ["show", "P5.f", "H8.cov", "H8.1"], ["show", "A1"], ["list"]]


def _widest(text: str) -> str:
    return max(text.splitlines() or [""], key=len)


@pytest.mark.parametrize("argv", HELPS, ids=lambda a: " ".join(a) or "symuat")
def test_every_help_fits_80_columns(argv, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit) as exc:
        cli.main([*argv, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert len(_widest(out)) <= 80, f"symuat {' '.join(argv)} --help: {_widest(out)!r}"
    assert "exit status: 0" in " ".join(out.split()), f"symuat {' '.join(argv)} --help names no exit status"


@pytest.mark.parametrize("argv", RUNS, ids=" ".join)
def test_every_claim_command_fits_80_columns(argv, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert len(_widest(out)) <= 80, f"symuat {' '.join(argv)}: {_widest(out)!r}"


def test_show_names_sizes_as_a_reader_writes_them(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert cli.main(["show", "P5.f[C-col,LR,square]"]) == 0
    out = capsys.readouterr().out
    assert "counterexample at n = 2:" in out and "{'n'" not in out


def test_certify_and_model_help_say_what_they_need_and_their_defaults(capsys):
    with pytest.raises(SystemExit):
        cli.main(["certify", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "Coq 8.16" in out and "MathComp" in out and "minutes" in out and "Export every symbolic" in out
    for command, default in (("check", "(default: minilm)"), ("explain", "(default: smollm2)")):
        with pytest.raises(SystemExit):
            cli.main(["model", command, "--help"])
        out = " ".join(capsys.readouterr().out.split())
        assert default in out and "(default: table)" in out


def test_the_reading_syntax_is_explained_where_readings_are_printed(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert cli.main(["prove", "T8", "--failed", "--group"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "readings: eq20" in out and "';' separates readings" in out and "a|b" in out
    assert cli.main(["report", "T8"]) == 0
    assert "';' separates readings" in " ".join(capsys.readouterr().out.split())


def test_a_near_sub_command_or_choice_gets_a_suggestion(capsys):
    for argv, hint in ((["prov", "P5"], "did you mean 'prove'?"), (["report", "--format", "jsn"], "did you mean 'json'?")):
        with pytest.raises(SystemExit) as exc:
            cli.main(argv)
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert hint in " ".join(err.split()) and max(len(ln) for ln in err.splitlines()) <= 100


def test_list_and_show_have_json_and_report_json_carries_the_headline(capsys):
    import json

    assert cli.main(["list", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {"id", "title", "group", "checks"} <= set(listed[0]) and any(c["id"] == "P5" for c in listed)
    assert cli.main(["show", "P5.f[C-col,LR,square]", "--format", "json"]) == 0
    (shown,) = json.loads(capsys.readouterr().out)
    assert shown["status"] == "refuted" and shown["counterexample"]["sizes"] == {"n": 2} and shown["why"]
    assert cli.main(["report", "P1", "P4", "T8", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [c["id"] for c in doc["claims"]] == ["P1", "P4", "T8"]
    assert cli.main(["report", "P1", "P4", "T8"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert doc["headline"]["lines"][0].startswith(first.rstrip()) or first in " ".join(doc["headline"]["lines"])
    assert doc["headline"]["fails"] == sum(c["verdict"] == "fails" and not c["extension"] for c in doc["claims"])


def test_certify_prints_its_record_within_the_width():
    from symuat.certify.cli import summary_lines

    record = {"summary": {"certified": 137, "symbolic_proved": 142, "failed": 0, "unsupported": 5,
                          "proofs": {"normal form": 106, "direct": 4, "certificate": 54}},
              "library_seconds": 13.5, "compile_seconds": 686,
              "coqchk": {"ok": True, "theorems": 164, "axioms": "<none>", "seconds": 95.5},
              "checks": {"X3.sandwich": {"status": "failed", "reason": "the Hadamard product " * 12},
                         "P1": {"status": "certified", "reason": ""}}}
    lines = summary_lines(record, width=80)
    assert max(len(ln) for ln in lines) <= 80 and lines[0].startswith("137 of 142 symbolic proved checks")
    assert any("X3.sandwich" in ln for ln in lines) and not any("P1" in ln for ln in lines)
