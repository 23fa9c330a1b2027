"""Check a submission file, then submit it with the real ``kaggle`` CLI (``cxforge upload``'s logic).

The file must pass ``cxforge check`` first (no invalid move, error or timeout, and
every floor shown met; FAIL and UNDECIDED are both refused, with their exit
statuses 1 and 3) before anything is sent; the check's flags (``check.Gate``)
mean what they mean there.  There is deliberately no way to skip the check.
What is checked and what is sent are one immutable copy (``upload_copy.py``):
the file is copied once into a private folder and hashed, the check plays that
copy, and the upload itself, ``kaggle competitions submit COMPETITION -f COPY -m
MSG`` (ConnectX's ``connectx``, or the competition of the game the file was built for), is given that
copy once its sha256 is verified again, so that a file
changed during or after its check is never sent.  The CLI runs with the user's
own environment; its output is relayed with every credential scrubbed out.  The
command line is ``upload_cmd.py``.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from connectx_forge.credentials import credential_source, scrub, secrets
from connectx_forge.errors import UserError, Verdict
from connectx_forge.games import catalog
from connectx_forge.kaggle_cli import CREDENTIALS_HELP, kaggle_executable, run_kaggle
from connectx_forge.submit.check import Gate, check_file
from connectx_forge.submit.check_report import format_report
from connectx_forge.submit.game_check import manifest_game
from connectx_forge.submit.upload_copy import StagedCopy, staged_copy, verify

SUBMIT_TIMEOUT_S = 600
_CLI_FAILURES = ("Could not submit to competition", "Could not find competition")
_SLUG = re.compile(r"[a-z0-9][a-z0-9-]{0,79}")


@dataclass(frozen=True)
class SubmitResult:
    """What the kaggle CLI said: ``ok``, and its output with the credentials scrubbed."""

    ok: bool
    output: str
    reason: str = ""


def submit(path: Path, message: str, competition: str, kaggle: str | None = None) -> SubmitResult:
    """``kaggle competitions submit COMPETITION -f PATH -m MESSAGE``; never raises on a CLI failure."""
    command = submit_command(path, message, "kaggle", competition)[1:]
    result = run_kaggle(command, SUBMIT_TIMEOUT_S, _CLI_FAILURES, kaggle)
    reason = result.reason
    if reason == _CLI_FAILURES[0].lower():
        reason += " (the file upload failed)"
    return SubmitResult(result.ok, result.output, reason)


def submit_command(path: Path, message: str, kaggle: str, competition: str) -> list[str]:
    """The kaggle command line that submits ``path`` (no credential is ever on it: the CLI finds them)."""
    return [kaggle, "competitions", "submit", competition, "-f", str(path), "-m", message]


def competition_of(path: Path, competition: str | None) -> str:
    """The Kaggle competition ``path`` goes to: ``competition`` where given, else that of the game its manifest
    names (ConnectX's ``connectx`` where it names none); one line for a malformed name, and for a game whose
    competition the toolkit does not know."""
    if competition is not None:
        if not _SLUG.fullmatch(competition):
            raise UserError(f"--competition {competition!r} is not a Kaggle competition's name: give the name in "
                            "its address, kaggle.com/competitions/NAME (lower-case letters, digits and hyphens)")
        return competition
    game = manifest_game(path) or catalog.CONNECTX
    known = catalog.get(game).competition
    if known is None:
        raise UserError(f"{path.name} plays {game}, whose Kaggle competition this toolkit does not know: give "
                        "--competition NAME, the name in its address kaggle.com/competitions/NAME")
    return known


def upload(path: Path, message: str, gate: Gate | None = None, *, progress: bool = False,
           show: Callable[[str], None] = print, dry_run: bool = False, competition: str | None = None) -> str:
    """Copy ``path`` once (``staged_copy``), check that copy as ``cxforge check`` does with the flags of
    ``gate`` (default: the check's), ``show`` the check's report, and submit that very copy if it passed and
    its sha256 is still the one made when it was copied; the CLI's answer.

    ``UserError`` (before anything is sent) for a missing file, a link, an empty message, no kaggle CLI or no
    credentials (found before the check, so that no check is played for nothing), a copy changed since it
    was made, and when the upload fails; ``Verdict`` (exit status 1 FAIL, 3 UNDECIDED) for a check that did not
    pass.  ``dry_run``: everything but the network, without credentials too: the file is copied and checked,
    the copy and its sha256 are shown, and the answer names where the credentials were found (never read out)
    and the command line that would have run; where the real upload would stop (no kaggle CLI, no
    credentials), a ``UserError`` that says so in one line (exit status 2), so that ``upload --dry-run &&
    ...`` never goes on where the upload would not.  ``competition``: where it goes (``competition_of``).
    """
    if not message.strip():
        raise UserError("give the submission a message with -m")
    slug = competition_of(path, competition)
    with staged_copy(path) as copy:
        kaggle = None if dry_run else kaggle_executable()
        if not dry_run and credential_source() is None:
            raise UserError(CREDENTIALS_HELP)
        report = check_file(copy.file, gate, progress=progress, shown=path)
        show(format_report(report))
        if not report.passed:
            raise Verdict(f"refusing to upload {path}: the check's verdict is {report.verdict} "
                          f"({'; '.join(report.problems or report.undecided)})", report.exit_code)
        if kaggle is None:
            verify(copy)
            return dry_run_answer(copy, message, slug, show)
        show(f"uploading {path} to Kaggle's {slug} competition: its checked copy {copy.file} "
             f"(sha256 {copy.sha256})...")
        verify(copy)  # the last moment before the CLI reads it
        result = submit(copy.file, message, slug, kaggle)
    if not result.ok:
        relayed = [ln for ln in result.output.splitlines() if ln not in result.reason]
        if relayed and not result.reason.startswith("could not reach"):
            print("\n".join(relayed), file=sys.stderr)
        raise UserError(f"upload failed: {result.reason}")
    return result.output or "submitted"


def dry_run_answer(copy: StagedCopy, message: str, competition: str, show: Callable[[str], None] = print) -> str:
    """What ``upload --dry-run`` says once the check passed: ``show`` the checked copy that would be sent and
    its sha256, then answer where the credentials are (never their value) and the command line that would run;
    ``UserError`` (exit status 2) naming what the real upload would stop at: no kaggle CLI, no credentials."""
    show(f"dry run: would upload {copy.file} (sha256 {copy.sha256}), the checked copy of {copy.original} "
         "(removed on exit)")
    stop = "dry run: nothing was sent; the check passed, but the real upload would stop here: "
    try:
        kaggle = kaggle_executable()
    except UserError as exc:
        raise UserError(f"{stop}{exc}") from None
    source = credential_source()
    if source is None:
        raise UserError(f"{stop}{CREDENTIALS_HELP}")
    command = scrub(shlex.join(submit_command(copy.file, message, kaggle, competition)), secrets())
    return f"dry run: nothing was sent; the kaggle CLI would find its credentials in {source} and run:\n  {command}"
