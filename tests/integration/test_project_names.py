"""A project is known by its name, not its path: inside its folder its own name means it, every table, file and
store names it by that name, a stored run keeps its absolute path (``--resume`` from anywhere), and a run whose
agent changed is never resumed unasked.

Each project is made by ``cxforge new`` in a temporary folder; games are few (one opening: two games) against
the cheapest opponents.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from connectx_bundler.project import own_project
from connectx_forge.arena.store import Store
from connectx_forge.cli import main
from connectx_forge.play.resolve import canonical_spec, label_of, resolve, resolve_target
from connectx_forge.submit.check import submission_of

CHEAP = ["--openings", "1", "-w", "1", "--no-progress"]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    """A new project ``mybot`` (its package folder is ``mybot/mybot``), the working folder inside it."""
    assert main(["new", str(tmp_path / "mybot")]) == 0
    capsys.readouterr()
    monkeypatch.chdir(tmp_path / "mybot")
    return tmp_path / "mybot"


def edit(project: Path) -> None:
    """Change the agent's data (its move order), as a user's edit does; the next command builds it again."""
    columns = project / "data" / "columns.json"
    text = columns.read_text()
    columns.write_text(text.replace("[3, 2, 4", "[3, 4, 2") if "[3, 2, 4" in text else
                       text.replace("[3, 4, 2", "[3, 2, 4"))
    resolve.cache_clear()  # in this process: as a new command would, build the project again


def test_own_name_means_the_project_inside_its_folder(project: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    root = project.resolve()
    assert own_project("mybot") == root
    assert own_project("mybot", root / "mybot") == root  # below the settings' folder too
    assert own_project("random") is None and own_project("./mybot") is None and own_project(".") is None
    assert own_project("mybot", tmp_path) is None  # outside, the name is no project
    assert canonical_spec("mybot") == canonical_spec(".") == str(root)
    assert label_of("mybot") == "mybot"  # review --us
    assert resolve("mybot").label == "mybot" and resolve("mybot").spec == str(root)
    assert resolve_target("mybot").root == root  # build
    assert submission_of("mybot").label == "mybot"  # check, upload
    monkeypatch.chdir(tmp_path)
    assert canonical_spec("mybot") == str(root)  # the folder mybot, from its parent


def test_match_and_logs_take_the_name_inside_the_folder(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "mybot", "random", "-n", "2", "-w", "1", "--no-progress", "--save", "g.jsonl"]) == 0
    assert capsys.readouterr().out.startswith("A = mybot  vs  B = random: 2 games")
    for agent in ("mybot", "."):
        assert main(["logs", "g.jsonl", "--agent", agent]) == 0
        assert "no player" not in capsys.readouterr().err


def test_a_tournament_names_the_project_by_its_name(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tournament", ".", "random", *CHEAP, "-o", "out", "--save", "g.jsonl", "--store", "t.sqlite"]) == 0
    text = capsys.readouterr().out
    assert "mybot vs random" in text and "\n.  " not in text and " . vs " not in text
    report = json.loads((project / "out" / "report.json").read_text())
    assert {r["player"] for r in report["ratings"]} == {"mybot", "random"}
    assert report["players"] == ["mybot", "random"] and report["settings"]["players"][0] == str(project.resolve())
    assert set(report["seats"]) == set(report["failures"]) == {"mybot", "random"}
    with open(project / "out" / "ratings.csv") as fh:
        assert {row["player"] for row in csv.DictReader(fh)} == {"mybot", "random"}
    with open(project / "out" / "pairs.csv") as fh:
        assert [(row["a"], row["b"]) for row in csv.DictReader(fh)] == [("mybot", "random")]
    with Store(project / "t.sqlite") as db:
        assert {(g.a, g.b) for g in db.games(report["run"])} == {("mybot", "random")}
    assert main(["logs", "g.jsonl", "--agent", "mybot"]) == 0
    assert "no player" not in capsys.readouterr().err


def test_resume_works_from_another_folder_and_refuses_a_changed_agent(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    store = str(project / "t.sqlite")
    assert main(["tournament", "mybot", "random", *CHEAP, "--store", store]) == 0
    assert "2 games played now" in capsys.readouterr().out
    monkeypatch.chdir(tmp_path)  # the stored spec is the project's absolute path
    resume = ["tournament", "--resume", "--store", store, "-w", "1", "--no-progress"]
    assert main(resume) == 0
    out = capsys.readouterr().out
    assert "0 games played now" in out and "mybot vs random" in out

    edit(project)
    assert main(resume) == 2  # never resumed silently with another version
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "mybot changed" in err and "played by the old version" in err
    assert "--new-run" in err and "--mix-versions" in err and "Traceback" not in err
    assert main([*resume, "--new-run"]) == 0
    out = capsys.readouterr().out
    assert "2 games played now" in out and "note: mybot changed" in out and "a new run in the same store" in out
    assert main(resume) == 0 and "0 games played now" in capsys.readouterr().out  # the new run resumes
    with Store(store) as db:
        assert len(db.runs("tournament")) == 2

    edit(project)  # back to the first version: its own run resumes, unasked
    assert main(resume) == 0 and "0 games played now" in capsys.readouterr().out


def test_mix_versions_continues_the_old_run_and_says_so(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["tournament", "mybot", "random", "-w", "1", "--no-progress", "--store", "t.sqlite"]
    assert main([*args, "--openings", "1"]) == 0
    run = capsys.readouterr().out.split(":")[0]
    edit(project)
    assert main([*args, "--openings", "2", "--resume", "--mix-versions", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["run"] == run and report["games"] == 4 and report["info"]["played_now"] == 2
    assert report["mixed_versions"] == ["mybot"] and "versions mixed" in report["run_note"]
    assert main([*args, "--openings", "2", "--resume"]) == 0  # the mixed run goes on, and still says so
    out = capsys.readouterr().out
    assert out.startswith(run) and "versions mixed: mybot" in out


def test_sprt_refuses_a_changed_agent_on_resume(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["sprt", "mybot", "random", "-n", "2", "-w", "1", "--no-progress", "--store", "s.sqlite"]
    assert main(args) == 3  # one pair decides nothing: exit status 3
    assert capsys.readouterr().out.startswith("SPRT mybot vs random")
    edit(project)
    assert main([*args, "--resume"]) == 2
    err = capsys.readouterr().err
    assert "mybot changed" in err and "--new-run" in err
    assert main([*args, "--resume", "--new-run", "--json"]) == 3
    report = json.loads(capsys.readouterr().out)
    assert (report["new"], report["base"], report["games"], report["result"]) == ("mybot", "random", 2, "none")
    assert report["settings"]["new"] == str(project.resolve())
