"""Zarr arrays for winnow.dask: the provisional labels' store, the output written under a
temporary name beside the target and renamed into place (no half-written output survives a
failure), and the chunk checks zarr needs (zarr chunks are regular: every chunk of an axis the
same size but the last). Works with zarr 2 and zarr 3 (the calls used are common to both)."""

from __future__ import annotations

import os
import shutil
import time
import uuid
from pathlib import Path
from typing import Any, Optional

import numpy as np


def regular_chunks(chunks: tuple) -> Optional[tuple]:
    """Each axis's chunk size when the chunks are regular (zarr's grid), else None."""
    sizes = []
    for axis in chunks:
        first = axis[0] if axis else 0
        if any(c != first for c in axis[:-1]) or (axis and axis[-1] > first):
            return None
        sizes.append(max(int(first), 1))
    return tuple(sizes)


def require_regular_chunks(chunks: tuple, what: str) -> tuple:
    sizes = regular_chunks(chunks)
    if sizes is None:
        raise ValueError(f"{what}: zarr needs regular chunks (all of an axis equal but the last, which may be "
                         f"smaller), got {chunks}; rechunk the array first")
    return sizes


COMPRESSIONS = ("lz4", "zstd", "none")


def _blosc(cname: str, zarr3: bool) -> Any:
    """Blosc with byte shuffle (equal high bytes of neighbouring labels compress): lz4 at level 5
    (a label chunk in a few ms, both ways) or zstd at level 3 (smaller, several times slower)."""
    level = 5 if cname == "lz4" else 3
    if zarr3:
        from zarr.codecs import BloscCodec

        return BloscCodec(cname=cname, clevel=level, shuffle="shuffle")
    from numcodecs import Blosc

    return Blosc(cname=cname, clevel=level, shuffle=Blosc.SHUFFLE)


def create_array(path: Any, shape: tuple, chunks: tuple, dtype: Any, compression: str = "lz4") -> Any:
    """A new zarr array at path (an error if something is there), zero-filled, its chunks
    compressed by Blosc (lz4 or zstd) or not at all ("none"). Every chunk is written as given:
    zarr would otherwise compare each chunk with the fill value first, on its one event-loop
    thread in zarr 3 (a pass over the chunk, one chunk after another whatever the workers: a third
    of label_to_zarr's time on two threads), to leave out chunks of zeros; the labeling leaves
    those out itself."""
    import zarr

    if compression not in COMPRESSIONS:
        raise ValueError(f"compression: expected one of {', '.join(COMPRESSIONS)}, got {compression!r}")
    dtype = np.dtype(dtype)
    zarr3 = hasattr(zarr, "create_array")
    codec = None if compression == "none" else _blosc(compression, zarr3)
    if zarr3:
        return zarr.create_array(store=str(path), shape=shape, chunks=chunks, dtype=dtype, fill_value=0,
                                 compressors=codec, config={"write_empty_chunks": True})
    return zarr.open_array(store=str(path), mode="w-", shape=shape, chunks=chunks, dtype=dtype, fill_value=0,
                           compressor=codec, write_empty_chunks=True)


class ChunkFiles:
    """label_to_zarr's provisional labels: one file per chunk in a private folder, compressed as
    create_array's default (Blosc lz4, byte shuffle), read and written by the thread that calls.
    Not zarr, because nothing outside the labeling reads it, and zarr 3 passes every chunk through
    one event-loop thread (about 10 ms a chunk beside 2 ms of compression, measured: the worker
    threads queue there). Indexed by a chunk's region (slices with their starts and stops), as
    the labeling reads and writes a zarr array; a chunk never written reads as zeros."""

    def __init__(self, folder: Any, dtype: Any) -> None:
        self.folder = Path(folder)
        self.dtype = np.dtype(dtype)
        self.folder.mkdir()

    def _path(self, region: tuple) -> Path:
        return self.folder / ".".join(str(s.start or 0) for s in region)

    @staticmethod
    def _codec() -> Any:
        return _blosc("lz4", zarr3=False)  # numcodecs' Blosc, create_array's default settings

    def __setitem__(self, region: tuple, data: Any) -> None:
        encoded = self._codec().encode(np.ascontiguousarray(data, dtype=self.dtype))
        try:
            self._path(region).write_bytes(encoded)
        except FileNotFoundError:
            pass  # the folder is gone: the labeling failed elsewhere and removed it (see write)

    def __getitem__(self, region: tuple) -> np.ndarray:
        shape = tuple(s.stop - (s.start or 0) for s in region)
        path = self._path(region)
        if not path.exists():
            return np.zeros(shape, self.dtype)
        chunk = np.empty(shape, self.dtype)  # writable: the relabeling may write into it
        self._codec().decode(path.read_bytes(), out=chunk)
        return chunk


def check_array(array: Any, shape: tuple, chunks: tuple, what: str) -> None:
    """A caller's zarr array for the provisional labels: the input's shape and chunks, integers
    of at least 32 bits."""
    if tuple(array.shape) != tuple(shape):
        raise ValueError(f"{what}: expected the input's shape {tuple(shape)}, got {tuple(array.shape)}")
    if tuple(array.chunks) != tuple(chunks):
        raise ValueError(f"{what}: expected the input's chunks {tuple(chunks)}, got {tuple(array.chunks)}")
    dtype = np.dtype(array.dtype)
    if dtype.kind not in "iu" or dtype.itemsize < 4:
        raise TypeError(f"{what}: expected integers of 32 or 64 bits, got {dtype}")


def temporary_beside(path: Path) -> Path:
    """A name in path's folder for the output while it is written (as the C++ CLI names its)."""
    return path.parent / f".winnow-{os.getpid()}-{uuid.uuid4().hex[:12]}.tmp"


def _remove_once(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink()


def remove(path: Path, settle: float = 0.0) -> None:
    """Removes path; with `settle` (seconds), removes it again after that long: a computation that
    failed may still have tasks in flight that wrote a chunk into it (they write only while the
    array is there, see write, but one may have looked just before the first removal)."""
    _remove_once(path)
    if settle > 0:
        time.sleep(settle)
        _remove_once(path)


def _folder(array: Any) -> Optional[Path]:
    """The folder of a ChunkFiles store or of a zarr array on a local disk (zarr 3's LocalStore,
    zarr 2's DirectoryStore)."""
    if isinstance(array, ChunkFiles):
        return array.folder
    store_path = getattr(array, "store_path", None)
    if store_path is not None and hasattr(store_path.store, "root"):
        return Path(store_path.store.root) / store_path.path
    store = getattr(array, "store", None)
    return Path(store.path) if hasattr(store, "path") and isinstance(store.path, (str, os.PathLike)) else None


def write(array: Any, region: tuple, data: Any) -> None:
    """array[region] = data, unless the array's folder is gone: the labeling failed elsewhere and
    its temporary arrays were removed (a write would make their folder again)."""
    folder = _folder(array)
    if folder is not None and not folder.exists():
        return
    array[region] = data


def move_into_place(temporary: Path, path: Path, overwrite: bool) -> None:
    """Renames the finished output over path (what was there, with overwrite, removed after)."""
    if path.exists() or path.is_symlink():
        if not overwrite:
            raise FileExistsError(f"{path}: exists (pass overwrite to replace it)")
        old = temporary_beside(path)
        os.replace(path, old)
        os.replace(temporary, path)
        remove(old)
    else:
        os.replace(temporary, path)
