"""Isosurfaces: ``marching_cubes`` in scikit-image's conventions over the library's welded,
watertight marching cubes (winnow/isosurface.hpp), on volumes indexed [z, y, x]: NumPy through
the host API (any backend: the CPU or a CUDA device); CuPy arrays and PyTorch CUDA tensors
through the device API (winnow/cuda/isosurface.hpp) on the caller's current stream, the mesh
in arrays of the caller's library: a first extension call counts (its temporary storage kept by
the extension per device and stream) and returns the totals, which must come to the host (one
16-byte copy and a wait on the stream: the outputs' sizes need them); the outputs are allocated;
a second call extracts from that count, without classifying the volume again.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from . import _winnow
from ._arrays import check_backend, classify, on_device

MESH_DTYPES = ("uint8", "uint16", "int16", "float32", "float64")


def marching_cubes(volume: Any, level: Optional[float] = None, *, spacing: tuple = (1.0, 1.0, 1.0),
                   gradient_direction: str = "descent", allow_degenerate: bool = False,
                   backend: str = "auto") -> tuple:
    """(verts, faces, normals, values) of the isosurface of ``volume`` at ``level``, as
    ``skimage.measure.marching_cubes`` returns them.

    verts: float32 [V, 3] in array-index order times ``spacing`` (the same points as
    scikit-image); faces: [F, 3] vertex indices (uint32, uint64 beyond 2^32 - 1 vertices),
    oriented as scikit-image orients them for ``gradient_direction`` ("descent": the object is
    greater than its exterior); normals: float32 [V, 3], unit, from central differences, pointing
    to decreasing values (as scikit-image's, whatever the gradient direction); values: float32 [V], the field
    interpolated at each vertex (scikit-image gives the largest voxel value near it instead).
    level None: the middle of the volume's range. Unlike scikit-image the mesh is welded (one
    vertex per edge crossing, shared) and watertight: every inner edge is used by two faces, also
    at a level equal to voxel values, where a crossing on a voxel is placed a float's rounding
    inside its edge, so no face collapses: ``allow_degenerate`` is accepted for scikit-image's
    sake and changes nothing.
    dtypes uint8, uint16, int16, float32, float64 are read in place (any strides with x
    contiguous); others are converted to float64 (a copy). CuPy and PyTorch CUDA volumes give
    arrays of the same library on the same device (faces int32 for PyTorch, which lacks
    uint32), computed on the caller's current stream; backend must then be "auto" or "cuda".

    >>> import numpy as np, winnow
    >>> z, y, x = np.mgrid[-8:9, -8:9, -8:9]
    >>> verts, faces, normals, values = winnow.marching_cubes((x * x + y * y + z * z).astype(np.float32), 25.0)
    >>> bool(np.allclose(np.linalg.norm(verts - 8, axis=1), 5, atol=0.3))
    True
    """
    volume, lib = classify(volume, "volume")
    check_backend(backend, lib.on_device)
    if len(volume.shape) != 3:
        raise ValueError(f"volume: expected 3 dimensions, got {len(volume.shape)}")
    if min(volume.shape) < 2:
        raise ValueError(f"volume: expected at least 2 voxels along each axis, got shape {tuple(volume.shape)}")
    if gradient_direction not in ("descent", "ascent"):
        raise ValueError(f"gradient_direction: expected 'descent' or 'ascent', got {gradient_direction!r}")
    if len(spacing) != 3 or not all(isinstance(s, (int, float, np.integer, np.floating)) and s > 0 for s in spacing):
        raise ValueError(f"spacing: expected three positive numbers, got {spacing!r}")
    dtype = lib.dtype(volume) if lib.on_device else volume.dtype
    if dtype.kind not in "biuf":
        raise TypeError(f"volume: expected a numeric dtype, got {dtype}")
    if level is not None and (isinstance(level, bool) or not isinstance(level, (int, float, np.integer, np.floating))):
        raise TypeError(f"level: expected a number, got {type(level).__name__}")
    if lib.on_device:
        return on_device(lib, _marching_cubes_device, volume, lib, dtype, level, spacing, gradient_direction)
    if volume.dtype.name not in MESH_DTYPES:
        volume = volume.astype(np.float64)
    if volume.strides[2] != volume.itemsize or any(s < 0 for s in volume.strides):
        volume = np.ascontiguousarray(volume)
    if level is None:
        level = 0.5 * (float(np.nanmin(volume)) + float(np.nanmax(volume)))
    # The library's x, y, z is the volume's last axis first; reversed to array-index order it is
    # mirrored, which turns its winding into scikit-image's for "descent"; "ascent" reverses the
    # faces only (scikit-image's normals point to decreasing values either way, as the library's).
    vertices, triangles, normals, values = _winnow.isosurface_host(
        volume, float(level), float(spacing[2]), float(spacing[1]), float(spacing[0]), False, backend)
    verts = np.ascontiguousarray(vertices[:, ::-1])
    faces = np.ascontiguousarray(triangles[:, ::-1]) if gradient_direction == "ascent" else triangles
    return (lib.wrap(verts), lib.wrap(faces), lib.wrap(np.ascontiguousarray(normals[:, ::-1])), lib.wrap(values))


def _marching_cubes_device(volume: Any, lib: Any, dtype: np.dtype, level: Optional[float], spacing: tuple,
                           gradient_direction: str) -> tuple:
    """marching_cubes of a CuPy / PyTorch CUDA volume: the count (totals to the host), outputs
    allocated by the caller's library, the extraction, all on the caller's current stream."""
    if dtype.name not in MESH_DTYPES:
        volume = lib.astype(volume, np.float64)
        dtype = np.dtype(np.float64)
    strides = lib.element_strides(volume)
    if strides[2] != 1 or any(s < 0 for s in strides):
        volume = lib.contiguous(volume)
        strides = lib.element_strides(volume)
    if level is None:
        level = 0.5 * sum(lib.value_range(volume))
    nz, ny, nx = volume.shape
    stream = lib.stream()
    # The library's x, y, z (spacing too) is the volume's last axis first (see the host path).
    arguments = (lib.pointer(volume), dtype.kind, dtype.itemsize, nx, ny, nz, strides[1], strides[0], float(level),
                 float(spacing[2]), float(spacing[1]), float(spacing[0]))
    vertex_total, triangle_total = _winnow.isosurface_count_device(*arguments, lib.device_id, stream)
    wide = vertex_total >= 2**32
    vertices = lib.empty((vertex_total, 3), np.float32)
    normals = lib.empty((vertex_total, 3), np.float32)
    values = lib.empty(vertex_total, np.float32)
    triangles = lib.empty((triangle_total, 3), np.uint64 if wide else np.uint32)
    _winnow.isosurface_extract_device(*arguments, lib.pointer(vertices), lib.pointer(triangles), wide,
                                      lib.pointer(normals), lib.pointer(values), vertex_total, triangle_total,
                                      lib.device_id, stream)
    verts = lib.contiguous(lib.reverse_columns(vertices))
    faces = lib.contiguous(lib.reverse_columns(triangles)) if gradient_direction == "ascent" else triangles
    return verts, faces, lib.contiguous(lib.reverse_columns(normals)), values
