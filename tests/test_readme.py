"""The README's two set-up commands exist, and .ci/run runs the very same test command."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _blocks(text):
    parts = text.split("```")
    return [parts[k].strip() for k in range(1, len(parts), 2)]


def test_two_setup_commands_and_ci_uses_the_test_command():
    setup = (ROOT / "README.md").read_text().split("## Set-up")[1].split("## ")[0]
    blocks = _blocks(setup)
    assert blocks == ['pip install -e . && symuat report',
                      'pip install -e ".[test]" && symuat model install && pytest']
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert blocks[1] in ci


def test_the_readme_python_examples_run():
    """The README's ``>>>`` examples (the public API: symuat.report, check_identity) are a doctest."""
    import doctest

    text = (ROOT / "README.md").read_text()
    blocks = [b[len("python"):] for b in _blocks(text) if b.startswith("python") and ">>>" in b]
    assert blocks, "no >>> example in the README"
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for k, block in enumerate(blocks):
        test = parser.get_doctest(block, {}, f"README[{k}]", "README.md", 0)
        runner.run(test)
    assert runner.failures == 0
