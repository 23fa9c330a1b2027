"""Our ConnectX submissions, their episodes, replays and agent logs, fetched through the real ``kaggle`` package.

* submissions: ``kaggle competitions submissions connectx --format json``;
* episodes: ``KaggleApi().competition_list_episodes`` in a child process (the
  CLI's table leaves out the agents, which say who played which seat and how
  each ended), with each agent's ``initialScore`` and ``updatedScore`` kept from the server's answer;
* a replay: ``kaggle competitions replay ID -p DIR``; logs: ``kaggle competitions
  logs ID INDEX -p DIR``.  A download goes to a temporary folder inside DIR and
  is moved into place only when complete, so a file already there is whole
  and is never fetched again.

Every failure is a ``UserError`` of one line (credentials, no server, Kaggle's
message), with credentials scrubbed (``tools/connectx_forge/kaggle_cli.py``).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from connectx_forge import safe_write, trees
from connectx_forge.credentials import credential_source
from connectx_forge.errors import UserError
from connectx_forge.kaggle_cli import (
    COMPETITION,
    CREDENTIALS_HELP,
    CliResult,
    require_json,
    run_kaggle,
    run_python_api,
)

# KaggleApi().competition_list_episodes, keeping each agent's initialScore and updatedScore (the rating before and
# after, which Kaggle's server sends and kagglesdk's ApiEpisodeAgent type drops): the same call, read twice
LIST_EPISODES = """\
    from kagglesdk.competitions.types.competition_api_service import ApiListSubmissionEpisodesRequest as _Req
    from kagglesdk.competitions.types.competition_api_service import ApiListSubmissionEpisodesResponse as _Resp
    class _Both:
        @staticmethod
        def prepare_from(response):
            return response.json(), _Resp.prepare_from(response)
    with api.build_kaggle_client() as _kaggle:
        _request = _Req()
        _request.submission_id = int(sys.argv[1])
        _raw, _typed = _kaggle.competitions.competition_api_client._client.call(
            "competitions.CompetitionApiService", "ListSubmissionEpisodes", _request, _Both)
    _episodes = [type(e).to_dict(e) for e in (_typed.episodes or [])]
    for _e, _r in zip(_episodes, _raw.get("episodes") or []):
        for _a, _ra in zip(_e.get("agents") or [], _r.get("agents") or []):
            _a.update({k: _ra[k] for k in ("initialScore", "updatedScore") if k in _ra})
    print(json.dumps(_episodes))
"""


def _check(result: CliResult, doing: str) -> CliResult:
    if not result.ok:
        raise UserError(f"{doing} failed: {result.reason}")
    return result


def _need_credentials() -> None:
    if credential_source() is None:
        raise UserError(CREDENTIALS_HELP)


def _enum_name(value: object) -> str:
    """``SubmissionStatus.COMPLETE`` (how the CLI prints an enum) -> ``COMPLETE``."""
    return str(value or "").rsplit(".", 1)[-1]


def list_submissions(page_size: int = 20) -> list[dict[str, object]]:
    """Our submissions, newest first: ``ref``, ``fileName``, ``date``, ``description``, ``status``
    (PENDING, COMPLETE or ERROR), ``publicScore`` and ``privateScore`` (strings, empty when none)."""
    _need_credentials()
    result = _check(run_kaggle(["competitions", "submissions", COMPETITION, "--format", "json",
                                "--page-size", str(page_size)]), "listing the submissions")
    if "No submissions found" in result.stdout:
        return []
    data = require_json(result, "submissions")
    if not isinstance(data, list) or not all(isinstance(s, dict) for s in data):
        raise UserError("the kaggle CLI printed submissions in an unknown shape")
    for s in data:
        s["status"] = _enum_name(s.get("status"))
    return data


def list_episodes(submission_id: int) -> list[dict[str, object]]:
    """The episodes of one submission, as kagglesdk's ``ApiEpisode`` in camelCase JSON (agents included)."""
    _need_credentials()
    result = _check(run_python_api(LIST_EPISODES, [str(submission_id)]),
                    f"listing the episodes of submission {submission_id}")
    data = require_json(result, "episodes")
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise UserError("the kaggle API returned episodes in an unknown shape")
    for episode in data:
        episode["agents"] = [{"index": 0, **a} for a in episode.get("agents") or []]  # 0 is left out
    return data


def replay_name(episode_id: int) -> str:
    """The file name the CLI gives a replay."""
    return f"episode-{episode_id}-replay.json"


def logs_name(episode_id: int, index: int) -> str:
    """The file name the CLI gives an agent's logs."""
    return f"episode-{episode_id}-agent-{index}-logs.json"


def _download(args: list[str], folder: Path, name: str, doing: str, replace: bool = False) -> tuple[Path, bool]:
    """``(path, fetched)``: the file ``name`` in ``folder``, fetched by ``kaggle ARGS -p TMP`` unless there (with
    ``replace``, ``--force``: fetched again, and replaced)."""
    target = folder / name
    if target.is_file() and not replace:
        return target, False
    _need_credentials()
    try:
        safe_write.check_target(target)
        tmp = Path(tempfile.mkdtemp(prefix=".partial-", dir=folder))
    except OSError as exc:
        raise UserError(f"cannot write in {folder}: {exc.strerror or exc}") from None
    try:
        _check(run_kaggle([*args, "-p", str(tmp), "-q"]), doing)
        got = tmp / name
        if not got.is_file():
            raise UserError(f"{doing} failed: the kaggle CLI wrote no {name}")
        safe_write.check_target(target)  # no link was planted meanwhile: the rename replaces a name, never a file
        got.replace(target)
    finally:
        trees.remove(tmp)
    return target, True


def download_replay(episode_id: int, folder: Path, replace: bool = False) -> tuple[Path, bool]:
    """``(path, fetched)``: episode ``episode_id``'s replay in ``folder``, fetched unless already there (or
    ``replace``)."""
    return _download(["competitions", "replay", str(episode_id)], folder, replay_name(episode_id),
                     f"downloading the replay of episode {episode_id}", replace)


def download_logs(episode_id: int, index: int, folder: Path, replace: bool = False) -> tuple[Path, bool]:
    """``(path, fetched)``: the logs of agent ``index`` in episode ``episode_id``, fetched unless there (or
    ``replace``)."""
    return _download(["competitions", "logs", str(episode_id), str(index)], folder, logs_name(episode_id, index),
                     f"downloading the logs of agent {index} in episode {episode_id}", replace)
