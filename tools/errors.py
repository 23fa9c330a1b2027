"""The error type the CLI reports as one clear line, without a traceback."""


class UserError(Exception):
    """Bad input from the user: a bad flag value, a missing file, a failed check."""


class UsageError(UserError):
    """Bad use of a command that a flag fixes (``--resume`` of a run whose player changed): exit status 2, as
    for a bad flag."""

    status = 2
