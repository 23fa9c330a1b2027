"""The docs match the code: every ``cxforge`` command they show parses, and none says ``python -m tools``.

Commands are read from the Markdown's code spans and code blocks and parsed
with the real command parsers (nothing runs).  A command with a placeholder
(``NAME``, ``...``, ``[--flag]``, ``a|b``) is only checked for its command name,
and a command named in prose without its required arguments passes.
"""

from __future__ import annotations

import io
import json
import re
import shlex
from collections.abc import Callable
from contextlib import redirect_stderr
from pathlib import Path
from typing import Any

import pytest

from connectx_forge import cli
from connectx_forge.paths import EXAMPLE_REPLAYS

ROOT = Path(__file__).resolve().parents[2]
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
                    # ``cxforge match: error: ...`` is a command's output shown in a block, not a command
                    if i + 1 < len(words) and not words[i + 1].startswith("-") and not words[i + 1].endswith(":"):
                        found.append((doc.name, words[i + 1:]))
                    break
    return found


COMMANDS = _commands()


def test_the_docs_hold_at_most_20000_words() -> None:
    """docs/*.md are read, not skimmed: at most 20,000 words in all (as ``wc -w`` counts them)."""
    words = sum(len(page.read_text(encoding="utf-8").split()) for page in (ROOT / "docs").glob("*.md"))
    assert 0 < words <= 20_000, words


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
    assert words[0] in cli.COMMANDS, f"{doc} shows `cxforge {' '.join(words)}`: no such command"
    if any(PLACEHOLDER.match(w) for w in words):
        return
    parser = cli.command_parser(words[0], cli.load(words[0]))
    err = io.StringIO()
    try:
        with redirect_stderr(err):
            parser.parse_args(words[1:])
    except SystemExit:
        if "arguments are required" not in err.getvalue():  # a command named in prose, its arguments left out
            pytest.fail(f"{doc} shows `cxforge {' '.join(words)}`, which does not parse: {err.getvalue().strip()}")


def test_the_docs_install_quietly_as_the_makefile_does() -> None:
    """kaggle-environments goes in with --no-deps (its declared dependencies are every Kaggle game's), so the
    install of the toolkit after it must pass --no-warn-conflicts, or pip lists ~20 packages it left out."""
    makefile = (ROOT / "Makefile").read_text()
    assert "--no-deps kaggle-environments==" in makefile and "--no-warn-conflicts" in makefile
    readme = (ROOT / "README.md").read_text()
    assert "pip install -q --no-deps kaggle-environments==1.33.2" in readme
    toolkit = [s for s in _snippets(readme) if re.search(r"pip install .*'\.(\[|')", s)]
    assert toolkit and all("--no-warn-conflicts" in s for s in toolkit), toolkit


def test_benchmarks_keeps_the_current_figures_in_at_most_300_lines() -> None:
    """BENCHMARKS.md holds the current figures by topic, and links the release notes."""
    text = (ROOT / "BENCHMARKS.md").read_text()
    assert len(text.splitlines()) <= 300
    assert "](CHANGELOG.md)" in text and (ROOT / "CHANGELOG.md").is_file()


def test_the_changelog_is_release_notes_by_version_in_at_most_300_lines() -> None:
    """CHANGELOG.md says what changed for a user, grouped by version; the runs behind the figures stay in git."""
    text = (ROOT / "CHANGELOG.md").read_text()
    assert len(text.splitlines()) <= 300
    versions = re.findall(r"^## (.*)$", text, re.M)
    assert versions and all(re.fullmatch(r"\d+\.\d+\.\d+(?: \(unreleased\))?", v) for v in versions), versions
    assert "|---" not in text, "a table of figures belongs in BENCHMARKS.md"


# How the work was done is no part of a document: it speaks of the project as it is.
HISTORY = re.compile(r"\b(?:this|the|last|previous) session\b|\bthe old way\b|\bpreviously\b|\bused to\b"
                     r"|\bwas changed\b|\bthe issue'?s?\b", re.I)


@pytest.mark.parametrize("doc", [d.name for d in [*DOCS, ROOT / "CHANGELOG.md"]])
def test_no_doc_speaks_of_how_the_work_was_done(doc: str) -> None:
    text = next(d for d in [*DOCS, ROOT / "CHANGELOG.md"] if d.name == doc).read_text()
    assert not HISTORY.findall(text), f"{doc}: {HISTORY.findall(text)}"


# A tracker's number (the word issue, pull request or PR before a number, or a number in brackets after "#")
# says nothing to a reader: say what the thing is.  URLs stay (".../issues/N" cites an upstream bug by its
# address), and so do "#!/", colours ("#999") and anchors.
TRACKER = re.compile(r"\b(?:issues?|pull requests?|PRs?) #?\d+\b|(?<![\w/])\(#\d+\)", re.I)
SOURCE_SUFFIXES = {".py", ".md", ".toml", ".cfg", ".sh", ".c", ".cpp", ".h", ".js", ".css", ".html", ".yml", ".yaml"}
SKIPPED = {"runs", "submissions", "node_modules", "__pycache__"}


def _code_and_docs() -> list[Path]:
    found = []
    for path in ROOT.rglob("*"):
        parts = path.relative_to(ROOT).parts
        if any(p in SKIPPED or p.endswith(".egg-info") or (p.startswith(".") and p != ".ci") for p in parts[:-1]):
            continue
        if path.is_file() and (path.suffix in SOURCE_SUFFIXES or path.name in ("Makefile", "run")):
            found.append(path)
    return found


def test_no_code_or_doc_names_an_issue_by_its_number() -> None:
    files = _code_and_docs()
    assert ROOT / "BENCHMARKS.md" in files and ROOT / "Makefile" in files and len(files) > 100
    hits = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}" for path in files
            for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
            for _ in TRACKER.finditer(line)]
    assert not hits, "say what the thing is, not its tracker number:\n" + "\n".join(hits)


def test_the_example_replays_try_review_ghosts_and_regress_add(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/review.md's three commands on the shipped replays, as it shows them (from the checkout's root)."""
    replays = sorted(str(p.relative_to(ROOT)) for p in EXAMPLE_REPLAYS.glob("episode-*-replay.json"))
    assert len(replays) == 3 and all((ROOT / r).stat().st_size < 16_000 for r in replays)
    for r in replays:  # real kaggle-environments replays: its own keys, and Kaggle's team names
        replay = json.loads((ROOT / r).read_text(encoding="utf-8"))
        assert {"configuration", "steps", "rewards", "statuses", "info"} <= set(replay)
        assert set(replay["info"]["TeamNames"]) == {"Forge", "Rival"}
    monkeypatch.chdir(ROOT)
    assert cli.main(["review", *replays, "--us", "Forge", "--summary", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("our agent (Forge): 3 games, 2 lost") and "cxforge solve " in out
    assert cli.main(["ghosts", "tools/connectx_forge/datasets/replays"]) == 0
    teams = [line.split()[0] for line in capsys.readouterr().out.splitlines()[2:4]]
    assert sorted(teams) == ["Forge", "Rival"]
    project = tmp_path / "mybot"
    assert cli.main(["new", str(project)]) == 0
    assert cli.main(["regress", "add", *replays, "--project", str(project), "--us", "Forge"]) == 0
    cases = json.loads((project / "tests" / "regressions.json").read_text(encoding="utf-8"))
    assert len(cases) >= 1 and "1 case(s) added from 2 lost game(s) of 3" in capsys.readouterr().out


LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("doc", [d.name for d in DOCS])
def test_each_relative_link_points_at_a_file_of_the_repository(doc: str) -> None:
    """A reader of the repository (or of its page on a forge) follows a relative link to a file that is there;
    a link out of the repository (``../shared``) leads nowhere for anyone else."""
    path = next(d for d in DOCS if d.name == doc)
    bad = []
    for target in LINK.findall(path.read_text()):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        file = (path.parent / target.split("#")[0]).resolve()
        if not file.is_relative_to(ROOT) or not file.exists():
            bad.append(target)
    assert not bad, f"{doc} links to files outside the repository or missing: {bad}"


def _table(doc: str, header: str) -> list[str]:
    """The first cells of the Markdown table under ``header`` (its header row) in ``docs/DOC``, backticks off."""
    lines = (ROOT / "docs" / doc).read_text().splitlines()
    start = lines.index(header) + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append(line.split("|")[1].strip().strip("`"))
    return rows


def _shown(name: str, function: Callable[..., Any]) -> str:
    """A function's signature as the docs write it: ``name(a, b=2.0, c="x")``, no annotations."""
    import inspect

    params = inspect.signature(function).parameters.values()
    shown = [p.name if p.default is inspect.Parameter.empty else f"{p.name}={json.dumps(p.default)}"
             .replace("null", "None") for p in params]
    return f"{name}({', '.join(shown)})"


def test_your_agent_lists_what_cxforge_new_writes_and_what_testing_offers() -> None:
    from connectx_forge import scaffold, testing

    assert sorted(_table("your-agent.md", "| file | what it is |")) == sorted(scaffold.files("mybot", "mybot"))
    helpers = _table("your-agent.md", "| helper | what it does |")
    assert sorted(h.split("(")[0] for h in helpers) == sorted(testing.__all__)
    for shown in helpers:
        name = shown.split("(")[0]
        if "(" in shown:
            assert shown == _shown(name, getattr(testing, name)), f"docs/your-agent.md shows {shown}"


# -- one source for each figure: BENCHMARKS.md's "Bundles, install and tests" -------------------------------------

SUITE_COUNT = re.compile(r"`make test` runs (\d{1,3}(?:,\d{3})*) tests")
SUITE_SIZED = re.compile(r"\b(\d{1,3}(?:,\d{3})+|\d{4,}) tests\b")  # a thousand tests or more: the suite's count
SUITE_TIME = re.compile(r"`make test(?:-long)?`[^.]{0,160}?\b\d+(?:\.\d+)? ?(?:s|min|minutes|more)\b")
SOLVER_BYTES = re.compile(r"`cxforge build solver` \(the default submission\) \| ([\d,]+) bytes")
SUBMISSION_MB = re.compile(r"`submissions/submission\.py` is (\d+\.\d+) MB")


def _benchmark(pattern: re.Pattern[str]) -> int:
    """The one figure ``pattern`` finds in BENCHMARKS.md, as a number."""
    [figure] = pattern.findall((ROOT / "BENCHMARKS.md").read_text())
    return int(figure.replace(",", ""))


@pytest.mark.parametrize("doc", [d.name for d in DOCS])
def test_every_doc_gives_the_suite_s_one_test_count(doc: str) -> None:
    """README and the docs state the suite's size as BENCHMARKS.md does, or not at all."""
    text = next(d for d in DOCS if d.name == doc).read_text()
    stated = {int(n.replace(",", "")) for n in SUITE_SIZED.findall(text)}
    assert stated <= {_benchmark(SUITE_COUNT)}, f"{doc} gives {sorted(stated)} tests; BENCHMARKS.md says " \
        f"{_benchmark(SUITE_COUNT)}: state that, or link it"


@pytest.mark.parametrize("doc", [d.name for d in DOCS if d.name != "BENCHMARKS.md"])
def test_only_benchmarks_times_the_suite(doc: str) -> None:
    text = next(d for d in DOCS if d.name == doc).read_text().replace("\n", " ")
    assert not SUITE_TIME.findall(text), f"{doc} times make test: link BENCHMARKS.md#bundles-install-and-tests"


def test_the_submission_s_size_is_the_one_benchmarks_gives() -> None:
    size = _benchmark(SOLVER_BYTES)
    for doc in DOCS:
        for mb in SUBMISSION_MB.findall(doc.read_text().replace("\n", " ")):
            assert float(mb) == round(size / 1e6, 2), f"{doc.name}: {mb} MB, BENCHMARKS.md: {size:,} bytes"


@pytest.mark.long
def test_the_stated_test_count_is_what_pytest_collects() -> None:
    """BENCHMARKS.md's count is within 5% of what ``make test`` collects (collection takes about 20 s)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    found = re.search(r"^(\d+)(?:/\d+)? tests? collected", out.stdout, re.M)
    assert found, out.stdout[-2000:] + out.stderr[-2000:]
    collected, stated = int(found.group(1)), _benchmark(SUITE_COUNT)
    assert abs(stated - collected) <= 0.05 * collected, f"BENCHMARKS.md says {stated:,} tests, pytest collects " \
        f"{collected:,}: update it"
