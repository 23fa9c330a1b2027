"""The error types the CLI reports as one clear line, without a traceback, and every command's exit statuses.

One table for every command (``EXIT_STATUSES``, shown under ``cxforge --help``): 0 success (PASS, H1
accepted), 1 FAIL (or H0 accepted), 2 an error (a bad flag, an unknown player, a missing or unreadable file,
anything that stops a command before it can answer), 3 UNDECIDED (or no decision within the games allowed),
130 interrupted.  So 1 and 3 are answers a script can act on, never confused with a mistake in the command line.
"""

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_ERROR = 2
EXIT_UNDECIDED = 3
EXIT_INTERRUPTED = 130
EXIT_STATUSES = ((EXIT_OK, "success: PASS, H1 accepted, a command done"),
                 (EXIT_FAIL, "FAIL (check, upload), H0 accepted (sprt)"),
                 (EXIT_ERROR, "an error: a bad flag, an unknown player, a missing file, no credentials"),
                 (EXIT_UNDECIDED, "UNDECIDED (check, upload), no decision within the games allowed (sprt)"),
                 (EXIT_INTERRUPTED, "interrupted (Ctrl-C)"))


class UserError(Exception):
    """Bad input from the user, or a run that cannot be done (a bad flag value, a missing file, no
    credentials): exit status 2."""

    status = EXIT_ERROR


class UsageError(UserError):
    """Bad use of a command that a flag fixes (``--resume`` of a run whose player changed): exit status 2, as
    for a bad flag."""


class Verdict(UserError):
    """A command refused to go on because of a verdict (``upload`` of a file whose check is FAIL or
    UNDECIDED): the verdict's exit status, 1 or 3."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status
