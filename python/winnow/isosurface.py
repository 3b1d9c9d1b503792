"""Isosurfaces: ``marching_cubes`` in scikit-image's conventions over the library's welded,
watertight marching cubes (winnow/isosurface.hpp), on volumes indexed [z, y, x]: NumPy through
the host API (any backend: the CPU or a CUDA device); CuPy arrays and PyTorch CUDA tensors
through the device API (winnow/cuda/isosurface.hpp) on the caller's current stream, the mesh
in arrays of the caller's library: a first extension call counts (its temporary storage kept by
the extension per device and stream) and returns the totals, which must come to the host (one
16-byte copy and a wait on the stream: the outputs' sizes need them); the outputs are allocated;
a second call extracts from that count, without classifying the volume again.

``affine`` moves the mesh into world coordinates after the extraction, with the array ops of
the caller's library: positions by the affine in float64 (rounded to float32 once), normals by
the inverse transpose of its 3 x 3 part (renormalised), faces reversed when it mirrors (det < 0)
so they keep facing out -- what the library's transform_mesh does for the command line.

scikit-image's ``step_size`` is marching cubes over every step-th voxel (its results equal
those of ``volume[::s, ::s, ::s]`` with the spacing times s); its ``mask`` keeps the cells whose
upper corner it marks (scikit-image's Lewiner code tests the cell's last voxel): here the whole
mesh is made and each face kept when its cell is -- a face's vertices lie on edges of its cell,
and a vertex's edge is read from its position (its owner voxel is the floor of its index
coordinates, a crossing never lies on a voxel), on the host for device arrays too.
"""

from __future__ import annotations

import warnings
from typing import Any, Optional, Sequence

import numpy as np
import numpy.typing as npt

from . import _winnow
from ._arrays import check_backend, classify, on_device, reads_in_place

MESH_DTYPES = ("uint8", "uint16", "int16", "float32", "float64")


def marching_cubes(volume: npt.ArrayLike, level: Optional[float] = None, *,
                   spacing: Sequence[float] = (1.0, 1.0, 1.0), gradient_direction: str = "descent",
                   step_size: int = 1, allow_degenerate: bool = False, method: str = "lewiner",
                   mask: Optional[npt.ArrayLike] = None, backend: str = "auto",
                   affine: Optional[npt.ArrayLike] = None) -> tuple[Any, Any, Any, Any]:
    """Extract the isosurface of a volume at a level, as ``skimage.measure.marching_cubes`` does,
    welded and watertight.

    Parameters
    ----------
    volume : array_like
        3D [z, y, x], at least 2 voxels along each axis: NumPy, CuPy or PyTorch. uint8, uint16,
        int16, float32 and float64 are read in place (rows and slices at any stride, the last axis
        adjacent; transposed axes or a broadcast cost one copy); other dtypes are converted to
        float64 (a copy).
    level : float, optional
        The isovalue; None: the middle of the volume's range (NaN ignored).
    spacing : sequence of 3 floats, optional
        Voxel size along axes 0, 1, 2: verts are array indices times spacing.
    gradient_direction : {'descent', 'ascent'}, optional
        'descent': the object is greater than its exterior (faces oriented as scikit-image
        orients them); 'ascent': the reverse.
    step_size : int, optional
        scikit-image's: march over every step-th voxel (the mesh of ``volume[::s, ::s, ::s]``
        with the spacing times s); faster and coarser.
    allow_degenerate : bool, optional
        Accepted for scikit-image's sake; changes nothing: a crossing on a voxel is placed a
        float's rounding inside its edge, so no face collapses.
    method : {'lewiner'}, optional
        scikit-image's 'lewiner' (topologically consistent, the default) is what winnow makes:
        one vertex per crossed edge, ambiguous faces decided alike on both sides, so the mesh is
        closed (Lewiner's extra vertex inside some ambiguous cells is not made). 'lorensen' (the
        classic table, whose meshes can have holes) is refused.
    mask : array_like, optional
        scikit-image's: bool, the volume's shape and place; only the cells whose upper corner
        (the cell's last voxel, as scikit-image reads it) is True keep their faces, so open
        surfaces can be cut out. Vertices no kept face uses are dropped.
    backend : {'auto', 'cpu', 'cuda'}, optional
        Where NumPy volumes are meshed; device volumes are meshed on their device ('auto' or
        'cuda').
    affine : array_like, optional
        4x4 (last row 0 0 0 1) from array indices (axis 0, 1, 2) to world coordinates --
        nibabel's ``img.affine`` for ``img.get_fdata()``, or ``winnow.io``'s ``header.affine``:
        verts are then ``nibabel.affines.apply_affine(affine, verts)`` (in float64, returned as
        float32), normals map by the inverse transpose of its 3x3 part, renormalised, and faces
        are reversed when it mirrors, so the surface keeps facing out. spacing must stay
        (1, 1, 1) (the affine holds the voxel size).

    Returns
    -------
    verts : array
        float32 [V, 3], array-index order times spacing (scikit-image's points). Welded: one
        vertex per crossed edge, shared by its faces.
    faces : array
        [F, 3] vertex indices (uint32; uint64 beyond 2^32 - 1 vertices; int32 / int64 for
        PyTorch), every inner edge used by two faces.
    normals : array
        float32 [V, 3], unit, from central differences, pointing to decreasing values (as
        scikit-image's, whatever the gradient direction).
    values : array
        float32 [V], the field interpolated at each vertex (scikit-image gives the largest
        voxel value near it instead).

    The arrays are of the volume's library and device; device volumes are meshed on the
    caller's current stream. An empty mesh is returned with a UserWarning.

    Raises
    ------
    TypeError
        A non-numeric volume or level, a mask of another place.
    ValueError
        Not 3D or too small, a bad spacing, step_size, method, mask, gradient direction or
        affine, a NaN level.

    See Also
    --------
    winnow.io.write_mesh, winnow.io.render_preview, skimage.measure.marching_cubes

    Examples
    --------
    >>> import numpy as np, winnow
    >>> z, y, x = np.mgrid[-8:9, -8:9, -8:9]
    >>> verts, faces, normals, values = winnow.marching_cubes((x * x + y * y + z * z).astype(np.float32), 25.0)
    >>> bool(np.allclose(np.linalg.norm(verts - 8, axis=1), 5, atol=0.3))
    True
    >>> half = winnow.marching_cubes((x * x + y * y + z * z).astype(np.float32), 25.0, mask=z >= 0)[0]
    >>> bool((half[:, 0] >= 7).all()), len(half) < len(verts)
    (True, True)
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
    if isinstance(step_size, (bool, np.bool_)) or not isinstance(step_size, (int, np.integer)) or step_size < 1:
        raise ValueError(f"step_size: expected an integer of at least 1, got {step_size!r}")
    if method != "lewiner":
        raise ValueError(f"method: winnow's marching cubes is topologically consistent, as 'lewiner' is; "
                         f"{method!r} is not available" if method == "lorensen" else
                         f"method: expected 'lewiner', got {method!r}")
    dtype = lib.dtype(volume) if lib.on_device else volume.dtype
    if dtype.kind not in "biuf":
        raise TypeError(f"volume: expected a numeric dtype, got {dtype}")
    if level is not None and (isinstance(level, bool) or not isinstance(level, (int, float, np.integer, np.floating))):
        raise TypeError(f"level: expected a number, got {type(level).__name__}")
    if affine is not None:
        affine = _checked_affine(affine)
        if tuple(float(s) for s in spacing) != (1.0, 1.0, 1.0):
            raise ValueError(f"affine: spacing must stay (1, 1, 1) with an affine (it holds the voxel size), got "
                             f"spacing {tuple(spacing)!r}")
    cells = None if mask is None else _mask_cells(mask, volume, lib, int(step_size))
    if level is None:
        level = 0.5 * sum(lib.value_range(volume)) if lib.on_device else _middle(volume)
    step = int(step_size)
    marched = volume[::step, ::step, ::step] if step > 1 else volume
    # With a mask the mesh is made in index coordinates (a vertex's edge is read from them), scaled after.
    scale = tuple(float(sp) * step for sp in spacing)
    mesh_spacing = (1.0, 1.0, 1.0) if cells is not None else scale
    if lib.on_device:
        result = on_device(lib, _marching_cubes_device, marched, lib, dtype, level, mesh_spacing, gradient_direction)
    else:
        result = _marching_cubes_host(marched, lib, level, mesh_spacing, gradient_direction, backend)
    verts, faces, normals, values, level = result
    if cells is not None:
        verts, faces, normals, values = _masked(lib, cells, scale, verts, faces, normals, values)
    if verts.shape[0] == 0:
        lo, hi = lib.value_range(volume) if lib.on_device else _host_range(volume)
        if cells is not None and lo <= level < hi:
            where = "the mask keeps no cell the surface crosses"
        else:
            where = "every voxel is above" if lo > level else "no voxel is above"
        warnings.warn(f"marching_cubes: empty mesh: {where} level {level:g} (values {lo:g}..{hi:g})", UserWarning,
                      stacklevel=2)
    if affine is not None:
        verts, faces, normals = _moved(lib, affine, verts, faces, normals)
    return verts, faces, normals, values


def _middle(volume: np.ndarray) -> float:
    return 0.5 * (float(np.nanmin(volume)) + float(np.nanmax(volume)))


def _mask_cells(mask: Any, volume: Any, lib: Any, step: int) -> np.ndarray:
    """Which cells of the (stepped) volume keep their faces, as a NumPy bool array [nz-1, ny-1,
    nx-1] of the marched grid: the mask at each cell's upper corner, as scikit-image reads it."""
    mask, mask_lib = classify(mask, "mask")
    if mask_lib.on_device != lib.on_device or (lib.on_device and mask_lib is not lib):
        raise TypeError("mask: expected an array in the volume's place (host or the same device)")
    if tuple(mask.shape) != tuple(volume.shape):
        raise ValueError(f"mask: expected the volume's shape {tuple(volume.shape)}, got {tuple(mask.shape)}")
    host = lib.to_host(mask) if lib.on_device else np.asarray(mask)
    return np.ascontiguousarray(host[::step, ::step, ::step][1:, 1:, 1:] != 0)


def _face_cells(verts: np.ndarray, faces: np.ndarray) -> tuple:
    """The cell (lower corner, [F, 3]) of each face of a mesh in index coordinates, and where a
    face lies in a cell's side (its vertices all on that side's edges) the other cell across it
    (else the same cell). A vertex lies on the edge from its owner voxel, the floor of its
    position, along the axis where the position is not whole."""
    owner = np.floor(verts).astype(np.int64)
    along = verts != owner
    o, a = owner[faces], along[faces]  # [F, 3 vertices, 3 axes]
    big = np.iinfo(np.int64).max
    fixed = np.where(a, o, big).min(axis=1)  # an edge along the axis fixes the cell's coordinate
    low, high = o.min(axis=1), o.max(axis=1)
    free = fixed == big
    cell = np.where(free, low, fixed)
    # No edge along an axis and every owner at one coordinate: the face lies in the side there.
    other = cell - (free & (low == high))
    return cell, other


def _masked(lib: Any, cells: np.ndarray, scale: tuple, verts: Any, faces: Any, normals: Any, values: Any) -> tuple:
    """The mesh's faces whose cell the mask keeps, their vertices renumbered, positions scaled."""
    host = [lib.to_host(x) if lib.on_device else np.asarray(x) for x in (verts, faces, normals, values)]
    v, f, n, w = host
    limit = np.array(cells.shape) - 1
    if len(f):
        cell, other = _face_cells(v, f.astype(np.int64))
        inside = lambda c: (c >= 0).all(axis=1) & (c <= limit).all(axis=1)  # noqa: E731
        keep = np.zeros(len(f), bool)
        for c in (cell, other):
            ok = inside(c)
            keep[ok] |= cells[c[ok, 0], c[ok, 1], c[ok, 2]]
        f = f[keep]
    used = np.unique(f)
    renumber = np.zeros(len(v), f.dtype)
    renumber[used] = np.arange(len(used), dtype=f.dtype)
    f = renumber[f]
    v = (v[used] * np.array(scale, np.float32)).astype(np.float32)
    n, w = n[used], w[used]
    if lib.on_device:
        return tuple(lib.from_host(np.ascontiguousarray(x)) for x in (v, f, n, w))
    return tuple(lib.wrap(np.ascontiguousarray(x)) for x in (v, f, n, w))


def _host_range(volume: np.ndarray) -> tuple:
    """(smallest, largest) finite value of a host volume (NaN, NaN when there is none)."""
    finite = volume[np.isfinite(volume)] if volume.dtype.kind == "f" else volume
    if finite.size == 0:
        return float("nan"), float("nan")
    return float(finite.min()), float(finite.max())


def _checked_affine(affine: Any) -> np.ndarray:
    """The affine as a float64 NumPy 4x4 matrix; ValueError naming ``affine`` when it is not one
    that places a mesh (finite, last row 0 0 0 1, a non-singular 3x3 part)."""
    if hasattr(affine, "get") and callable(affine.get) and not isinstance(affine, dict):  # CuPy
        affine = affine.get()
    elif hasattr(affine, "detach"):  # PyTorch
        affine = affine.detach().cpu().numpy()
    try:
        a = np.asarray(affine, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise TypeError(f"affine: expected a 4x4 array of numbers, got {type(affine).__name__}") from error
    if a.shape != (4, 4):
        raise ValueError(f"affine: expected a 4x4 array, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError("affine: expected finite numbers")
    if not np.array_equal(a[3], [0.0, 0.0, 0.0, 1.0]):
        raise ValueError(f"affine: expected a last row of 0 0 0 1, got {a[3].tolist()}")
    scale = float(np.prod(np.linalg.norm(a[:3, :3], axis=0)))
    if not abs(float(np.linalg.det(a[:3, :3]))) > 1e-12 * scale:
        raise ValueError("affine: its 3x3 part is singular")
    return a


def _moved(lib: Any, affine: np.ndarray, verts: Any, faces: Any, normals: Any) -> tuple:
    """verts, faces and normals in the affine's frame (see the module's description), as arrays
    of the caller's library."""
    linear, shift = affine[:3, :3], affine[:3, 3]
    normal_map = np.linalg.inv(linear)  # n' = inv(A)^T n, i.e. rows n @ inv(A)
    mirrors = np.linalg.det(linear) < 0
    if lib.on_device and lib.xp.__name__ == "torch":
        torch = lib.xp
        as_device = lambda m: torch.as_tensor(m, dtype=torch.float64, device=verts.device)  # noqa: E731
        moved = (verts.to(torch.float64) @ as_device(linear.T) + as_device(shift)).to(torch.float32)
        n = normals.to(torch.float64) @ as_device(normal_map)
        length = torch.linalg.vector_norm(n, dim=1, keepdim=True)
        n = torch.where(length > 0, n / torch.where(length > 0, length, torch.ones_like(length)), torch.zeros_like(n))
        if mirrors:
            faces = faces[:, [0, 2, 1]].contiguous()
        return moved, faces, n.to(torch.float32).contiguous()
    xp = lib.xp if lib.on_device else np
    host = not lib.on_device
    v = np.asarray(verts) if host else verts
    moved = (v.astype(np.float64) @ xp.asarray(linear.T) + xp.asarray(shift)).astype(np.float32)
    n = (np.asarray(normals) if host else normals).astype(np.float64) @ xp.asarray(normal_map)
    length = xp.sqrt((n * n).sum(axis=1, keepdims=True))
    n = xp.where(length > 0, n / xp.where(length > 0, length, 1.0), 0.0).astype(np.float32)
    f = np.asarray(faces) if host else faces
    if mirrors:
        f = xp.ascontiguousarray(f[:, [0, 2, 1]])
    if host:
        return lib.wrap(np.ascontiguousarray(moved)), lib.wrap(f), lib.wrap(np.ascontiguousarray(n))
    return xp.ascontiguousarray(moved), f, xp.ascontiguousarray(n)


def _marching_cubes_host(volume: np.ndarray, lib: Any, level: Optional[float], spacing: tuple,
                         gradient_direction: str, backend: str) -> tuple:
    """marching_cubes of a host volume through the host API: (verts, faces, normals, values,
    level used), in the caller's type."""
    if volume.dtype.name not in MESH_DTYPES:
        volume = volume.astype(np.float64)
    if not reads_in_place(volume.shape, volume.strides, volume.itemsize, whole_rows=True):
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
    return (lib.wrap(verts), lib.wrap(faces), lib.wrap(np.ascontiguousarray(normals[:, ::-1])), lib.wrap(values),
            float(level))


def _marching_cubes_device(volume: Any, lib: Any, dtype: np.dtype, level: Optional[float], spacing: tuple,
                           gradient_direction: str) -> tuple:
    """marching_cubes of a CuPy / PyTorch CUDA volume: the count (totals to the host), outputs
    allocated by the caller's library, the extraction, all on the caller's current stream."""
    if dtype.name not in MESH_DTYPES:
        volume = lib.astype(volume, np.float64)
        dtype = np.dtype(np.float64)
    strides = lib.element_strides(volume)
    if not reads_in_place(volume.shape, strides, 1, whole_rows=True):
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
    return verts, faces, lib.contiguous(lib.reverse_columns(normals)), values, float(level)
