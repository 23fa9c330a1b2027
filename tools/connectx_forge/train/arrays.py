"""Zips of numpy arrays (a checkpoint's tensors, an ``.npz`` weight file) read within bounds, never by size alone.

numpy sizes an array by its header: ``np.load`` of a member whose header claims 10^12 elements allocates for
them before it finds the bytes missing, and a zip member may unpack to far more than its file.  So a zip is
judged whole before any member is unpacked (at most ``max_members`` members, their declared sizes at most
``max_bytes`` in all: zipfile stops each member at its declared size), and each ``.npy`` member is read by
``array``: its header must name a dtype of plain numbers (bool, int, uint, float: never an object, a structure,
a string) and describe exactly the bytes that follow it.  ``checkpoint.py`` reads its tensors so, and ``train
--init`` its weight file (``read_npz``) before the agent's loader sees it.  Every refusal is one line naming the
file (``UserError``) or a ``ValueError`` saying why, for the caller's line.
"""

from __future__ import annotations

import io
import math
import zipfile

import numpy as np

from connectx_forge.errors import UserError

NUMBERS = "biuf"  # the numpy kinds an array may have: bool, int, unsigned int, float


def members(zf: zipfile.ZipFile, name: str, what: str, max_members: int, max_bytes: int) -> set[str]:
    """The members' names (each once), refused in one line naming ``name`` (``what`` it is) when there are more
    than ``max_members`` or they unpack to more than ``max_bytes``, judged before any is unpacked."""
    infos = zf.infolist()
    if len(infos) > max_members:
        raise UserError(f"{name}: more than {max_members:,} members, the most {what} may hold")
    if sum(info.file_size for info in infos) > max_bytes:
        raise UserError(f"{name}: its members unpack to more than {max_bytes >> 20} MiB, the most {what} may hold")
    names = [info.filename for info in infos]
    if len(set(names)) != len(names):
        raise ValueError("a member named twice")
    return set(names)


def member(zf: zipfile.ZipFile, member_name: str, name: str, max_bytes: int) -> bytes:
    """A member's bytes, at most its declared size (zipfile stops there) and ``max_bytes``."""
    with zf.open(member_name) as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise UserError(f"{name}: member {member_name} is larger than {max_bytes >> 20} MiB")
    return data


def array(data: bytes, member_name: str) -> np.ndarray:
    """The ``.npy`` bytes ``data`` as an array in native byte order; ``ValueError`` (naming ``member_name``) for
    a header that names no dtype of plain numbers or does not describe exactly the bytes after it."""
    fh = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(fh)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read_header(fh)
    except ValueError as exc:
        raise ValueError(f"{member_name}: {' '.join(str(exc).split())[:80]}") from None
    if dtype.hasobject or dtype.kind not in NUMBERS or dtype.fields is not None or dtype.subdtype is not None:
        raise ValueError(f"{member_name}: an array of {str(dtype)[:40]}, not of plain numbers")
    body = fh.read()
    if math.prod(shape) * dtype.itemsize != len(body):
        raise ValueError(f"{member_name}: its header does not describe its {len(body)} bytes")
    found = np.frombuffer(body, dtype=dtype).reshape(shape, order="F" if fortran else "C")
    return found.astype(dtype.newbyteorder("="), order="C")  # a copy, in native order


def read_npz(data: bytes, name: str, max_members: int, max_bytes: int) -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` bytes ``data`` (``np.savez``'s zip of ``<key>.npy``), by key, read as this
    module says; ``UserError`` naming ``name`` for a bound, ``ValueError`` for a member that is no array."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = members(zf, name, "a weight file", max_members, max_bytes)
            if not all(n.endswith(".npy") for n in names):
                raise ValueError("a member that is not a .npy array")
            return {n[:-len(".npy")]: array(member(zf, n, name, max_bytes), n) for n in sorted(names)}
    except (zipfile.BadZipFile, EOFError, NotImplementedError, RuntimeError) as exc:
        raise ValueError(f"not a readable .npz ({type(exc).__name__})") from None
