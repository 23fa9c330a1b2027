"""The one error type of the bundler; the CLI prints it as one line, without a traceback."""

from connectx_forge.errors import UserError


class BuildError(UserError):
    """A submission that cannot be built; the message names the culprit (file:line where known).  A
    ``UserError``, so that the notebook API's callers catch every bad input as ``connectx_forge.UserError``."""
