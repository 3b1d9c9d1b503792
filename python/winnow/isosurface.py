"""Isosurfaces: ``marching_cubes`` in scikit-image's conventions over the library's welded,
watertight marching cubes (winnow/isosurface.hpp), on NumPy volumes indexed [z, y, x] (any
backend: the CPU or a CUDA device).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from . import _winnow
from ._arrays import check_backend, classify

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
    vertex per edge crossing, shared) and watertight: every inner edge is used by two faces.
    dtypes uint8, uint16, int16, float32, float64 are read in place (any strides with x
    contiguous); others are converted to float64 (a copy).

    >>> import numpy as np, winnow
    >>> z, y, x = np.mgrid[-8:9, -8:9, -8:9]
    >>> verts, faces, normals, values = winnow.marching_cubes((x * x + y * y + z * z).astype(np.float32), 25.0)
    >>> bool(np.allclose(np.linalg.norm(verts - 8, axis=1), 5, atol=0.3))
    True
    """
    volume, lib = classify(volume, "volume")
    if lib.on_device:
        raise TypeError("volume: expected a NumPy array (marching_cubes reads host memory)")
    check_backend(backend, False)
    if volume.ndim != 3:
        raise ValueError(f"volume: expected 3 dimensions, got {volume.ndim}")
    if min(volume.shape) < 2:
        raise ValueError(f"volume: expected at least 2 voxels along each axis, got shape {volume.shape}")
    if gradient_direction not in ("descent", "ascent"):
        raise ValueError(f"gradient_direction: expected 'descent' or 'ascent', got {gradient_direction!r}")
    if len(spacing) != 3 or not all(isinstance(s, (int, float, np.integer, np.floating)) and s > 0 for s in spacing):
        raise ValueError(f"spacing: expected three positive numbers, got {spacing!r}")
    if volume.dtype.kind not in "biuf":
        raise TypeError(f"volume: expected a numeric dtype, got {volume.dtype}")
    if volume.dtype.name not in MESH_DTYPES:
        volume = volume.astype(np.float64)
    if volume.strides[2] != volume.itemsize or any(s < 0 for s in volume.strides):
        volume = np.ascontiguousarray(volume)
    if level is None:
        level = 0.5 * (float(np.nanmin(volume)) + float(np.nanmax(volume)))
    elif isinstance(level, bool) or not isinstance(level, (int, float, np.integer, np.floating)):
        raise TypeError(f"level: expected a number, got {type(level).__name__}")
    # The library's x, y, z is the volume's last axis first; reversed to array-index order it is
    # mirrored, which turns its winding into scikit-image's for "descent"; "ascent" reverses the
    # faces only (scikit-image's normals point to decreasing values either way, as the library's).
    vertices, triangles, normals, values = _winnow.isosurface_host(
        volume, float(level), float(spacing[2]), float(spacing[1]), float(spacing[0]), False,
        bool(allow_degenerate), backend)
    verts = np.ascontiguousarray(vertices[:, ::-1])
    faces = np.ascontiguousarray(triangles[:, ::-1]) if gradient_direction == "ascent" else triangles
    return (lib.wrap(verts), lib.wrap(faces), lib.wrap(np.ascontiguousarray(normals[:, ::-1])), lib.wrap(values))
