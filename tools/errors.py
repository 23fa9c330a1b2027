"""The error type the CLI reports as one clear line, without a traceback."""


class UserError(Exception):
    """Bad input from the user: a bad flag value, a missing file, a failed check."""
