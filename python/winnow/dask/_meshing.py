"""Marching cubes of chunked arrays on Dask: one welded, watertight mesh of the whole volume, the
same vertices and triangles as ``winnow.marching_cubes`` on the whole array.

How: every chunk is meshed with two voxels of context on each side (``dask.array.overlap``,
nothing beyond the volume's border) by ``winnow::isosurface_piece`` (src/isosurface/piece.cpp
says why that gives the whole volume's positions, normals and values bit for bit): a vertex
belongs to the chunk of the voxel that owns it (the lower end of its edge), a triangle to the
chunk of its cell (the least owner of its vertices along each axis). Each vertex is named by its
key, 3 x the owner's raster index in the volume + its edge's axis, so the triangles of a chunk
that reach the vertices of the chunks after it (along x, y, z) find them by key: a chunk's owned
keys are sorted (raster order), and a triangle's vertex index is the owning chunk's first index
plus the key's rank there (winnow::join_mesh_pieces).

Order: vertices and triangles chunk by chunk (the chunk grid in raster order, x fastest), within
a chunk in the whole call's order; ``order="volume"`` sorts them into the whole call's order
(vertices by key, triangles by cell, stably), which then equals ``winnow.marching_cubes`` on the
whole array exactly.
"""

from __future__ import annotations

import os
from typing import Any, Optional

import dask
import dask.array as da
import numpy as np
from dask.array.overlap import ensure_minimum_chunksize

from .. import _winnow
from .._arrays import classify, native_byte_order
from ..isosurface import MESH_DTYPES

_CONTEXT = 2  # voxels of context around a chunk: gradients of the vertices at its far faces


def _module(a: Any) -> Any:
    """numpy, or cupy for a CuPy array."""
    return np if isinstance(a, np.ndarray) else __import__("cupy")


def _piece(block: Any, start: tuple, lo: tuple, hi: tuple, shape: tuple, level: float, spacing: tuple,
           threads: int) -> tuple:
    """The mesh of one chunk: (positions xyz, normals xyz, values, owned keys, triangles) of the
    vertices its voxels own and the triangles of its cells, in the block's array type; the
    triangles as winnow::MeshPiece's (host) or by key (device).
    `block` holds the chunk and its context from `start` (z, y, x) on; the chunk is [lo, hi)."""
    xp = _module(block)
    if block.dtype.name not in MESH_DTYPES:
        block = block.astype(np.float64)
    elif xp is np:
        block = native_byte_order(block)
    block = xp.ascontiguousarray(block)
    sz, sy, sx = (float(s) for s in spacing)
    if xp is np:  # winnow::isosurface_piece, on `threads` OpenMP threads
        previous = _winnow.set_cpu_threads_of_calling_thread(threads)
        try:
            return _winnow.isosurface_piece_host(block, float(level), sx, sy, sz, start[::-1], lo[::-1], hi[::-1],
                                                 shape[::-1])
        finally:
            _winnow.set_cpu_threads_of_calling_thread(previous)
    # CuPy: the same steps with the device mesh and CuPy's array operations.
    oz, oy, ox = (int(s) for s in start)
    positions, triangles, normals, values, keys = _device_piece(block, float(level), (sx, sy, sz), (ox, oy, oz))
    bz, by, bx = block.shape
    voxel = keys // 3
    slot = keys % 3
    gx = voxel % bx + ox
    gy = (voxel // bx) % by + oy
    gz = voxel // (bx * by) + oz
    nz, ny, nx = shape
    global_keys = ((gz * ny + gy) * nx + gx) * 3 + slot
    owned = (gz >= lo[0]) & (gz < hi[0]) & (gy >= lo[1]) & (gy < hi[1]) & (gx >= lo[2]) & (gx < hi[2])
    # A triangle's cell: the least owner of its vertices along each axis (winnow::isosurface_piece).
    t = triangles.astype(np.int64)
    cz = xp.minimum(xp.minimum(gz[t[:, 0]], gz[t[:, 1]]), gz[t[:, 2]])
    cy = xp.minimum(xp.minimum(gy[t[:, 0]], gy[t[:, 1]]), gy[t[:, 2]])
    cx = xp.minimum(xp.minimum(gx[t[:, 0]], gx[t[:, 1]]), gx[t[:, 2]])
    mine = (cz >= lo[0]) & (cz < hi[0]) & (cy >= lo[1]) & (cy < hi[1]) & (cx >= lo[2]) & (cx < hi[2])
    return positions[owned], normals[owned], values[owned], global_keys[owned], global_keys[t[mine]]


def _device_piece(block: Any, level: float, spacing: tuple, origin: tuple) -> tuple:
    """_piece's mesh of a CuPy block through the device API (count, then extract with keys)."""
    block, lib = classify(block, "block")
    dtype = np.dtype(block.dtype)
    nz, ny, nx = block.shape
    stream = lib.stream()
    arguments = (lib.pointer(block), dtype.kind, dtype.itemsize, nx, ny, nz, nx, nx * ny, level, *spacing)
    vertex_total, triangle_total = _winnow.isosurface_count_device(*arguments, lib.device_id, stream)
    wide = vertex_total >= 2**32
    positions = lib.empty((vertex_total, 3), np.float32)
    normals = lib.empty((vertex_total, 3), np.float32)
    values = lib.empty(vertex_total, np.float32)
    keys = lib.empty(vertex_total, np.uint64)
    triangles = lib.empty((triangle_total, 3), np.uint64 if wide else np.uint32)
    _winnow.isosurface_extract_device(*arguments, lib.pointer(positions), lib.pointer(triangles), wide,
                                      lib.pointer(normals), lib.pointer(values), vertex_total, triangle_total,
                                      lib.device_id, stream, keys=lib.pointer(keys), ox=origin[0], oy=origin[1],
                                      oz=origin[2])
    return positions, triangles, normals, values, keys


def _at_least(darr: da.Array, size: int) -> da.Array:
    """darr with chunks of at least `size` voxels along every axis (neighbours merged), as
    dask.array.overlap would make them, so the chunk grid is known before the overlap."""
    chunks = tuple(ensure_minimum_chunksize(size, c) if len(c) > 1 else c for c in darr.chunks)
    return darr if chunks == darr.chunks else darr.rechunk(chunks)


def _device_faces(xp: Any, triangle_keys: Any, grid: tuple, edges: list, shape: tuple, owned_keys: list, first: Any,
                  index_dtype: Any) -> Any:
    """winnow::join_mesh_pieces for one CuPy piece: the owner chunk of each key, then its rank."""
    nz, ny, nx = shape
    keys = triangle_keys.reshape(-1)
    voxel = keys // 3
    z, y, x = voxel // (nx * ny), (voxel // nx) % ny, voxel % nx
    cz = xp.searchsorted(edges[0], z, side="right")
    cy = xp.searchsorted(edges[1], y, side="right")
    cx = xp.searchsorted(edges[2], x, side="right")
    owners = (cz * grid[1] + cy) * grid[2] + cx
    return _indices_of_keys(xp, keys, owners, owned_keys, first, index_dtype).reshape(-1, 3)


def _indices_of_keys(xp: Any, keys: Any, owners: Any, owned_keys: list, first: Any, index_dtype: Any) -> Any:
    """The global vertex index of each key: the owning chunk's first index + the key's rank among
    that chunk's owned keys (sorted). `owners`: each key's chunk (linear index)."""
    out = xp.empty(keys.shape, index_dtype)
    for owner in xp.unique(owners).tolist():
        where = owners == owner
        wanted = keys[where]
        rank = xp.searchsorted(owned_keys[owner], wanted)
        if not bool((owned_keys[owner][xp.minimum(rank, len(owned_keys[owner]) - 1)] == wanted).all()):
            raise RuntimeError("marching_cubes: a triangle's vertex was not found in its chunk (an internal error)")
        out[where] = (rank + int(first[owner])).astype(index_dtype)
    return out


def marching_cubes(darr: Any, level: Optional[float] = None, *, spacing: tuple = (1.0, 1.0, 1.0),
                   gradient_direction: str = "descent", order: str = "chunks",
                   progress: Optional[bool] = None) -> tuple:
    """The isosurface of a chunked 3D array at ``level``, as ``winnow.marching_cubes`` gives it for
    the whole array: one welded, watertight mesh.

    Parameters
    ----------
    darr : dask.array.Array
        A 3D array [z, y, x] of NumPy chunks (meshed on the CPU) or CuPy chunks (on their GPU),
        any numeric dtype (uint8, uint16, int16, float32, float64 as they are; others as
        float64), any chunking (chunks thinner than two voxels are merged with a neighbour).
    level : float, optional
        The level; voxels above it are inside. Default: the middle of the array's range (one
        pass over the array).
    spacing : tuple of 3 floats
        Voxel size along z, y, x.
    gradient_direction : {"descent", "ascent"}
        As ``winnow.marching_cubes``.
    order : {"chunks", "volume"}
        "chunks" (default): vertices and triangles chunk by chunk (the chunk grid in raster order),
        within a chunk in the whole call's order. "volume": the whole call's order exactly
        (a sort of the vertices and triangles at the end).
    progress : bool, optional
        Show Dask's progress bar (default: when standard error is a terminal).

    Returns
    -------
    verts : (V, 3) float32
        Positions in array-index order times ``spacing``, the whole call's bit for bit.
    faces : (F, 3) uint32 (uint64 beyond 2^32 - 1 vertices)
    normals : (V, 3) float32
    values : (V,) float32
        NumPy arrays for NumPy chunks, CuPy arrays for CuPy chunks (on the current device).

    Raises
    ------
    TypeError
        ``darr`` is not a dask array, or not of a numeric dtype.
    ValueError
        Not 3D, fewer than 2 voxels along an axis, a bad ``spacing``, ``gradient_direction`` or
        ``order``.

    See Also
    --------
    winnow.marching_cubes : the same on one array.
    winnow.dask.label : connected components of a chunked array.

    Examples
    --------
    >>> import numpy as np, dask.array as da, winnow, winnow.dask
    >>> z, y, x = np.mgrid[:20, :20, :20] - 9.5
    >>> field = (x * x + y * y + z * z).astype(np.float32)
    >>> verts, faces, normals, values = winnow.dask.marching_cubes(da.from_array(field, chunks=7), 49.0,
    ...                                                            order="volume", progress=False)
    >>> whole = winnow.marching_cubes(field, 49.0)
    >>> bool((verts == whole[0]).all() and (faces == whole[1]).all())
    True
    """
    if not isinstance(darr, da.Array):
        raise TypeError(f"darr: expected a dask array, got {type(darr).__name__}")
    if darr.ndim != 3:
        raise ValueError(f"darr: expected 3 dimensions, got {darr.ndim}")
    if min(darr.shape) < 2:
        raise ValueError(f"darr: expected at least 2 voxels along each axis, got shape {tuple(darr.shape)}")
    dtype = np.dtype(darr.dtype)
    if dtype.hasobject or dtype.kind not in "biuf":
        raise TypeError(f"darr: expected a numeric dtype, got {dtype}")
    if gradient_direction not in ("descent", "ascent"):
        raise ValueError(f"gradient_direction: expected 'descent' or 'ascent', got {gradient_direction!r}")
    if order not in ("chunks", "volume"):
        raise ValueError(f"order: expected 'chunks' or 'volume', got {order!r}")
    if len(spacing) != 3 or not all(isinstance(s, (int, float, np.integer, np.floating)) and s > 0 for s in spacing):
        raise ValueError(f"spacing: expected three positive numbers, got {spacing!r}")
    if any(np.isnan(c) for axis in darr.chunks for c in axis):
        raise ValueError("darr: chunk sizes unknown (NaN); call darr.compute_chunk_sizes() first")
    if dtype.kind == "b":
        darr = darr.astype(np.uint8)
    show = os.isatty(2) if progress is None else bool(progress)
    if level is None:
        lo, hi = dask.compute(da.nanmin(darr), da.nanmax(darr))
        level = 0.5 * (float(lo) + float(hi))
    if isinstance(level, bool) or not isinstance(level, (int, float, np.integer, np.floating)) or np.isnan(level):
        raise ValueError(f"level: expected a number, got {level!r}")

    core = _at_least(darr, _CONTEXT)
    bounds = [np.concatenate(([0], np.cumsum(c))) for c in core.chunks]
    blocks = da.overlap.overlap(core, depth=_CONTEXT, boundary="none").to_delayed()
    shape = tuple(int(n) for n in core.shape)
    grid = core.numblocks
    threads = max(1, (os.cpu_count() or 1) // max(1, int(np.prod(grid))))  # cores shared among the chunks
    tasks = []
    for index in np.ndindex(*grid):
        lo = tuple(int(bounds[a][index[a]]) for a in range(3))
        hi = tuple(int(bounds[a][index[a] + 1]) for a in range(3))
        start = tuple(lo[a] - (_CONTEXT if index[a] > 0 else 0) for a in range(3))
        tasks.append(dask.delayed(_piece, pure=True)(blocks[index], start, lo, hi, shape, float(level), tuple(spacing),
                                                     threads))
    if show:
        from dask.diagnostics import ProgressBar

        with ProgressBar():
            pieces = dask.compute(*tasks)
    else:
        pieces = dask.compute(*tasks)
    return _assemble(pieces, grid, bounds, shape, gradient_direction, order)


def _assemble(pieces: tuple, grid: tuple, bounds: list, shape: tuple, gradient_direction: str, order: str) -> tuple:
    """The chunks' pieces as one mesh (see the module's description). Each output is allocated
    once and every piece written into its place (the library's x, y, z reversed to array-index
    order, the faces in their final dtype and, for "ascent", reversed) in the same copy."""
    xp = _module(pieces[0][0]) if pieces else np
    counts = np.array([len(p[3]) for p in pieces], np.int64)
    first = np.concatenate(([0], np.cumsum(counts)))
    total = int(first[-1])
    index_dtype = np.uint64 if total >= 2**32 else np.uint32
    owned_keys = [p[3] for p in pieces]
    nz, ny, nx = shape
    edges = [xp.asarray(b[1:-1]) for b in bounds]  # inner chunk boundaries per axis (z, y, x)

    if xp is np:  # winnow::join_mesh_pieces
        joined = [np.empty(p[4].shape, np.uint64) for p in pieces]
        _winnow.join_mesh_pieces_host([b.astype(np.int64) for b in bounds[::-1]], owned_keys,
                                      [np.ascontiguousarray(p[4]) for p in pieces], joined)
    else:
        joined = [_device_faces(xp, p[4], grid, edges, shape, owned_keys, first, index_dtype) for p in pieces]
    face_first = np.concatenate(([0], np.cumsum([len(f) for f in joined], dtype=np.int64)))
    verts = xp.empty((total, 3), np.float32)
    normals = xp.empty((total, 3), np.float32)
    values = xp.empty(total, np.float32)
    faces = xp.empty((int(face_first[-1]), 3), index_dtype)
    columns = slice(None, None, -1) if gradient_direction == "ascent" else slice(None)
    for piece, face, a, b, fa, fb in zip(pieces, joined, first[:-1], first[1:], face_first[:-1], face_first[1:]):
        verts[a:b] = piece[0][:, ::-1]
        normals[a:b] = piece[1][:, ::-1]
        values[a:b] = piece[2]
        faces[fa:fb] = face[:, columns]
    if order == "volume":
        keys = xp.concatenate(owned_keys) if pieces else xp.zeros(0, np.uint64)
        by_key = xp.argsort(keys, kind="stable")
        rank = xp.empty_like(by_key)
        rank[by_key] = xp.arange(len(by_key))
        verts, normals, values = verts[by_key], normals[by_key], values[by_key]
        faces = rank[faces.astype(np.int64)].astype(index_dtype)
        # Triangles by cell (raster order), stably: the least owner of each vertex along each axis.
        owner = keys[by_key][faces.astype(np.int64)] // 3
        cz = (owner // (nx * ny)).min(axis=1)
        cy = ((owner // nx) % ny).min(axis=1)
        cx = (owner % nx).min(axis=1)
        faces = faces[xp.argsort((cz * ny + cy) * nx + cx, kind="stable")]
    return verts, faces, normals, values
