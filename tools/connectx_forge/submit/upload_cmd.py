"""``cxforge upload``: the command-line face of ``upload.upload`` (check, then submit; no way to skip the check)."""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path

from connectx_forge import options
from connectx_forge.submit.check import submission_of
from connectx_forge.submit.check_cmd import add_gate_flags, gate_of
from connectx_forge.submit.upload import upload

HELP = "check a submission file, then submit it to its game's Kaggle competition (ConnectX's by default)"
EXAMPLE = """\
cxforge upload submissions/submission.py -m "lookahead, depth 4"
cxforge upload ~/bots/mybot -m "mybot v2"        # a project folder: built, checked, then submitted
cxforge upload submissions/submission.py -m "v3" --dry-run   # all but the network; exit 2 without credentials
cxforge upload submissions/submission.py -m "v4" --max-games 1024  # a floor close to the agent's rate
cxforge upload ~/bots/pw -m "pw v1" --competition NAME  # a game whose competition cxforge games does not name"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge upload``."""
    parser.description = (HELP + ". The file is checked first, with the check's flags (-n, --max-games, "
                          "--opponents, --seed, -w: see `cxforge check --help`), and refused unless it passes: exit "
                          "status 1 for FAIL, 3 for UNDECIDED, 2 for an error; there is no way to skip the check. The "
                          "file (reached without a symbolic link) is copied once into a private folder: that copy "
                          "is checked, and sent once its sha256 is verified again, so a file changed during or "
                          "after its check is never sent.")
    parser.add_argument("path", metavar="AGENT", help="the submission file (e.g. submissions/submission.py), or a "
                        "project folder, source .py or registered agent, built first")
    parser.add_argument("-m", "--message", required=True, help="the submission's description on Kaggle")
    add_gate_flags(parser)
    parser.add_argument("--competition", default=None, metavar="NAME",
                        help="the Kaggle competition to submit to, the NAME in kaggle.com/competitions/NAME "
                             "(default: that of the game the file was built for, as cxforge games lists it: "
                             "connectx for ConnectX)")
    parser.add_argument("--dry-run", action="store_true",
                        help="do everything but the upload, without credentials too: build, copy, check, then name "
                             "the checked copy and its sha256, say where the credentials are (never printed) and "
                             "the kaggle command line that would run; exit status as the real upload's: 1 FAIL, 3 "
                             "UNDECIDED, 2 with one line where it would stop (no kaggle CLI, no credentials)")


def run(args: argparse.Namespace) -> int:
    """Check the file, upload it if it passed, print what Kaggle said; 0 (a refusal is a ``UserError``)."""
    gate = gate_of(args)
    file = submission_of(args.path)
    if file.built_here:
        print(f"built {file.label!r}: {file.file}", flush=True)
    # a file built here lies in the toolkit's own cache: its real path (a link to the cache is the user's own)
    path = Path(file.file).resolve() if file.built_here else Path(file.file)
    output = upload(path, args.message, gate, progress=options.progress_of(args),
                    show=partial(print, flush=True), dry_run=args.dry_run, competition=args.competition)
    print(output)
    return 0
