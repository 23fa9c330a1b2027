"""``cxforge build``: bundle an agent into one self-contained submission file and its manifest.

The command-line face of the bundler (build/connectx_bundler/builder.py): which agent (a
project folder, a ``.py`` file, a registered name), where the file goes
(``-o/--out``) and in which format.
An existing output is never replaced without ``--force``, the default file as much as
``-o PATH`` (and the manifest beside it): ``make submission`` rebuilds its file so.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from connectx_bundler import native_libs
from connectx_bundler.builder import (
    DEFAULT_SIZE_LIMIT,
    FORMATS,
    Target,
    build,
    default_root,
    repack,
    write,
)
from connectx_bundler.cache import is_built
from connectx_bundler.errors import BuildError
from connectx_bundler.manifest import manifest_path
from connectx_forge import options, outputs
from connectx_forge.games.catalog import CONNECTX
from connectx_forge.play.resolve import reference, resolve_target
from connectx_forge.players.player import FILE, SUBMISSIONS

HELP = "bundle an agent and what it uses into one self-contained submission file"
EXAMPLE = """\
cxforge build                                      # in a project folder (cxforge.toml): that project
cxforge build ~/bots/mybot -o submissions/mybot.py # a project folder anywhere
cxforge build net-search -o submissions/net-search.py
cxforge build solver -o submissions/solver.tar.gz"""
DEFAULT_OUTPUT = {"py": Path("submissions/submission.py"), "tar.gz": Path("submissions/submission.tar.gz")}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cxforge build``."""
    parser.add_argument("name", nargs="?", metavar="AGENT",
                        help="a project folder (cxforge.toml), a .py file, or a registered agent (default: the "
                        "project in the working folder, else the strongest registered agent)")
    options.add_out(parser, "where to write it (default: submissions/submission.py, or .tar.gz)")
    parser.add_argument("--format", choices=FORMATS, help="a single .py file, or a .tar.gz with main.py "
                        "(default: from the output's suffix, else py)")
    parser.add_argument("--size-limit", type=int, default=DEFAULT_SIZE_LIMIT, metavar="BYTES",
                        help=f"fail above this size (default {DEFAULT_SIZE_LIMIT:,})")
    parser.add_argument("--module", metavar="MODULE", help="build MODULE's function instead of an AGENT: a module "
                        "of the shipped agents (weighted, or agents.weighted) or of --project-root's project")
    parser.add_argument("--function", metavar="NAME", help="the agent function (default: the project's entry, the "
                        "registry's, or agent)")
    parser.add_argument("--project-root", type=Path, metavar="DIR",
                        help="the folder --module's modules are imported from (default: the shipped agents')")
    parser.add_argument("--write-native", action="store_true",
                        help="also write each C library of the project's [native] settings beside its first source "
                        "(NAME.so and NAME.so.key), compiled with the pinned toolchain: commit them, and the project "
                        "builds where the toolchain is missing while its sources match the key")


def output_format(output: Path | None, fmt: str | None) -> tuple[Path, str]:
    """The output path and format, each defaulting from the other; a mismatch is an error."""
    suffix_fmt = None if output is None else "tar.gz" if output.name.endswith(".tar.gz") else "py"
    fmt = fmt or suffix_fmt or "py"
    if output is None:
        return DEFAULT_OUTPUT[fmt], fmt
    if fmt == "tar.gz" and suffix_fmt != "tar.gz":
        raise BuildError(f"{output}: a --format tar.gz output must end in .tar.gz")
    if fmt == "py" and suffix_fmt == "tar.gz":
        raise BuildError(f"{output}: a .tar.gz output needs --format tar.gz")
    return output, fmt


def keep_existing(output: Path, given: bool, force: bool) -> None:
    """One line (exit status 2) when the submission file or its manifest exists and ``--force`` was not given:
    the default output (no ``-o``) is kept as ``-o PATH`` is (``tools/connectx_forge/outputs.py``)."""
    flag, what = ("-o", "") if given else (None, "build's default output")
    for path in (output, manifest_path(output)):
        outputs.check_output(path, force, flag, what)


def write_native(target: Target) -> None:
    """Compile the target's C libraries and write them beside their sources (``--write-native``)."""
    root, declared = native_libs.declared_for(target.module, target.root or default_root(), target.native)
    if not declared:
        raise BuildError(f"{target.name}: --write-native, but the project's settings declare no [native] library")
    for name, sources in sorted(declared.items()):
        path = native_libs.write_prebuilt(root, name, sources)
        print(f"wrote native library {name!r}: {path} (and {path.name}.key)")


def run(args: argparse.Namespace) -> int:
    """Build the agent, write the file and its manifest, print what was written."""
    if args.size_limit <= 0:
        raise BuildError(f"--size-limit must be a positive number of bytes, got {args.size_limit}")
    if args.module and args.name:
        raise BuildError("give either AGENT or --module, not both")
    root = args.project_root.resolve() if args.project_root else None
    if root is not None and not root.is_dir():
        raise BuildError(f"--project-root {args.project_root}: no such folder")
    output, fmt = output_format(args.out, args.format)
    keep_existing(output, args.out is not None, args.force)
    player = None if args.name is None else reference(args.name, allow=SUBMISSIONS)
    if player is not None and player.kind == FILE and player.path is not None and is_built(player.path):
        if Path(args.name).resolve() == output.resolve():
            raise BuildError(f"{args.name}: already built, and -o names the same file; give another -o")
        built = repack(Path(args.name), fmt)
        manifest = write(built, output)
        print(f"repacked the built {args.name} as {fmt}: manifest {manifest}")
        print(f"{output}  {built.manifest['size']:,} bytes  sha256 {built.manifest['sha256']}")
        return 0
    target = resolve_target(args.name, root, args.module, args.function)
    if args.write_native:
        write_native(target)
    built = build(target, None, fmt, args.size_limit)
    manifest = write(built, output)
    m = built.manifest
    print(f"built agent {target.name!r} ({target.module}.{target.function}): "
          f"{len(m['modules'])} module(s), {len(m['data'])} data file(s); manifest {manifest}")
    if target.settings is not None:
        floors = ", ".join(f"{k} {v:g}" for k, v in sorted(target.floors.items())) or "none"
        game = "" if target.game == CONNECTX else f"game {target.game}; "
        print(f"settings {target.settings}; {game}check floors: {floors}")
    print(f"{output}  {m['size']:,} bytes  sha256 {m['sha256']}")
    return 0
