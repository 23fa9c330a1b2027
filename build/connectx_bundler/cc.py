"""The C compiler, run on a library's own files: it sees them and the toolchain, nothing else of this machine.

A project's C is as untrusted as the rest of it: ``#include "/home/me/.kaggle/kaggle.json"``, ``#embed``
or an inline assembler's ``.incbin "..."`` would compile any file the user can read into the library, and
so into ``submission.py``.  So the compiler (the pinned ``ziglang``'s ``zig cc``) runs in bubblewrap, the
way ``tools/connectx_forge/sandbox/jail.py`` jails agents: no network, private process, IPC and UTS namespaces, no
capability, a clean environment, and a filesystem that shows, read-only, only the toolchain (ziglang's
package folder, at its own path) and a scratch folder of copies of the project's files (``/build``); the
only writable folders are the output folder (``/out``) and the toolchain's own cache.  Never the home
folder, ``/etc`` or the rest of the project.  In three steps:

1. every C file (``C_SUFFIXES``) in the folders of the library's sources, and below (hidden names
   skipped), is copied, each read as ``files.read_inside`` reads a project file (a link leading out, a
   FIFO, a device or a hard-linked file is refused, naming it);
2. the compiler lists what each source includes (``-M -MG``: missing files too, so that a path outside
   the project is refused in one line naming it, rather than not found), and the preprocessed text is
   searched for an assembler's file reads (``.incbin``, ``.include``), refused too;
3. a fresh scratch folder holds only the sources and the project files they include, listed again (they
   must include no other file), then compiled there: whatever the compiler can read is one of those,
   which the cache key covers (``native.cache_key``), or the toolchain's.

Where bubblewrap is missing, refused by the kernel, or turned off (``CXFORGE_JAIL=off``), the same steps
run unjailed and one line on stderr says so: every include is checked as above, and inline assembly is
refused (unjailed, an ``.incbin`` could read any file, and the dependency output does not list it).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path, PurePosixPath

from connectx_bundler.errors import BuildError
from connectx_bundler.files import read_inside, under
from connectx_forge.children import find_library, program
from connectx_forge.safe_write import make_folder
from connectx_forge.sandbox import jail

C_SUFFIXES = (".c", ".h", ".inc")
SOURCES = "/build"  # where the jail shows the copied files, read-only
OUT = "/out"  # the jail's writable output folder
SCAN_TIMEOUT = 120  # seconds for one listing or preprocessing: an include of a device must not hang the build
COMPILE_TIMEOUT = 600
ERROR_LINES = 20  # of the compiler's output, in the error
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')
CHAR = re.compile(r"'(?:\\.|[^'\\\n])*'")
ASSEMBLER_READS = re.compile(r"\.(incbin|include)\b")
ASSEMBLY = re.compile(r"\b(asm|__asm__|__asm)\b")
MAX_DEPTH = 32  # the folders of the C sources, walked for what they include: how deep
MAX_FOLDERS = 10_000  # and how many folders in all


def toolchain_dir() -> str:
    """The pinned toolchain's folder (ziglang's package: the ``zig`` binary and its ``lib``), links resolved; from
    the interpreter's libraries only (a ``ziglang/`` in the working folder is no toolchain)."""
    spec = find_library("ziglang")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise BuildError("the C toolchain ziglang is not installed: pip install -e '.[native]'")
    return os.path.realpath(locations[0])


@dataclass(frozen=True)
class Folders:
    """One compile's scratch folders on this machine, and whether the compiler runs jailed (where it then sees
    them at ``SOURCES`` and ``OUT``)."""

    sources: str
    out: str
    cache: str  # the toolchain's global cache: the same path in the jail
    jailed: bool

    @property
    def seen_sources(self) -> str:
        return SOURCES if self.jailed else self.sources

    @property
    def seen_out(self) -> str:
        return OUT if self.jailed else self.out


def jail_arguments(folders: Folders) -> list[str]:
    """bwrap's command line (without the compiler's) that shows only the toolchain and ``folders``."""
    bwrap = program("bwrap") or "bwrap"
    zig = toolchain_dir()
    unshare = jail.UNSHARE[1:] if os.geteuid() == 0 else jail.UNSHARE  # as jail.arguments: no user namespace as root
    return [bwrap, "--ro-bind", zig, zig, "--ro-bind", folders.sources, SOURCES, "--bind", folders.out, OUT,
            "--bind", folders.cache, folders.cache, "--dev", "/dev", "--proc", "/proc", "--remount-ro", "/",
            *unshare, "--new-session", "--die-with-parent", "--cap-drop", "ALL", "--clearenv",
            "--setenv", "PATH", jail.PATH, "--setenv", "ZIG_GLOBAL_CACHE_DIR", folders.cache,
            "--setenv", "ZIG_LOCAL_CACHE_DIR", f"{OUT}/.zig", "--chdir", SOURCES]


def run(folders: Folders, args: list[str], timeout: int) -> subprocess.CompletedProcess[str]:
    """``zig ARGS`` in ``folders`` (jailed when they say so), its output captured; ``BuildError`` past
    ``timeout`` seconds."""
    zig = os.path.join(toolchain_dir(), "zig")
    env = {"PATH": jail.PATH, "ZIG_GLOBAL_CACHE_DIR": folders.cache, "ZIG_LOCAL_CACHE_DIR": f"{folders.out}/.zig"}
    command = [*jail_arguments(folders), zig, *args] if folders.jailed else [zig, *args]
    try:
        return subprocess.run(command, cwd=folders.sources, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        raise BuildError(f"the C compiler ran past {timeout} s on {' '.join(args[-1:])} (does it include a device "
                         "or a pipe?); the build stopped it") from None


@cache
def jail_refused() -> str | None:
    """None where the compiler runs jailed here; else why not, in a few words (found once per process)."""
    if jail._off():
        return "CXFORGE_JAIL=off"
    if program("bwrap") is None:
        return f"no bwrap on PATH; {jail.INSTALL}"
    with tempfile.TemporaryDirectory(prefix="cxforge-cc-probe-") as scratch:
        folders = _folders(scratch, {}, scratch, True)
        try:
            proc = run(folders, ["version"], SCAN_TIMEOUT)
        except (OSError, BuildError) as exc:
            return f"bwrap cannot run ({exc})"
    if proc.returncode != 0:
        return "bwrap refused: " + ((proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1])[:200]
    return None


@cache
def say_unjailed(why: str) -> None:
    """The one line that says the compiler runs unjailed here (once per process)."""
    print(f"note: C compiles without the jail ({why}): every file it includes is checked to be the project's, "
          "and inline assembly is refused", file=sys.stderr)


def c_files(root: Path, sources: list[str]) -> dict[str, bytes]:
    """Every C file (``C_SUFFIXES``) in the folders of ``sources`` and below, hidden names skipped: what the
    sources may include, by project-relative path, each read as ``files.read_inside`` reads.  The walk is
    bounded (``MAX_DEPTH`` folders deep, ``MAX_FOLDERS`` folders): past a bound, one line naming it."""
    found: dict[str, bytes] = {}
    walked = 0
    for folder in sorted({PurePosixPath(rel).parent.as_posix() for rel in sources}):
        for path, folders, names in os.walk(root / folder):
            walked += 1
            rel_folder = Path(path).relative_to(root)
            if len(rel_folder.parts) > MAX_DEPTH or walked > MAX_FOLDERS:
                bound = f"{MAX_DEPTH} folders deep" if len(rel_folder.parts) > MAX_DEPTH else f"{MAX_FOLDERS} folders"
                raise BuildError(f"{rel_folder.as_posix()}: the C sources' folders hold more than {bound} (the "
                                 "build looks there for the files they include); keep the C in a folder of its own")
            folders[:] = sorted(f for f in folders if not f.startswith(".") and f != "__pycache__")
            for file in sorted(names):
                rel = Path(path, file).relative_to(root).as_posix()
                if file.endswith(C_SUFFIXES) and not file.startswith(".") and rel not in found:
                    found[rel] = read_inside(root, Path(path, file), rel)
    return found


def _folders(scratch: str, files: dict[str, bytes], cache_dir: str, jailed: bool) -> Folders:
    """A fresh pair of scratch folders under ``scratch``, the sources' one holding ``files``."""
    work = tempfile.mkdtemp(dir=scratch)
    sources, out = os.path.join(work, "src"), os.path.join(work, "out")
    os.mkdir(out)
    os.mkdir(sources)
    for rel, content in files.items():
        path = Path(sources, rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return Folders(sources, out, cache_dir, jailed)


def parse_deps(text: str) -> list[str]:
    """The prerequisites of a make rule (the compiler's ``-M`` output): its escapes undone."""
    _, _, rest = text.replace("\\\n", " ").partition(": ")
    return [re.sub(r"\\(.)", r"\1", token).replace("$$", "$") for token in re.findall(r"(?:\\.|[^\s\\])+", rest)]


def included(path: str, folders: Folders, source: str, where: str) -> str | None:
    """The project file (relative path) that listed dependency ``path`` is; None for the toolchain's;
    ``BuildError`` for any other file."""
    base = folders.seen_sources
    full = os.path.normpath(path if os.path.isabs(path) else os.path.join(base, path))
    if under(full, base):
        return os.path.relpath(full, base)
    if under(full, toolchain_dir()):
        return None
    raise BuildError(f"{where}: {source} includes {path}, which is not a file of the project; a library may "
                     "include only the project's files and the toolchain's headers")


def check_assembly(text: str, source: str, where: str, jailed: bool) -> None:
    """``BuildError`` where preprocessed ``text`` has inline assembly that reads a file, or, unjailed, any."""
    code = "\n".join(line for line in text.splitlines() if not line.startswith("#"))  # no line markers
    if any(ASSEMBLER_READS.search(literal) for literal in STRING.findall(code)):
        raise BuildError(f"{where}: {source} has inline assembly that reads a file (.incbin or .include); a "
                         "library holds only compiled code: read data with read_data")
    if not jailed and ASSEMBLY.search(STRING.sub('""', CHAR.sub("''", code))):
        raise BuildError(f"{where}: {source} has inline assembly, which the build cannot check without the jail "
                         f"({jail_refused()}); install bubblewrap, or write it in C")


def failed(proc: subprocess.CompletedProcess[str], where: str) -> None:
    """``BuildError`` with the compiler's first lines where it failed."""
    if proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines()[:ERROR_LINES]
        raise BuildError(f"{where} does not compile:\n" + "\n".join(lines))


def scan(folders: Folders, sources: list[str], flags: tuple[str, ...], where: str) -> set[str]:
    """The project files the sources include (relative paths, missing ones too), checked as the module's doc
    says (step 2)."""
    found: set[str] = set()
    for i, source in enumerate(sources):
        deps = f"{i}.d"
        proc = run(folders, ["cc", *flags, "-M", "-MG", "-MT", "x", "-MF", f"{folders.seen_out}/{deps}", source],
                   SCAN_TIMEOUT)
        failed(proc, where)
        for path in parse_deps(Path(folders.out, deps).read_text(errors="replace")):
            rel = included(path, folders, source, where)
            if rel is not None:
                found.add(rel)
        proc = run(folders, ["cc", *flags, "-E", "-o", f"{folders.seen_out}/{i}.i", source], SCAN_TIMEOUT)
        failed(proc, where)
        check_assembly(Path(folders.out, f"{i}.i").read_text(errors="replace"), source, where, folders.jailed)
    return found


def compile_c(root: Path, sources: list[str], flags: tuple[str, ...], cache_dir: Path,
              where: str) -> tuple[dict[str, bytes], bytes]:
    """``(files, object)``: the project files the compiler read (the sources, then those they include, by
    relative path) and the shared object compiled from them with ``flags``; ``where`` starts every error."""
    why = jail_refused()
    if why is not None:
        say_unjailed(why)
    every = c_files(root, sources)
    make_folder(cache_dir)
    with tempfile.TemporaryDirectory(prefix="cxforge-cc-") as scratch:
        first = _folders(scratch, every, str(cache_dir), why is None)
        listed = scan(first, sources, flags, where)
        files = {rel: every[rel] for rel in [*sources, *sorted(listed & set(every) - set(sources))]}
        second = _folders(scratch, files, str(cache_dir), why is None)
        if not scan(second, sources, flags, where) <= listed:
            raise BuildError(f"{where}: its sources include other files when only the files they include are "
                             "there (__has_include?); the build compiles them alone, so include files directly")
        proc = run(second, ["cc", *flags, "-o", f"{second.seen_out}/lib.so", *sources], COMPILE_TIMEOUT)
        target = Path(second.out, "lib.so")
        failed(proc, where)
        if not target.is_file():
            raise BuildError(f"{where} does not compile: the compiler wrote no library")
        return files, target.read_bytes()
