"""The one error type of the bundler; the CLI prints it as one line, without a traceback."""


class BuildError(Exception):
    """A submission that cannot be built; the message names the culprit (file:line where known)."""
