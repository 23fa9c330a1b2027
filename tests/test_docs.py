"""The docs match the code: every ``cxforge`` command they show parses, and none says ``python -m tools``.

Commands are read from the Markdown's code spans and code blocks and parsed
with the real command parsers (nothing runs).  A command with a placeholder
(``NAME``, ``...``, ``[--flag]``, ``a|b``) is only checked for its command name,
and a command named in prose without its required arguments passes.
"""

from __future__ import annotations

import io
import re
import shlex
from contextlib import redirect_stderr
from pathlib import Path

import pytest

from connectx_forge.tools import cli

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").glob("*.md"))]
SPAN = re.compile(r"`([^`\n]+)`")
PLACEHOLDER = re.compile(r"^(?:[A-Z][A-Z0-9_]*|.*\.\.\..*|.*….*|\[.*|.*\].*|.*\|.*|<.*>)$")


def _snippets(text: str) -> list[str]:
    """Inline code spans, and every line of fenced code blocks."""
    blocks = re.findall(r"```[a-z]*\n(.*?)```", text, re.S)
    rest = re.sub(r"```[a-z]*\n.*?```", "", text, flags=re.S)
    return [*SPAN.findall(rest), *(line for block in blocks for line in block.splitlines())]


def _commands() -> list[tuple[str, list[str]]]:
    found = []
    for doc in DOCS:
        for snippet in _snippets(doc.read_text()):
            snippet = snippet.split("#")[0].split("&&")[0].split(" | ")[0].split(";")[0]
            try:
                words = shlex.split(snippet)
            except ValueError:
                continue
            for i, word in enumerate(words):
                if word == "cxforge" or word.endswith("/cxforge"):
                    if i + 1 < len(words) and not words[i + 1].startswith("-"):
                        found.append((doc.name, words[i + 1:]))
                    break
    return found


COMMANDS = _commands()


def test_the_readme_is_a_front_door_of_at_most_150_lines() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 150


def test_the_docs_show_commands() -> None:
    assert len(COMMANDS) > 30


@pytest.mark.parametrize("doc", [d.name for d in DOCS])
def test_no_doc_says_python_m_tools(doc: str) -> None:
    text = next(d for d in DOCS if d.name == doc).read_text()
    assert "python -m tools" not in text
    assert ".venv/bin/python -m tools" not in text


@pytest.mark.parametrize(("doc", "words"), COMMANDS, ids=[f"{d}:{' '.join(w)[:60]}" for d, w in COMMANDS])
def test_each_documented_command_exists_and_parses(doc: str, words: list[str]) -> None:
    if PLACEHOLDER.match(words[0]):  # `cxforge COMMAND --help`
        return
    name = cli.ALIASES.get(words[0], (words[0],))
    assert name[0] in cli.COMMANDS, f"{doc} shows `cxforge {' '.join(words)}`: no such command"
    if any(PLACEHOLDER.match(w) for w in words):
        return
    argv = [*name, *words[1:]]
    parser = cli.command_parser(argv[0], cli.load(argv[0]))
    err = io.StringIO()
    try:
        with redirect_stderr(err):
            parser.parse_args(argv[1:])
    except SystemExit:
        if "arguments are required" not in err.getvalue():  # a command named in prose, its arguments left out
            pytest.fail(f"{doc} shows `cxforge {' '.join(words)}`, which does not parse: {err.getvalue().strip()}")
