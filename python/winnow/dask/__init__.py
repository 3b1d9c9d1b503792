"""Connected-component labeling and isosurfaces of chunked arrays on Dask: the labels, N and
statistics of ``winnow.label`` and the mesh of ``winnow.marching_cubes`` on the whole array, for
arrays no single call can hold (zarr / N5 volumes of 10^10 voxels and more), on the threaded
scheduler, processes or a ``dask.distributed`` cluster.

- ``label(darr, connectivity, ...)`` -> (labels, N[, statistics]): labels a lazy dask array.
- ``label_to_zarr(darr, path, ...)`` -> N[, statistics]: labels into a zarr array on disk, each
  worker holding a few chunks at a time (``python -m winnow label big.zarr --out-labels
  labels.zarr`` from a shell).
- ``marching_cubes(darr, level, ...)`` -> (verts, faces, normals, values): one welded, watertight
  mesh, the whole call's vertices and triangles (src: _meshing.py says how).

The labeling:

Needs the ``dask`` extra: ``pip install 'winnow[dask]'`` (dask[array], distributed, zarr).

How (each chunk is labelled once):

1. Every chunk is labelled by ``winnow.label`` (NumPy chunks on the CPU, CuPy chunks on their
   GPU), and in the same task summarised: per label its first voxel in raster order, its voxel
   count and, for statistics, its box and exact integer coordinate sums; its faces shared with
   other chunks are kept (labels, and values for multi-label input). The provisional labels
   stay in the workers' memory (``label``) or go to a zarr array (``store=``, ``label_to_zarr``).
2. Each pair of neighbouring chunks (faces; edges and corners too for 18- and 26-connectivity,
   8 in 2D) gives the distinct label pairs of touching voxels; a union-find over the labels on
   shared faces only (every other label is a component of its own) joins them. Each component
   is numbered as one call on the whole array numbers it, by the raster order of its first voxel,
   from per-row counts of first voxels (no sort of all components); min_area and largest_k are
   decided on the merged counts, with ``winnow.label``'s tie rule; statistics add the chunks'
   exact sums. Each chunk gets its own small table, local label -> final label.
3. Each chunk's provisional labels go through its table (lazily for ``label``; in place in the
   store for ``label_to_zarr``).

Stages 1 and 2 run when ``label`` is called (N is an int when it returns); the labels are a lazy
array that reads the persisted provisional labels and relabels them chunk by chunk, as often as
it is computed. Memory: the provisional labels in memory (``label`` without ``store``) cost as
much as the labels -- for CuPy chunks, in the workers' device memory (4 bytes a voxel of each
worker's chunks: a 2048^3 volume does not fit one 80 GB card, and fits two); with a store, a
worker holds the chunks it works on, the faces of its chunks and per-label summaries (8 bytes a
label; 16 with min_area or largest_k, 88 with statistics).

Labels are uint32, uint64 when the array has 2^32 voxels or more. Schedulers: whatever dask
uses (``dask.config.set(scheduler=...)``, or a ``distributed.Client``). CuPy chunks on
``dask.distributed``: one worker per GPU (e.g. dask-cuda's ``LocalCUDACluster``), one thread each.
A progress bar is drawn on a terminal (dask.diagnostics' for local schedulers, distributed's
otherwise) unless ``progress=False``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Optional

try:
    import dask.array as da
except ImportError as error:  # pragma: no cover - the extra is not installed
    raise ImportError("winnow.dask needs dask: pip install 'winnow[dask]' (dask[array], distributed, zarr)") from error
import numpy as np

from ..labeling import _non_negative_int
from . import _graph, _stores
from ._chunks import Plan
from ._merge import _empty_statistics
from ._meshing import marching_cubes

__all__ = ["label", "label_to_zarr", "marching_cubes"]

CONNECTIVITIES = {2: (4, 8), 3: (6, 18, 26)}  # what each dimension takes

_WIDE = 2**32  # arrays with at least this many voxels get uint64 labels


def _checked(darr: Any, connectivity: Optional[int], min_area: Any, largest_k: Any) -> tuple:
    """(darr as 3D, connectivity as a volume's, ndim, min_area, largest_k), or the error."""
    if not isinstance(darr, da.Array):
        raise TypeError(
            f"darr: expected a dask array (dask.array.from_array, from_zarr ...), got {type(darr).__name__}")
    ndim = darr.ndim
    if ndim not in CONNECTIVITIES:
        raise ValueError(f"darr: expected a 2D image or a 3D volume, got {ndim} dimensions")
    if connectivity is None:
        connectivity = CONNECTIVITIES[ndim][-1]
    if isinstance(connectivity, bool) or connectivity not in CONNECTIVITIES[ndim]:
        expected = " or ".join(str(c) for c in CONNECTIVITIES[ndim])
        raise ValueError(f"connectivity: expected {expected} for a {ndim}D array, got {connectivity!r}")
    dtype = np.dtype(darr.dtype)
    if dtype.hasobject or dtype.kind not in "biuf":
        raise TypeError(f"darr: expected a bool or numeric dtype, got {dtype}")
    if any(np.isnan(c) for axis in darr.chunks for c in axis):
        raise ValueError("darr: chunk sizes unknown (NaN); call darr.compute_chunk_sizes() first")
    min_area = _non_negative_int(min_area, "min_area")
    largest_k = _non_negative_int(largest_k, "largest_k")
    volume = darr if ndim == 3 else darr[None]
    return volume, {4: 6, 8: 26}.get(connectivity, connectivity), ndim, min_area, largest_k


def _show(progress: Optional[bool]) -> bool:
    return sys.stderr.isatty() if progress is None else bool(progress)


def _output_dtype(shape: tuple) -> np.dtype:
    return np.dtype(np.uint64 if int(np.prod(shape, dtype=object)) >= _WIDE else np.uint32)


def _provisional_dtype(chunks: tuple) -> np.dtype:
    """A chunk's labels need 64 bits only when the chunk has 2^32 voxels or more."""
    largest = int(np.prod([max(axis) for axis in chunks], dtype=object))
    return np.dtype(np.uint64 if largest >= _WIDE else np.uint32)


def _plan(volume: da.Array, connectivity: int, multilabel: bool, min_area: int, largest_k: int, stats: bool,
          values: bool, store: Any, ndim: int) -> Plan:
    binary = np.dtype(volume.dtype).kind == "b" or not multilabel
    chunks = sum(1 for _ in _graph.Grid.of(volume.chunks).positions())
    return Plan(connectivity, not binary, min_area, largest_k, bool(stats), bool(values and stats and not binary),
                _graph.cpu_threads_per_chunk(chunks), store, ndim)


def label(darr: Any, connectivity: Optional[int] = None, *, multilabel: bool = True, min_area: int = 0,
          largest_k: int = 0, stats: bool = False, store: Any = None, progress: Optional[bool] = None) -> tuple:
    """Labels the connected components of a chunked 2D image or 3D volume, as ``winnow.label``
    labels the whole array in one call: the same labels, N and statistics.

    Each chunk is labelled once (NumPy chunks on the CPU, CuPy chunks on their GPU); the chunks
    are joined across their faces, edges and corners, and numbered by the raster order of each
    component's first voxel, as scipy.ndimage.label and cc3d number them. The joining runs now,
    on the current dask scheduler; the labels returned are lazy and relabel the provisional
    labels chunk by chunk when computed.

    Parameters
    ----------
    darr : dask.array.Array
        2D or 3D; bool, integer or floating-point; NumPy or CuPy chunks, any chunking (uneven,
        one voxel thick, chunks without voxels).
    connectivity : int, optional
        4 or 8 for 2D, 6, 18 or 26 for 3D (default: 8 / 26).
    multilabel : bool, default True
        Neighbours join only when their values are equal and non-zero (cc3d's rule); False: every
        non-zero value is foreground. Irrelevant for bool input.
    min_area : int, default 0
        Components of fewer voxels are removed (cc3d's ``dust``), across chunks.
    largest_k : int, default 0
        Keep only the k largest components (after min_area; ties to the one whose first voxel
        comes first); 0 keeps all. The survivors are renumbered in raster order.
    stats : bool, default False
        Also return the statistics of the labels (``winnow.statistics``' fields: voxel_counts,
        bounding_boxes, centroids), from the chunks' exact integer sums.
    store : str, os.PathLike or zarr.Array, optional
        Where the provisional labels wait between the stages: a path for a new zarr array (it must
        not exist; Blosc lz4, fast both ways), or a zarr array of the input's shape and chunks (32-
        or 64-bit integers). The labels returned read it, so keep it until they are
        computed or written, then delete it. Default: in the cluster's memory (as much memory as
        the labels). Needs regular chunks.
    progress : bool, optional
        Show a progress bar (default: when standard error is a terminal).

    Returns
    -------
    labels : dask.array.Array
        uint32 (uint64 for 2^32 voxels or more), darr's shape, chunks and array type.
    N : int
        The number of components (after min_area and largest_k).
    statistics : dict
        With ``stats``: ``voxel_counts``, ``bounding_boxes``, ``centroids`` of labels 0..N, as
        ``winnow.label(..., stats=True)`` gives them.

    Raises
    ------
    FileExistsError
        store is a path where something exists.
    TypeError
        darr is not a dask array, or has an unsupported dtype; a store array of the wrong dtype.
    ValueError
        A bad dimension count, connectivity, min_area or largest_k; unknown chunk sizes; a store
        with chunks zarr cannot hold or of another shape.

    See Also
    --------
    label_to_zarr : the labels written into a zarr array, memory bounded by a few chunks.
    winnow.label : the same on one array in memory.

    Examples
    --------
    >>> import numpy as np, dask.array as da, winnow, winnow.dask
    >>> a = np.array([[1, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1]], bool)
    >>> labels, n = winnow.dask.label(da.from_array(a, chunks=2), 4, progress=False)
    >>> n, labels.compute().tolist()
    (3, [[1, 0, 2, 2], [1, 0, 0, 2], [0, 3, 0, 2]])
    >>> bool((labels.compute() == winnow.label(a, 4)).all())
    True
    """
    volume, connectivity, ndim, min_area, largest_k = _checked(darr, connectivity, min_area, largest_k)
    dtype = _output_dtype(volume.shape)
    if 0 in volume.shape:
        empty = da.zeros(darr.shape, dtype=dtype, chunks=darr.chunks)
        return (empty, 0, _empty_statistics(ndim)) if stats else (empty, 0)
    zarr_array = None
    if store is not None:
        chunks = _stores.require_regular_chunks(darr.chunks, "store")
        if isinstance(store, (str, Path)) or hasattr(store, "__fspath__"):
            if os.path.lexists(store):
                raise FileExistsError(f"{os.fspath(store)}: exists (the provisional labels need a new array)")
            zarr_array = _stores.create_array(store, darr.shape, chunks, _provisional_dtype(volume.chunks))
        else:
            _stores.check_array(store, darr.shape, chunks, "store")
            zarr_array = store
    plan = _plan(volume, connectivity, multilabel, min_area, largest_k, stats, False, zarr_array, ndim)
    labeling = _graph.run(volume, plan, dtype, _show(progress))
    labels = _graph.labels_array(labeling, volume._meta, dtype)
    if ndim == 2:
        labels = labels[0]
    if stats:
        return labels, labeling.count, labeling.statistics[0]
    return labels, labeling.count


def label_to_zarr(darr: Any, path: Any, connectivity: Optional[int] = None, *, multilabel: bool = True,
                  min_area: int = 0, largest_k: int = 0, stats: bool = False, compression: str = "lz4",
                  overwrite: bool = False, progress: Optional[bool] = None) -> Any:
    """Labels a chunked 2D image or 3D volume into a zarr array on disk, as ``label`` does: the
    labels ``winnow.label`` gives the whole array, each worker holding a few chunks at a time.

    Each chunk is labelled once and its provisional labels written to a temporary folder beside
    path (a Blosc lz4 file per chunk); after the chunks are joined, each chunk is read back, relabelled
    through its table and written to the output. The output is written under a temporary name in
    path's folder and renamed to path when complete: a failure leaves no half-written array, and
    the provisional labels are removed either way.

    Parameters
    ----------
    darr : dask.array.Array
        As for ``label``; its chunks become the output's (regular chunks: zarr's grid), e.g.
        ``dask.array.from_zarr('big.zarr')``.
    path : str or os.PathLike
        The zarr array to write (a local folder; zarr's default format: v3 with zarr 3, v2 with
        zarr 2).
    connectivity, multilabel, min_area, largest_k, stats, progress
        As for ``label``.
    compression : {"lz4", "zstd", "none"}, default "lz4"
        The output's chunks: Blosc with byte shuffle and lz4 (fast: writing costs about what
        labeling does) or zstd (smaller, several times slower to write), or uncompressed.
    overwrite : bool, default False
        Replace what is at path (after the new array is complete).

    Returns
    -------
    N : int
        The number of components.
    statistics : dict
        With ``stats``: (N, statistics), as ``label`` returns them.

    Raises
    ------
    FileExistsError
        path exists and overwrite is False.
    TypeError, ValueError
        As ``label``; ValueError for chunks zarr cannot hold or an unknown compression.

    See Also
    --------
    label : the labels as a lazy dask array.

    Examples
    --------
    >>> import os, tempfile, numpy as np, dask.array as da, zarr, winnow, winnow.dask
    >>> volume = np.random.default_rng(0).random((20, 30, 40)) < 0.3
    >>> out = os.path.join(tempfile.mkdtemp(), "labels.zarr")
    >>> n = winnow.dask.label_to_zarr(da.from_array(volume, chunks=8), out, 6, progress=False)
    >>> bool((zarr.open_array(out, mode="r")[:] == winnow.label(volume, 6)).all())
    True
    """
    n, statistics, _ = _label_to_zarr(darr, path, connectivity, multilabel, min_area, largest_k, stats, False,
                                      compression, overwrite, progress)
    return (n, statistics) if stats else n


def _label_to_zarr(darr: Any, path: Any, connectivity: Optional[int], multilabel: bool, min_area: int,
                   largest_k: int, stats: bool, values: bool, compression: str, overwrite: bool,
                   progress: Optional[bool]) -> tuple:
    """label_to_zarr, also giving each label's value with ``values`` (multi-label statistics)."""
    volume, connectivity, ndim, min_area, largest_k = _checked(darr, connectivity, min_area, largest_k)
    chunks = _stores.require_regular_chunks(darr.chunks, "darr")
    if compression not in _stores.COMPRESSIONS:
        raise ValueError(f"compression: expected one of {', '.join(_stores.COMPRESSIONS)}, got {compression!r}")
    path = Path(path)
    if (path.exists() or path.is_symlink()) and not overwrite:
        raise FileExistsError(f"{path}: exists (pass overwrite to replace it)")
    dtype = _output_dtype(volume.shape)
    temporary, provisional = _stores.temporary_beside(path), _stores.temporary_beside(path)
    try:
        array = _stores.create_array(temporary, darr.shape, chunks, dtype, compression)
        if 0 in volume.shape:
            n, statistics, label_values = 0, _empty_statistics(ndim), None
        else:
            show = _show(progress)
            store = _stores.ChunkFiles(provisional, _provisional_dtype(volume.chunks))
            plan = _plan(volume, connectivity, multilabel, min_area, largest_k, stats, values, store, ndim)
            labeling = _graph.run(volume, plan, dtype, show)
            _graph.relabel_into(labeling, array, show)
            n = labeling.count
            statistics, label_values = labeling.statistics if stats else (None, None)
        _stores.move_into_place(temporary, path, overwrite)
    except BaseException:
        _stores.remove(provisional, settle=0.25)  # tasks still in flight may write once more
        _stores.remove(temporary, settle=0.25)
        raise
    _stores.remove(provisional)
    return n, statistics, label_values
