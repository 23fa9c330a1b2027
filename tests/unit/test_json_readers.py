"""Every reader of JSON or TOML text goes through ``connectx_forge.boundedread``.

``json`` and ``tomllib`` recurse once per level and take any number's digits: a games file, a replay, a manifest
or a label cache nested 100,000 deep is a ``RecursionError`` traceback unless its size and nesting were scanned
first, which ``boundedread`` does (one line naming the file and the bound).  Every ``.py`` under agents/, build/
and tools/ is parsed with ``ast`` (calls named through the module's imports, as ``test_loaders`` does), and a call
of ``json.load``/``json.loads``/``json.JSONDecoder``/``tomllib.load``/``tomllib.loads``/``pandas.read_json``
anywhere but in boundedread itself fails, unless ``ALLOWED`` says why that text is no file a user is given.  An
entry that no longer matches a use fails too.
"""

from __future__ import annotations

import ast

from tests.unit.test_loaders import _aliases, _dotted, _modules, assert_allowed

PARSERS = frozenset({"json.load", "json.loads", "json.JSONDecoder", "json.decoder.JSONDecoder", "tomllib.load",
                     "tomllib.loads", "pandas.read_json", "simplejson.loads", "simplejson.load"})
READER = "tools/connectx_forge/boundedread.py"  # the one module that parses given text, after its scans

# (file, call): why this text is not a file or bytes a user can be given
ALLOWED = {
    ("agents/net/mlp.py", "json.loads"): "a weight file's meta (an --init npz): agents/ cannot import the toolkit "
                                         "(it ships in submissions), so load_mlp counts the brackets itself first",
    ("agents/weighted.py", "json.loads"): "the package's own data file (read_data), shipped with the agent",
    ("tools/connectx_forge/sandbox/jail.py", "json.loads"):
        "the last line the toolkit's own probe printed, before any agent ran",
    ("tools/connectx_forge/sandbox/protocol.py", "json.loads"):
        "json_of reads back the text its own json.dumps just wrote, bounded in size and depth first (tuples "
        "become lists, as Kaggle's agent server sends them)",
    ("tools/connectx_forge/sandbox/cgroup.py", "json.loads"): "the warden's command-line word that cgroup.to_arg wrote",
    ("tools/connectx_forge/sandbox/template.py", "json.loads"):
        "the warden's game message to a spare, over a socket only they "
                                                 "hold (the spare is agent code's process anyway)",
    ("tools/connectx_forge/bench/floor.py", "json.loads"):
        "the floor bench's own messages between it and the hosts it forked",
    ("tools/connectx_forge/leaderboard/review/label_cache.py", "json.loads"):
        "lines the toolkit's own workers made with "
                                                               "json.dumps and handed over in memory (the cache "
                                                               "file itself is read by boundedread)",
    ("tools/connectx_forge/games/catalog.py", "json.loads"):
        "the installed kaggle-environments' own default action, through the json.dumps just before it",
    ("tools/connectx_forge/play/episode.py", "json.loads"):
        "the referee's own replay (env.toJSON), through the json.dumps just before it, to plain data",
    ("tools/connectx_forge/leaderboard/review/replay_page.py", "json.JSONDecoder"):
        "the page kaggle-environments just rendered "
                                                                     "from a replay boundedread already bounded",
}


def json_reads(file: str, tree: ast.Module) -> set[tuple[str, str]]:
    """The (file, call) of every JSON or TOML parse in a module."""
    names = _aliases(tree)
    return {(file, name) for node in ast.walk(tree) if isinstance(node, ast.Call)
            and (name := _dotted(node.func, names)) in PARSERS}


def test_every_json_or_toml_reader_goes_through_boundedread() -> None:
    uses = {use for file, tree in _modules() if file != READER for use in json_reads(file, tree)}
    assert_allowed(uses, ALLOWED, "JSON/TOML parsed outside boundedread (use boundedread.read_json/parse_json/"
                                  "read_lines/read_toml, or allowlist with the reason the text is no file a user "
                                  "is given)")


def test_the_scan_finds_every_kind_of_json_read() -> None:
    source = """
import json, tomllib as t
from json import loads as L
import pandas as pd
json.loads(text)
json.load(fh)
L(text)
json.JSONDecoder().raw_decode(text)
t.loads(text)
pd.read_json(path)
json.dumps(value)
"""
    found = json_reads("x.py", ast.parse(source))
    assert {call for _, call in found} == {"json.loads", "json.load", "json.JSONDecoder", "tomllib.loads",
                                           "pandas.read_json"}
