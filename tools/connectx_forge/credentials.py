"""Kaggle credentials: where the kaggle CLI finds them, and every value to keep out of what we print.

Two places need this: ``cxforge upload`` relays the kaggle CLI's output, and the
agent hosts (``tools/connectx_forge/sandbox``) report what an untrusted agent said, which may
quote a file it read by absolute path.  Both scrub with ``secrets`` and
``scrub``; ``is_secret_name`` says which environment variables are never passed
to an agent.  Values are never printed or logged.  ``exposes`` says which folders hold credentials (``/``, a
home folder, one with ``.kaggle/``, ``.ssh/``, ...: ``runtime.CREDENTIALS``): none is a project's root
(build/connectx_bundler/project.py) or shown to an agent (sandbox/jail.py).
"""

from __future__ import annotations

import base64
import os
import pwd
import sys
from collections.abc import Mapping
from pathlib import Path

from connectx_forge import boundedread
from connectx_forge.errors import UserError
from connectx_forge.runtime import CREDENTIALS

SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")
MIN_SECRET = 4  # shorter values (e.g. "1") would mask ordinary text


def is_secret_name(name: str) -> bool:
    """An environment variable that may hold a credential (never passed to an agent)."""
    upper = name.upper()
    return upper.startswith("KAGGLE") or any(w in upper for w in SECRET_WORDS)


def _strings(data: object) -> list[str]:
    """Every string in a parsed JSON value."""
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [s for v in data.values() for s in _strings(v)]
    if isinstance(data, list):
        return [s for v in data for s in _strings(v)]
    return []


def _config_dir(env: Mapping[str, str], home: Path) -> Path:
    """Where the kaggle CLI reads kaggle.json (the same rule as kaggle_api_extended.py)."""
    if env.get("KAGGLE_CONFIG_DIR"):
        return Path(env["KAGGLE_CONFIG_DIR"])
    legacy = home / ".kaggle"
    if legacy.exists() or not sys.platform.startswith("linux"):
        return legacy
    return Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "kaggle"


def credential_source(env: Mapping[str, str] | None = None) -> str | None:
    """Where the kaggle CLI will find credentials (a name, never the value), or None."""
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    if env.get("KAGGLE_API_TOKEN"):
        return "KAGGLE_API_TOKEN"
    for name in ("access_token", "access_token.txt", "credentials.json"):
        if (home / ".kaggle" / name).is_file():
            return f"~/.kaggle/{name}"
    kaggle_json = _config_dir(env, home) / "kaggle.json"
    if kaggle_json.is_file():
        return str(kaggle_json)
    if env.get("KAGGLE_USERNAME") and env.get("KAGGLE_KEY"):
        return "KAGGLE_USERNAME/KAGGLE_KEY"
    return None


def secrets(env: Mapping[str, str] | None = None) -> list[str]:
    """Every credential value in reach, to scrub from anything we print, longest first.

    The values of credential-named variables (``is_secret_name``), the token
    files, every string of the kaggle.json files the CLI may read (the username
    too), and each key's HTTP Basic form in case an error line repeats a header.
    """
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    found = [v for k, v in env.items() if is_secret_name(k)]
    token_path = env.get("KAGGLE_API_TOKEN", "")
    tokens = [home / ".kaggle" / "access_token", home / ".kaggle" / "access_token.txt"]
    if token_path and Path(token_path).is_file():
        tokens.append(Path(token_path))
    for f in tokens:
        try:
            found.append(f.read_text().strip())
        except OSError:
            pass
    user = env.get("KAGGLE_USERNAME", "")
    for f in (_config_dir(env, home) / "kaggle.json", home / ".kaggle" / "kaggle.json",
              home / ".config" / "kaggle" / "kaggle.json", home / ".kaggle" / "credentials.json"):
        try:
            data = boundedread.read_json(f, boundedread.MAX_SETTINGS) if f.is_file() else None
        except UserError:  # unreadable, or no credentials file (too large, too deep): nothing to scrub from it
            continue
        found.extend(_strings(data))
        if isinstance(data, dict) and not user:
            user = str(data.get("username", ""))
    keys = [s for s in found if len(s) >= MIN_SECRET]
    keys += [base64.b64encode(f"{user}:{k}".encode()).decode() for k in keys]
    return sorted(set(keys), key=len, reverse=True)


def scrub(text: str, hidden: list[str]) -> str:
    """``text`` with every secret replaced by ``***``."""
    for s in hidden:
        text = text.replace(s, "***")
    return text


def homes() -> set[str]:
    """The user's home folders, links resolved: ``$HOME`` and the account's own (they differ under ``sudo`` or
    where a test sets ``HOME``)."""
    found = {os.path.expanduser("~")}
    try:
        found.add(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:  # a uid with no account
        pass
    return {os.path.realpath(home) for home in found if home and home != "~"}


def exposes(folder: str | os.PathLike[str]) -> str | None:
    """Why ``folder`` must never be a project's root nor be shown to an agent: it is ``/``, a home folder or a
    folder above one, or it holds credentials (``runtime.CREDENTIALS`` at its top); None when it is none."""
    real = os.path.realpath(folder)
    if real == os.path.realpath("/"):
        return "is the filesystem's root"
    for home in sorted(homes()):
        if real == home:
            return "is your home folder"
        if home.startswith(real.rstrip("/") + "/"):
            return f"holds your home folder ({home})"
    held = [place for place in CREDENTIALS if os.path.lexists(os.path.join(real, *place.split("/")))]
    return f"holds credentials ({', '.join(held)})" if held else None
