"""Dask with locks: the cluster ``--dask local`` starts, and the checks on a scheduler ``--dask ADDRESS`` names.

Whoever can talk to a Dask scheduler runs code on its workers, and a client
unpickles what the scheduler sends back; so a Dask port is a way into the user's
account.  Hence:

* ``--dask local`` starts a cluster that listens on 127.0.0.1 only, over TLS with a
  key and certificate made for this run (distributed's ``Security.temporary()``):
  the scheduler and the workers accept only a peer holding them, which only this
  process and its workers do.  No dashboard, unless asked for (``--dashboard``),
  and then on 127.0.0.1; without it the HTTP servers Dask always starts serve no
  route.  Each worker is a Python started isolated (``-I``) in an empty private
  folder: nothing in the user's working folder (a ``numpy.py``, a ``distributed/``)
  is ever imported there.
* ``--dask tls://HOST:PORT`` needs the cluster's CA and a client certificate and
  key (``--tls CA,CERT,KEY``, or Dask's own ``distributed.comm.tls`` config).
* any other address (``tcp://``, no scheme) is unauthenticated and unencrypted:
  refused in one line unless ``--insecure`` is given, and then warned of.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Protocol

from connectx_forge.children import isolated_python
from connectx_forge.errors import UserError

if TYPE_CHECKING:  # an optional package (the dask extra)
    from distributed import Client, Security

LOCAL = "local"
SECURE_SCHEMES = ("tls", "wss")  # the schemes Dask runs over TLS, where both ends show a certificate
DASK_INSTALL = "pip install -e '.[dask]' (or pip install 'distributed>=2024.1' cryptography)"
WORKER_START_S = 60  # how long the local workers have to connect
CONNECT_S = 30  # how long a remote scheduler has to answer
TLS_ENV = "DASK_DISTRIBUTED__COMM__TLS__"  # Dask's config of its TLS credentials, as environment variables
WORKER_STOP_S = 5  # how long a local worker has to stop when told, before it is killed


@dataclass(frozen=True)
class DaskTarget:
    """Where a run's games go on Dask, and the locks on it: ``address`` (``"local"``, or a scheduler's
    address), ``tls`` (the CA, certificate and key files for a ``tls://`` scheduler: ``--tls``),
    ``insecure`` (``--insecure``: let an unauthenticated ``tcp://`` scheduler through) and ``dashboard``
    (``--dashboard``: the local cluster's dashboard, on 127.0.0.1).

    Checked as it is made (``UserError``, one line), so a refused target stops a run before anything is
    played.
    """

    address: str
    tls: tuple[str, str, str] | None = None
    insecure: bool = False
    dashboard: bool = False

    def __post_init__(self) -> None:
        if self.address == LOCAL:
            _check_local(self)
        else:
            _check_remote(self)

    @property
    def secure(self) -> bool:
        """Whether the scheduler is reached over TLS (a ``tls://`` or ``wss://`` address)."""
        return scheme_of(self.address) in SECURE_SCHEMES


def scheme_of(address: str) -> str:
    """The scheme of a Dask address (``tcp`` when it names none, as Dask assumes)."""
    return address.split("://", 1)[0].lower() if "://" in address else "tcp"


def _check_local(target: DaskTarget) -> None:
    if target.tls is not None:
        raise UserError("--tls is for a tls:// scheduler: --dask local makes its own credentials")
    if target.insecure:
        raise UserError("--insecure is for a tcp:// scheduler: --dask local always runs over TLS on 127.0.0.1")


def _check_remote(target: DaskTarget) -> None:
    if not target.address.strip():
        raise UserError("--dask needs a scheduler's address (tls://HOST:8786) or local")
    if target.dashboard:
        raise UserError("--dashboard is for --dask local: a running cluster's dashboard is its own")
    if target.secure:
        if target.insecure:
            raise UserError(f"--insecure is for a tcp:// scheduler, not {target.address}")
        if target.tls is None and not _configured_tls():
            raise UserError(f"{target.address} needs the cluster's credentials: --tls CA,CERT,KEY (or "
                            "distributed.comm.tls.ca-file and .client.cert/.client.key in Dask's config)")
        for path in target.tls or ():
            if not Path(path).is_file():
                raise UserError(f"--tls: no such file: {path}")
        return
    if target.tls is not None:
        raise UserError(f"--tls needs a tls:// scheduler address, not {target.address}")
    if not target.insecure:
        raise UserError(f"refusing the unauthenticated Dask scheduler {target.address}: whoever reaches it runs "
                        "code as you; give tls://HOST:PORT with --tls CA,CERT,KEY, or --insecure to accept "
                        "the risk")


def _configured_tls() -> bool:
    """Whether Dask's own config names a CA and a client certificate (``distributed.comm.tls``)."""
    _distributed()
    import dask

    return bool(dask.config.get("distributed.comm.tls.ca-file", None)
                and dask.config.get("distributed.comm.tls.client.cert", None))


def tls_files(given: str | Sequence[str]) -> tuple[str, str, str]:
    """``--tls CA,CERT,KEY`` (or the API's ``tls``, a string so or three paths): the three paths
    (``UserError`` unless there are three)."""
    parts = [str(part).strip() for part in (given.split(",") if isinstance(given, str) else given)]
    if len(parts) != 3 or not all(parts):
        raise UserError(f"--tls takes CA,CERT,KEY (three files, comma-separated), not {given!r}")
    return parts[0], parts[1], parts[2]


def dask_target(address: str | DaskTarget | None, tls: str | Sequence[str] | None = None, insecure: bool = False,
                dashboard: bool = False) -> DaskTarget | None:
    """A run's Dask target from the flags (``--dask``, ``--tls``, ``--insecure``, ``--dashboard``)
    or the API's keywords of the same names, checked (one line); None without an address (and no lock)."""
    if address is None:
        if tls is not None or insecure or dashboard:
            raise UserError("--tls, --dashboard and --insecure go with --dask")
        return None
    if isinstance(address, DaskTarget):
        return address
    return DaskTarget(address, None if tls is None else tls_files(tls), bool(insecure), bool(dashboard))


def _distributed() -> ModuleType:
    """Dask's ``distributed`` package; ``UserError`` (how to install it) where it is not installed."""
    try:
        import distributed
    except ImportError:
        raise UserError(f"--dask needs Dask's distributed package, which is not installed: {DASK_INSTALL}") from None
    return distributed


@contextmanager
def dask_client(target: DaskTarget, workers: int) -> Iterator[Client]:
    """A ``distributed.Client`` on ``target``: a local cluster of ``workers`` isolated processes (closed on
    the way out), or the scheduler at its address with its security; ``UserError`` when it cannot be had."""
    if target.address == LOCAL:
        with local_client(workers, target.dashboard) as client:
            yield client
        return
    distributed = _distributed()
    security = _remote_security(target, distributed)
    if not target.secure:
        print(f"cxforge: warning: --insecure: {target.address} is unauthenticated and unencrypted; whoever can "
              "reach it can run code on its workers and in this process", file=sys.stderr)
    try:
        client = distributed.Client(target.address, timeout=CONNECT_S, security=security)
    except (OSError, ValueError, TypeError) as exc:  # unreachable (a timeout is an OSError), refused, no address
        raise UserError(f"cannot reach the Dask scheduler at {target.address}: {exc}") from None
    try:
        yield client
    finally:
        client.close()


def _remote_security(target: DaskTarget, distributed: ModuleType) -> Security | None:
    """The ``Security`` a remote scheduler is reached with: ``--tls``'s files, else Dask's config."""
    if not target.secure:
        return None
    if target.tls is not None:
        ca, cert, key = target.tls
        files: Security = distributed.Security(tls_ca_file=ca, tls_client_cert=cert, tls_client_key=key,
                                               require_encryption=True)
        return files
    config: Security = distributed.Security(require_encryption=True)
    return config


@contextmanager
def local_client(workers: int, dashboard: bool = False) -> Iterator[Client]:
    """A client of a fresh local cluster (``--dask local``): the scheduler in this process, ``workers``
    isolated worker processes, all on 127.0.0.1 over TLS with credentials made now (see the module)."""
    distributed = _distributed()
    import dask

    try:
        security = distributed.Security.temporary()
    except ImportError:
        raise UserError(f"--dask local needs the cryptography package for its TLS credentials: {DASK_INSTALL}") \
            from None
    scheduler = {"cls": distributed.Scheduler,
                 "options": {"host": "127.0.0.1", "protocol": "tls://", "security": security, "dashboard": dashboard,
                             "dashboard_address": "127.0.0.1:0" if dashboard else None}}
    with tempfile.TemporaryDirectory(prefix="cxforge-dask-") as folder, \
            dask.config.set({"temporary-directory": folder, **_no_routes(dashboard, "scheduler")}):
        spec = {i: {"cls": _worker_class(), "options": {"security": security, "folder": folder,
                                                       "dashboard": dashboard}} for i in range(workers)}
        with distributed.SpecCluster(workers=spec, scheduler=scheduler, security=security,
                                     silence_logs=logging.WARN) as cluster, distributed.Client(cluster) as client:
            try:
                client.wait_for_workers(workers, timeout=WORKER_START_S)
            except TimeoutError:
                raise UserError(f"--dask local: its {workers} worker(s) did not start within {WORKER_START_S} s "
                                "(see the messages above)") from None
            if dashboard:
                print(f"cxforge: Dask dashboard: {cluster.dashboard_link}", file=sys.stderr)
            yield client


def _no_routes(dashboard: bool, role: str) -> dict[str, object]:
    """Dask's config for ``role``'s HTTP server (which Dask always starts): no route without the dashboard,
    so that it tells another local user nothing (no /info, /json, /metrics)."""
    return {} if dashboard else {f"distributed.{role}.http.routes": []}


class WorkerCredentials(Protocol):
    """What a local worker is given of the cluster's ``distributed.Security``: its TLS credentials (PEM text, as
    ``Security.temporary`` makes them)."""

    tls_ca_file: str
    tls_worker_cert: str
    tls_worker_key: str


def worker_environment(security: WorkerCredentials, folder: str, dashboard: bool) -> dict[str, str]:
    """The environment of a local worker: this one, with Dask's config set to the run's TLS credentials
    (never written to a file here; a process's environment is readable by its user only, and the worker
    takes them out of its own once read: ``_worker_command``), its scratch space in
    ``folder`` (Dask puts it on the worker's import path: never a shared ``/tmp/dask-scratch-space``), no
    HTTP route without the dashboard, and quiet logs."""
    env = dict(os.environ)
    env.update({"DASK_TEMPORARY_DIRECTORY": folder,
                "DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True",
                f"{TLS_ENV}CA_FILE": security.tls_ca_file,
                f"{TLS_ENV}WORKER__CERT": security.tls_worker_cert,
                f"{TLS_ENV}WORKER__KEY": security.tls_worker_key,
                "DASK_LOGGING__DISTRIBUTED": "error"})
    if not dashboard:
        env["DASK_DISTRIBUTED__WORKER__HTTP__ROUTES"] = "[]"
    return env


def _worker_command(parent: int, scheduler: str, name: str) -> list[str]:
    """A local worker's command line: an isolated Python (``-I``: no working folder, user site or
    ``PYTHON*``) that dies with ``parent`` and runs one Dask ``Nanny`` on 127.0.0.1, with the scheduler's
    protocol (TLS): it starts a worker of one thread (its child, isolated too: multiprocessing passes ``-I``
    on, and the nanny hands it Dask's config) and restarts it if it dies.  The credentials leave the
    environment once Dask has read it, so that nothing the worker starts (a game's process) inherits them."""
    spec = json.dumps({"cls": "distributed.Nanny", "opts": {"name": name, "nthreads": 1, "host": "127.0.0.1"}})
    code = (f"import os, signal; from connectx_forge.sandbox.limits import die_with_parent; "
            f"die_with_parent(signal.SIGKILL, {parent}); "
            f"import distributed; [os.environ.pop(k) for k in list(os.environ) if k.startswith({TLS_ENV!r})]; "
            "from distributed.cli.dask_spec import main; main()")
    return [*isolated_python(), "-c", code, scheduler, "--spec", spec]


@functools.cache
def _worker_class() -> type:
    """``IsolatedWorker``: one local worker, as ``SpecCluster`` starts it (a class made on first use, since
    its base is Dask's, an optional package)."""
    from distributed.deploy.spec import ProcessInterface

    class IsolatedWorker(ProcessInterface):
        """``_worker_command`` run in ``folder`` (a private, empty one), in a session of its own (the
        terminal's Ctrl-C is this process's to handle), stopped on close."""

        def __init__(self, scheduler: str, name: str, security: WorkerCredentials, folder: str,
                     dashboard: bool) -> None:
            super().__init__()
            self.scheduler, self.name, self.folder = scheduler, str(name), folder
            self.env = worker_environment(security, folder, dashboard)
            self.process: asyncio.subprocess.Process | None = None

        async def start(self) -> None:
            self.process = await asyncio.create_subprocess_exec(
                *_worker_command(os.getpid(), self.scheduler, self.name), cwd=self.folder, env=self.env,
                stdin=asyncio.subprocess.DEVNULL, start_new_session=True)
            await super().start()

        async def close(self) -> None:
            if self.process is not None and self.process.returncode is None:
                self.process.terminate()  # its nanny closes its worker, then exits
                try:
                    await asyncio.wait_for(self.process.wait(), WORKER_STOP_S)
                except TimeoutError:
                    self.process.kill()
                    await self.process.wait()
            self.process = None
            await super().close()

    return IsolatedWorker
