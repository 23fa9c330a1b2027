"""Dask's ports are locked: whoever reaches a Dask scheduler or worker runs code on it, and a client unpickles
what comes back, so a port open to anyone is a way into the user's account.

``--dask local`` (``tools/connectx_forge/arena/dask_cluster``) must listen on 127.0.0.1 only, over TLS with
credentials made
for the run: a stranger on the machine, over plain TCP or with TLS credentials of their own, is turned away, and
no dashboard or HTTP route tells them anything.  Its workers import nothing from the folder the user stands in
(nor from the notebook's import path).  ``--dask ADDRESS`` refuses an unauthenticated scheduler in one line,
before anything is played, unless ``--insecure`` is given.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import connectx_forge
from connectx_forge.arena.dask_cluster import DaskTarget, dask_client, local_client
from connectx_forge.arena.schedule import executor
from connectx_forge.errors import UserError

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed (pip install -e '.[dask]')")
pytest.importorskip("cryptography", reason="the dask extra's cryptography is not installed")
psutil = pytest.importorskip("psutil")

CXFORGE = str(Path(sys.executable).parent / "cxforge")  # the console script, as a user runs it
STRANGER_S = 3  # how long a stranger's connection may try
# what a worker imports (Dask, its libraries, the toolkit, the games' libraries, modules Python loads late):
# each already imported here, so a folder on this process's path that shadows them changes nothing here
SHADOWS = ("distributed", "dask", "tornado", "msgpack", "cloudpickle", "numpy", "connectx_forge", "agents",
           "multiprocessing", "asyncio", "json", "socket", "ssl", "typing", "ctypes", "signal", "sitecustomize",
           "usercustomize")


def _listening(pids: list[int]) -> set[tuple[int, str, int]]:
    """``(pid, address, port)`` of each socket listening in those processes."""
    out = set()
    for pid in pids:
        try:
            conns = psutil.Process(pid).net_connections(kind="inet")
        except psutil.Error:
            continue
        out |= {(pid, c.laddr.ip, c.laddr.port) for c in conns if c.status == psutil.CONN_LISTEN}
    return out


def _family() -> list[int]:
    me = psutil.Process()
    return [me.pid, *(child.pid for child in me.children(recursive=True))]


def _http_answer(port: int) -> int | None:
    """The status of an HTTP GET of the dashboard's identity page on that port; None when it does not speak
    HTTP (a TLS port hangs up)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/identity.json", timeout=STRANGER_S) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return None


async def _stranger(address: str, security: Any) -> BaseException | None:
    """A stranger's attempt to talk to a Dask server at ``address``: the error, or None if it got through."""
    from distributed.comm import connect

    args = {} if security is None else security.get_connection_args("client")
    try:
        comm = await connect(address, timeout=STRANGER_S, **args)
    except Exception as exc:  # refused, handshake failed, timed out
        return exc
    await comm.close()
    return None


def test_a_local_cluster_listens_on_loopback_over_tls_and_turns_strangers_away() -> None:
    before = _listening([os.getpid()])
    with local_client(1) as client:
        scheduler = client.scheduler.address
        workers = list(client.scheduler_info()["workers"])
        opened = _listening(_family()) - before
        assert scheduler.startswith("tls://127.0.0.1:") and workers
        assert all(w.startswith("tls://127.0.0.1:") for w in workers), workers
        assert opened and {ip for _, ip, _ in opened} == {"127.0.0.1"}, opened  # nothing on 0.0.0.0 or ::
        # a stranger: plain TCP, TLS without credentials, TLS with credentials of their own; none gets through
        plain = [address.replace("tls://", "tcp://") for address in [scheduler, *workers]]
        own = distributed.Security.temporary()
        attempts = [*(_stranger(a, None) for a in plain), *(_stranger(a, own) for a in [scheduler, *workers])]

        async def every() -> list[BaseException | None]:
            return list(await asyncio.gather(*attempts))

        assert all(error is not None for error in asyncio.run(every()))
        # no dashboard: the HTTP servers Dask starts anyway answer no route
        answers = {port: _http_answer(port) for _, _, port in opened}
        assert all(answer in (None, 404) for answer in answers.values()), answers
        assert client.submit(sum, [1, 2]).result(timeout=30) == 3  # the run's own client gets through
        # the key is not left in the workers' environment, for whatever they start (a game's process) to inherit
        leaked = client.submit(os.getenv, "DASK_DISTRIBUTED__COMM__TLS__WORKER__KEY", pure=False)
        assert leaked.result(timeout=30) is None


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The markers' folder; the working folder, also first on this process's import path (as a notebook's
    is), holds a package for each of ``SHADOWS`` that writes its marker there and fails its import."""
    assert all(name in sys.modules for name in SHADOWS if not name.endswith("customize"))
    folder, markers = tmp_path / "work", tmp_path / "markers"
    markers.mkdir()
    for name in SHADOWS:
        package = folder / name
        package.mkdir(parents=True)
        (package / "__init__.py").write_text(
            f"open({str(markers / name)!r}, 'w').close()\nraise ImportError('imported from the working folder')\n")
    monkeypatch.chdir(folder)
    monkeypatch.syspath_prepend(str(folder))
    yield markers


def test_local_workers_import_nothing_from_the_working_folder(hostile: Path) -> None:
    with executor(1, "local") as workers:
        modules = "import " + ", ".join(name for name in SHADOWS if not name.endswith("customize"))
        assert workers.executor.submit(exec, modules).result(timeout=60) is None
    assert sorted(p.name for p in hostile.iterdir()) == []


def test_an_unauthenticated_scheduler_is_refused_in_one_line_before_anything_is_played(tmp_path: Path) -> None:
    store = tmp_path / "run.sqlite"
    out = subprocess.run([CXFORGE, "tournament", "random", "leftmost", "--openings", "1", "--store", str(store),
                          "--dask", "tcp://127.0.0.1:1"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and "unauthenticated" in out.stderr, out.stderr
    assert not store.exists()
    with pytest.raises(UserError, match="unauthenticated"):  # the notebook's API: the same check
        connectx_forge.tournament(["random", "leftmost"], openings=1, dask="127.0.0.1:8786")
    assert DaskTarget("tcp://127.0.0.1:1", insecure=True).insecure  # --insecure lets it through
    with pytest.raises(UserError, match="--tls"):  # tls:// without credentials: refused, not tried
        with dask_client(DaskTarget("tls://127.0.0.1:1"), 1):
            pass


def test_a_remote_scheduler_is_reached_with_its_tls_files_or_insecurely_on_purpose(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cluster_side = distributed.Security.temporary()
    files = []
    for name, pem in (("ca.pem", cluster_side.tls_ca_file), ("cert.pem", cluster_side.tls_client_cert),
                      ("key.pem", cluster_side.tls_client_key)):
        (tmp_path / name).write_text(pem)
        files.append(str(tmp_path / name))
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tls://", host="127.0.0.1",
                                  security=cluster_side, dashboard_address=None) as cluster:
        with dask_client(DaskTarget(cluster.scheduler_address, tls=(files[0], files[1], files[2])), 1) as client:
            assert client.scheduler_info()["address"] == cluster.scheduler_address
    assert capsys.readouterr().err == ""
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp://", host="127.0.0.1",
                                  dashboard_address=None) as plain:
        with dask_client(DaskTarget(plain.scheduler_address, insecure=True), 1) as client:
            assert client.scheduler_info()["address"] == plain.scheduler_address
    warning = capsys.readouterr().err.strip().splitlines()
    assert len(warning) == 1 and "unauthenticated" in warning[0]
