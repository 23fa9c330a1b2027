"""The warden's own process: it forks hosts and templates into their places, ends them, and cleans up.

``warden.py`` is the referee's side (the ``Warden`` handle) and says why there is
a warden; this is what runs in it: the loop over the referee's requests
(``serve``), a host's start (``_spawn``: its folders given to its uid, its
cgroups, its namespaces, or a fork of its file's template) and end (``_end``:
its wait status, and whether its tree's memory limit killed one of its
processes), and the cleanup when the referee is gone.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import signal
import socket
import tempfile
import time
from collections.abc import Mapping
from typing import NoReturn, NotRequired, TypedDict

from connectx_forge import trees
from connectx_forge.paths import PROJECT_ROOT
from connectx_forge.sandbox import cgroup, host, limits, namespace, protocol, reap, template
from connectx_forge.sandbox.limits import LimitsJson
from connectx_forge.sandbox.protocol import HostSetup

BESIDE = 2  # what a templated host's uid runs beside the agent's own processes: its template and the next spare
TREE_BESIDE = 4  # what a host's cgroups hold beside its agent's processes: its namespace's init, the process that
#                  made it, and (a template's) the template and the next spare
MAX_TEMPLATES = 8  # loaded files a warden keeps (template.py); the least recently used idle one goes first
# templates a file gets, each in namespaces of its own, taking its games in turn: one forks the next game's host
# while the other's host plays, so that no fork is on a game's start and no template runs beside its own game
TEMPLATES_PER_FILE = 2


def _project() -> tuple[list[str], list[str], list[str]]:
    """What a submission file must not see: the modules loaded from the project's sources, and
    ``sys.path`` without the project's folders (its virtualenv, often inside it, stays)."""
    import sys

    root = os.path.realpath(PROJECT_ROOT)
    envs = (os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix))

    def inside(entry: str) -> bool:
        real = os.path.realpath(entry or os.getcwd())
        within = real == root or real.startswith(root + os.sep)
        return within and not any(real == e or real.startswith(e + os.sep) for e in envs)

    mods = [name for name, m in list(sys.modules.items())
            if (f := getattr(m, "__file__", None)) and inside(f)]
    mods += [name for name in list(sys.modules) if name == "agents" or name.startswith(("agents.", "connectx_forge"))]
    return sorted(set(mods)), [p for p in sys.path if not inside(p)], sorted({root, str(PROJECT_ROOT)})


class _State(reap.Hosts):
    def __init__(self, root: str | None = None, groups: tuple[cgroup.Group, ...] = ()) -> None:
        super().__init__()
        self.groups = groups  # where each fresh host and template gets cgroups of its own (cgroup.py)
        self.trees: dict[int, cgroup.Tree] = {}  # each running host's cgroups (a templated one: its template's)
        self.ooms: dict[int, int] = {}  # each running host's tree's OOM kills when it started
        self.leftover: list[cgroup.Tree] = []  # cgroups of ended hosts that still held a process
        self.serial = 0  # the last tree's number
        self.root = root  # a jailed warden's folder of game folders, removed when it ends
        self.folders: dict[int, str] = {}  # each running host's temporary folder, removed if the referee dies
        self.homes: set[str] = set()  # the HOMEs this warden made (fresh hosts of templated files), removed at end
        self.project: tuple[list[str], list[str], list[str]] | None = None
        self.nproc: int | None = None
        self.templates: dict[str, list[template.Template]] = {}  # by the referee's key, the next to play first
        self.template_folders: set[str] = set()
        self.forked_by: dict[int, template.Template] = {}  # hosts that are a template's children
        self.alone = False  # each host in namespaces of its own (namespace.py): in a jail that allows it
        self.shown: list[str] = []  # what the jail shows under its /tmp, which a host's own /tmp shows again
        self.inits: dict[int, int] = {}  # each fresh host's namespace init
        self.uids = False  # each host and template runs as a uid of its own (limits.private_uids: real root)


class Ended(TypedDict):
    """The answer to ``end``: the host's wait status (None: not reaped), and ``oom`` where its tree's memory limit
    killed one of its processes."""

    status: int | None
    oom: NotRequired[bool]


class Started(TypedDict, total=False):
    """The answer to ``spawn`` (``_spawn``; the referee checks it: ``warden.spawned``)."""

    pid: int | None
    load: float | None
    fresh: bool
    slowed: str


def _end(state: _State, pid: int, grace: float) -> Ended:
    """End host ``pid``: its parent (this warden or a template) kills its group and reaps it.  The answer:
    its ``status``, and ``oom`` when its tree's memory limit killed one of its processes meanwhile."""
    tree, before = state.trees.pop(pid, None), state.ooms.pop(pid, 0)
    templated = pid in state.forked_by  # its tree is its template's, which lives on
    status = _end_host(state, pid, grace)
    answer: Ended = {"status": status}
    if tree is not None and cgroup.oom_kills(tree) > before:
        answer["oom"] = True
    if tree is not None and not templated:
        state.leftover.append(tree)
    state.leftover = [t for t in state.leftover if not cgroup.release(t)]
    return answer


def _end_all(state: _State, pids: list[int]) -> None:
    """End hosts ``pids`` (one game's) without their statuses: every one is killed before any is ended (``_end``),
    so that their exits overlap."""
    for pid in pids:
        if pid in state.running:
            reap.kill(pid)
    for pid in pids:
        _end(state, pid, 0.0)


def _end_host(state: _State, pid: int, grace: float) -> int | None:
    parent = state.forked_by.pop(pid, None)
    folder = state.folders.pop(pid, None)
    if folder in state.homes:  # made here (the referee removes the folders it made)
        state.homes.discard(folder)
        trees.remove(folder)
    if parent is None:
        status = reap.end(state, pid, grace)
        namespace.end_init(state.inits.pop(pid, 0), state)
        return status
    status = parent.end(pid, grace)
    state.throttle.remove(pid)
    state.running.discard(pid)
    if parent.gone:  # its hosts died with it; the file gets a new template next time
        reap.killpg(pid)
        _drop(state, parent)
    return status


def _drop(state: _State, shared: template.Template) -> None:
    """Forget a template that died or stopped answering, and kill it."""
    for pair in state.templates.values():
        if shared in pair:
            pair.remove(shared)
    _close(state, shared)


def _close(state: _State, shared: template.Template) -> None:
    """Kill a template and its hosts, and remove its cgroups (later, where a process is still leaving)."""
    shared.close(state)
    if shared.tree is not None and not cgroup.release(shared.tree):
        state.leftover.append(shared.tree)


def _tree(state: _State, sizes: LimitsJson) -> cgroup.Tree | None:
    """New cgroups for a fresh host or a template and all it will start, holding them together to the
    ``memory`` and ``extra_processes`` of their limits ``sizes`` (None where the warden has none)."""
    if not state.groups:
        return None
    state.serial += 1
    return cgroup.grow(state.groups, f"{cgroup.HOST}{state.serial}", int(sizes["memory"]),
                       int(sizes["extra_processes"]) + TREE_BESIDE)


def _cleanup(state: _State) -> NoReturn:
    """Kill every host group and every orphan left to this subreaper, then exit."""
    try:
        for pid in list(state.running):
            reap.killpg(pid)
        for _ in range(20):
            kids = reap.children()
            if not kids:
                break
            for pid in kids:
                reap.killpg(pid)
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.01)
            reap.reap_any(state)
        for folder in [*state.folders.values(), *state.template_folders]:  # the referee may have died first
            trees.remove(folder)
        if state.root:
            trees.remove(state.root)
    finally:
        os._exit(0)


def _spawn(state: _State, setup: HostSetup, fds: list[int]) -> Started:
    """Start a host: ``pid``; for a file with a ``template`` key, forked from its template (``load``: the
    seconds its load took, charged to move 1) or, where a template cannot be used, ``fresh``."""
    if setup["kind"] == "file":
        if state.project is None:
            state.project = _project()
        setup["project_modules"], setup["project_path"], setup["project_roots"] = state.project
    if state.nproc is None:  # a uid of its own counts its own processes alone; a shared one, the user's too
        state.nproc = (0 if state.uids else limits.user_processes()) + int(setup["limits"]["extra_processes"])
    setup["nproc"] = state.nproc + (BESIDE if state.uids and "template" in setup else 0)
    folders = sorted({os.path.dirname(setup["cwd"])})  # a host's own game folder (its template's)
    staged_path, staged_cwd = setup.get("path"), setup.get("cwd")  # put back where namespaces fail after all
    agent = None
    if state.alone and setup.pop("kaggle", False):  # a .tar.gz: its files where Kaggle puts them
        agent = os.path.dirname(setup["path"])
        setup["path"] = os.path.join(namespace.KAGGLE_AGENT, os.path.basename(setup["path"]))
        setup["cwd"] = namespace.KAGGLE_AGENT
    answer: Started = {}
    pid, tree = None, None
    shared = _template(state, setup, agent) if "template" in setup else None
    if shared is not None:
        pid = shared.fork({"seed": setup["seed"]}, fds)
        if pid is None:  # it died: this file is loaded afresh from now on
            _drop(state, shared)
        else:
            state.forked_by[pid] = shared
            tree = shared.tree
            answer["load"] = shared.load  # on this warden's clock (template.Template.load)
    if pid is None:
        answer["fresh"] = "template" in setup
        if "home" not in setup:  # a templated host's HOME is its template's to make: this one makes its own
            setup["home"] = tempfile.mkdtemp(prefix="cxforge-home-", dir=state.root)
            state.homes.add(setup["home"])
        folders.append(os.path.dirname(setup["home"]))
        if state.uids:
            setup["uid"] = limits.new_uid()
            _give(folders, setup["uid"])
        me = os.getpid()
        gc.freeze()  # the warden's objects: a host's collector never walks them, so their pages stay shared
        tree = _tree(state, setup["limits"])
        place = _place(state, folders, agent, setup["limits"], tree)
        try:
            pid, init = place.fork()
        except OSError:  # namespaces failed after the probe said they work: hosts share the jail from now on
            state.alone = False
            if staged_path is not None:
                setup["path"] = staged_path
            if staged_cwd is not None:
                setup["cwd"] = staged_cwd
            place = dataclasses.replace(place, alone=False, agent=None)
            pid, init = place.fork()
        finally:
            if pid != 0:
                cgroup.close(place.cgroups)
        if pid == 0:
            host.run(fds[0], fds[1], setup, 0 if place.alone else me)
        if init:
            state.inits[pid] = init
    for fd in fds:
        os.close(fd)
    state.running.add(pid)
    if tree is not None:
        state.trees[pid], state.ooms[pid] = tree, cgroup.oom_kills(tree)
    parent = state.forked_by.get(pid)  # its template, stopped during its game, shares its PID namespace
    init = parent.init if parent is not None else state.inits.get(pid, 0)
    slowed = state.throttle.add(pid, float(setup["limits"].get("slowdown", 1.0)), tree, init,
                                parent.pid if parent is not None else 0)
    if slowed is not None:
        answer["slowed"] = slowed
    if "home" in setup:
        state.folders[pid] = setup["home"] if setup["home"] in state.homes else os.path.dirname(setup["home"])
    answer["pid"] = pid
    return answer


def _place(state: _State, folders: list[str], agent: str | None, sizes: LimitsJson,
           tree: cgroup.Tree | None = None) -> namespace.Place:
    """Where a host or template goes: alone in namespaces (its own ``/tmp`` showing ``folders``, a .tar.gz's
    ``agent`` folder at Kaggle's place, all it writes in one budget, the ``tmp_size`` of
    its limits ``sizes``) where this warden can make them, else beside it; in the cgroups ``tree`` (whose
    ``cgroup.procs`` it opens: the caller closes them after the fork)."""
    return namespace.Place(state.alone, (*state.shown, *folders), agent, int(sizes.get("tmp_size", 0)),
                           cgroup.entries(tree) if tree else (), tuple(folders))


def _give(folders: list[str], uid: int) -> None:
    """Make ``folders`` and all in them ``uid``'s (a host's own uid: its game folder and HOME are its own); the
    walk keeps its own stack and follows no link (``trees.walk``: what an earlier game left there is no
    recursion), and what lies deeper than ``trees.DEEPEST`` folders (nothing staged does) stays the warden's."""
    for folder in folders:
        os.chown(folder, uid, uid, follow_symlinks=False)
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            for _, at, name, _ in trees.walk(fd, trees.DEEPEST):
                os.chown(name, uid, uid, dir_fd=at, follow_symlinks=False)
        except trees.TooDeep:
            pass
        finally:
            os.close(fd)


def _template(state: _State, setup: HostSetup, agent: str | None) -> template.Template | None:
    """The template that plays ``setup``'s next game: of its key's (``TEMPLATES_PER_FILE``), started if need be,
    the idle one that played longest ago (None: the file cannot have one)."""
    key = setup["template"]["key"]
    pair = state.templates.pop(key, [])
    state.templates[key] = pair  # the most recently used last
    busy = set(state.forked_by.values())
    idle = [k for k, p in state.templates.items() if k != key and not busy.intersection(p)]
    for old in idle[:max(0, len(state.templates) - MAX_TEMPLATES)]:  # the least recently used go
        for shared in state.templates.pop(old):
            _close(state, shared)
    free = [t for t in pair if t not in busy]
    if len(pair) >= TEMPLATES_PER_FILE and free:
        chosen: template.Template | None = free[0]
        pair.remove(free[0])
    else:
        chosen = _start_template(state, setup, agent)
    if chosen is None:  # the file cannot have one (its load failed, or took too long): it is loaded afresh
        for shared in state.templates.pop(key):
            _close(state, shared)
        return None
    pair.append(chosen)  # it plays now: the other one's turn comes first
    return chosen


def _start_template(state: _State, setup: HostSetup, agent: str | None) -> template.Template | None:
    """A new template for ``setup``'s file, in a uid, cgroups and namespaces of its own (None: it cannot have
    one, ``template.start`` says why)."""
    shared = setup["template"]
    folder = os.path.dirname(shared["home"])
    state.template_folders.add(folder)
    if state.uids:  # the template's, and so its hosts'
        setup = {**setup, "uid": limits.new_uid()}
        _give([folder], setup["uid"])
    tree = _tree(state, setup["limits"])
    place = _place(state, [folder], agent, setup["limits"], tree)
    try:
        started = template.start({**setup, "home": shared["home"]}, float(shared["budget"]), state, place, tree)
    finally:
        cgroup.close(place.cgroups)  # the template (its child) returns from start only in the warden
    if isinstance(started, str):
        if tree is not None and not cgroup.release(tree):
            state.leftover.append(tree)
        return None
    return started


def serve(sock: socket.socket, parent: int, root: str | None = None,
           groups: tuple[cgroup.Group, ...] = ()) -> NoReturn:
    """Serve the referee's requests until its channel closes (it exited or was killed), then clean up.

    ``parent`` is the referee's pid; 0 in the jail, whose warden's parent is
    bubblewrap (the channel's end alone tells it the referee is gone), and
    whose game folders are in ``root``; ``groups``: where hosts get cgroups (``cgroup.py``)."""
    state = _State(root, groups)
    if root is not None and namespace.possible():  # jailed, and the jail lets it make namespaces
        state.alone, state.shown = True, namespace.mounted_under_tmp(root)
    if root is not None and limits.private_uids():  # jailed as root: each host a uid of its own
        state.uids = True
        os.chmod(root, 0o711)  # its game folders' own uids pass through it (they cannot list it)
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, lambda *_: _cleanup(state))
        if parent:
            limits.die_with_parent(signal.SIGTERM, parent)
        limits.prctl(limits.PR_SET_CHILD_SUBREAPER, 1)
        limits.clean_environment()  # no credentials in the warden, so none in any host
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        keep = sock.fileno()
        os.closerange(3, keep)
        os.closerange(keep + 1, 1 << 16)
        if state.alone:
            namespace.own_ipc()  # so that it may come back from a template's (namespace.clear_ipc)
        for message, fds in protocol.requests(sock):
            if message["op"] == "spawn":
                answer: Mapping[str, object] = _spawn(state, message["setup"], fds)  # the HostSetup the referee sent
            elif "pids" in message:
                _end_all(state, [int(pid) for pid in message["pids"]])
                answer = {}
            else:
                answer = _end(state, int(message["pid"]), float(message.get("grace", 0)))
            if not message.get("quiet"):  # a quiet end is not answered
                sock.send(json.dumps(answer).encode())
    except BaseException:
        pass
    _cleanup(state)
