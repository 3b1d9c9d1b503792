"""Files: volumes (NIfTI-1, NRRD, NumPy .npy, TIFF stacks) in and out with their spatial header,
images in, triangle meshes out (PLY, OBJ, STL) and a shaded preview of a mesh -- the library's
readers and writers, which the command line uses (winnow/volume_io.hpp, winnow/io.hpp,
winnow/mesh_io.hpp), so that nibabel and trimesh are not needed for them.

Volumes are NumPy arrays indexed [z, y, x] (the file's x fastest, as every winnow function takes
them); the header's ``affine`` maps those array indices to world coordinates, so
``marching_cubes(volume, affine=header.affine)`` gives a mesh in the scanner's frame, and
``header.xyz_affine`` is nibabel's ``img.affine`` (for nibabel's [x, y, z] array,
``volume.T``). A volume written with ``like=header`` carries the header back: a NIfTI written
from a NIfTI keeps qform, sform, pixdim and units bit for bit, an NRRD its space fields.

Errors are the library's one-line messages, which name the file (the command line's words):
OSError (FileNotFoundError, PermissionError, IsADirectoryError) when the file or its folder
cannot be reached, ValueError when its contents or its name are not something winnow reads or
writes.
"""

from __future__ import annotations

import os
from typing import Any, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

from . import _winnow
from ._arrays import classify

PathLike = Union[str, "os.PathLike[str]"]

__all__ = ["VolumeHeader", "read_volume", "write_volume", "read_image", "write_mesh", "render_preview"]


class VolumeHeader:
    """Where a volume's voxels lie in space, as its file says, and their spacing.

    Attributes
    ----------
    source : str
        'nifti', 'nrrd' or 'none' (.npy, TIFF stacks and arrays made in memory carry none).
    spacing : tuple of float
        The voxel size along array axes 0, 1, 2 (z, y, x), in the file's units (NIfTI's
        |pixdim|, NRRD's spacings or the lengths of its space directions; 1 where none).
    affine : numpy.ndarray
        4x4, from array indices (axis 0, 1, 2 of the array read_volume returns) to world
        coordinates (RAS+).
    xyz_affine : numpy.ndarray
        4x4, from the file's voxel index (x, y, z) to world coordinates: nibabel's ``img.affine``.

    Examples
    --------
    >>> import winnow.io
    >>> header = winnow.io.VolumeHeader(spacing=(2.0, 1.0, 0.5))
    >>> header.source, (header.affine @ [1, 0, 0, 1]).tolist()  # one step along axis 0 (z)
    ('none', [0.0, 0.0, 2.0, 1.0])
    """

    __slots__ = ("_spatial", "spacing")

    def __init__(self, spacing: Sequence[float] = (1.0, 1.0, 1.0), spatial: Any = None) -> None:
        self.spacing = tuple(float(s) for s in spacing)
        if len(self.spacing) != 3:
            raise ValueError(f"spacing: expected 3 numbers, got {spacing!r}")
        self._spatial = spatial if spatial is not None else _winnow.SpatialHeader()

    @property
    def source(self) -> str:
        return self._spatial.source

    @property
    def xyz_affine(self) -> np.ndarray:
        if self._spatial.source == "none":
            return np.diag([self.spacing[2], self.spacing[1], self.spacing[0], 1.0])
        return self._spatial.affine

    @property
    def affine(self) -> np.ndarray:
        return np.ascontiguousarray(self.xyz_affine[:, [2, 1, 0, 3]])

    def __repr__(self) -> str:
        return f"VolumeHeader(source={self.source!r}, spacing={self.spacing})"


def read_volume(path: PathLike) -> tuple[np.ndarray, VolumeHeader]:
    """Read a volume file: its voxels and its header.

    Parameters
    ----------
    path : str or os.PathLike
        A NIfTI-1 (.nii, .nii.gz), NRRD (.nrrd, .nhdr), NumPy (.npy) or multi-page TIFF file; the
        format is found from the file's first bytes, else its name.

    Returns
    -------
    volume : numpy.ndarray
        [z, y, x] in the type the file holds (NIfTI scaling applied: float32, or float64 for
        float64 data; a boolean .npy as uint8), x the file's fastest axis; a 2D file is one slice.
        A Fortran-order .npy (``np.save`` of nibabel's [x, y, z] array) is read as its NIfTI would
        be: ``np.load``'s array transposed.
    header : VolumeHeader
        The spacing and spatial header (affine), for ``write_volume(..., like=header)``.

    Raises
    ------
    OSError
        The file cannot be opened.
    ValueError
        Its contents are not a volume winnow reads (the message names the file and the problem).

    See Also
    --------
    write_volume, nibabel.load

    Examples
    --------
    >>> import os, tempfile, numpy as np, winnow.io
    >>> path = os.path.join(tempfile.mkdtemp(), "v.nii.gz")
    >>> winnow.io.write_volume(path, np.arange(24, dtype=np.int16).reshape(2, 3, 4), spacing=(3.0, 2.0, 1.0))
    >>> volume, header = winnow.io.read_volume(path)
    >>> volume.shape, volume.dtype.name, header.spacing, header.source
    ((2, 3, 4), 'int16', (3.0, 2.0, 1.0), 'nifti')
    """
    voxels, spatial, spacing = _winnow.read_volume(os.fspath(path))
    return voxels, VolumeHeader((spacing[2], spacing[1], spacing[0]), spatial)


def write_volume(path: PathLike, array: npt.ArrayLike, *, like: Optional[VolumeHeader] = None,
                 spacing: Optional[Sequence[float]] = None) -> None:
    """Write a volume in the format its name asks for.

    Parameters
    ----------
    path : str or os.PathLike
        ``.nii``, ``.nii.gz`` (NIfTI-1), ``.nrrd`` (gzip-encoded), ``.npy`` or ``.tif`` / ``.tiff``
        (a page per z). The file is written under a temporary name and renamed into place.
    array : array_like
        2D or 3D [z, y, x]: bool (written as uint8), integers of 8 to 64 bits, float32 or float64
        (float16 as float32). NumPy, CuPy or PyTorch (device arrays are copied to the host).
    like : VolumeHeader, optional
        The header of the volume this one was made from (``read_volume``'s): NIfTI and NRRD
        outputs carry its orientation, and its spacing unless ``spacing`` is given. A ``.npy`` is
        the array as given, C order, 2D or 3D: ``np.load`` gives it back.
    spacing : sequence of float, optional
        The voxel size along axes 0, 1, 2 (NIfTI and NRRD keep it; .npy and TIFF do not).

    Raises
    ------
    OSError
        The folder cannot be written.
    ValueError
        A name no format has, or data the format cannot hold.

    See Also
    --------
    read_volume
    """
    a, lib = classify(array, "array")
    if lib.on_device:
        a = lib.to_host(a)
    a = np.asarray(a)
    if a.ndim not in (2, 3):
        raise ValueError(f"array: expected a 2D or 3D array, got {a.ndim} dimensions")
    if a.dtype.kind == "b":
        a = a.view(np.uint8)
    elif a.dtype.kind == "f" and a.itemsize == 2:
        a = a.astype(np.float32)
    elif a.dtype.kind not in "iuf" or a.itemsize > 8:
        raise TypeError(f"array: expected bool, integers or floats, got {a.dtype}")
    rank = a.ndim
    if a.ndim == 2:
        a = a[None]
    if (a.shape[2] > 1 and a.strides[2] != a.itemsize) or any(s < 0 for s in a.strides):
        a = np.ascontiguousarray(a)
    if like is not None and not isinstance(like, VolumeHeader):
        raise TypeError(f"like: expected a VolumeHeader (read_volume's), got {type(like).__name__}")
    if spacing is None:
        spacing = like.spacing if like is not None else (1.0, 1.0, 1.0)
    spacing = tuple(float(s) for s in spacing)
    if len(spacing) != 3 or not all(s > 0 and np.isfinite(s) for s in spacing):
        raise ValueError(f"spacing: expected three positive numbers, got {spacing!r}")
    spatial = like._spatial if like is not None else _winnow.SpatialHeader()
    _winnow.write_volume(os.fspath(path), a, (spacing[2], spacing[1], spacing[0]), spatial, rank)


def read_image(path: PathLike) -> np.ndarray:
    """Read a PNG, JPEG, TIFF or FITS image as 8-bit pixels.

    Parameters
    ----------
    path : str or os.PathLike
        The format is found from the file's first bytes.

    Returns
    -------
    numpy.ndarray
        uint8 [height, width] for grey files, [height, width, 2] grey and alpha,
        [height, width, 3] RGB, [height, width, 4] RGBA. 16-bit samples are rounded to 8 bits;
        FITS data is mapped from its finite range to 0..255 (as the command line reads images).

    Raises
    ------
    OSError
        The file cannot be opened.
    ValueError
        Not an image winnow reads.

    Examples
    --------
    >>> import winnow.io
    >>> image = winnow.io.read_image("coins.png")  # doctest: +SKIP
    >>> image.shape, image.dtype  # doctest: +SKIP
    ((303, 384), dtype('uint8'))
    """
    rgba, channels, _, _ = _winnow.read_image(os.fspath(path))
    if channels == 1:
        return np.ascontiguousarray(rgba[..., 0])
    if channels == 2:
        return np.ascontiguousarray(rgba[..., [0, 3]])
    if channels == 3:
        return np.ascontiguousarray(rgba[..., :3])
    return rgba


def _mesh_arrays(verts: Any, faces: Any, normals: Any, values: Any) -> tuple:
    """The mesh's arrays as the extension takes them (NumPy, C order, float32 and uint32/64)."""

    def host(x: Any, name: str) -> np.ndarray:
        a, lib = classify(x, name)
        return lib.to_host(a) if lib.on_device else np.asarray(a)

    v = np.ascontiguousarray(host(verts, "verts"), dtype=np.float32)
    if v.ndim != 2 or v.shape[1] != 3:
        raise ValueError(f"verts: expected [V, 3], got shape {v.shape}")
    f = host(faces, "faces")
    if f.ndim != 2 or f.shape[1] != 3:
        raise ValueError(f"faces: expected [F, 3], got shape {f.shape}")
    if f.dtype.kind not in "iu":
        raise TypeError(f"faces: expected integers, got {f.dtype}")
    if f.size and (int(f.min()) < 0 or int(f.max()) >= len(v)):
        raise ValueError(f"faces: expected vertex indices 0..{len(v) - 1}")
    f = np.ascontiguousarray(f, dtype=np.uint64 if len(v) >= 2**32 else np.uint32)
    n = None
    if normals is not None:
        n = np.ascontiguousarray(host(normals, "normals"), dtype=np.float32)
        if n.shape != v.shape:
            raise ValueError(f"normals: expected one per vertex, shape {v.shape}, got {n.shape}")
    w = None
    if values is not None:
        w = np.ascontiguousarray(host(values, "values"), dtype=np.float32).reshape(-1)
        if len(w) != len(v):
            raise ValueError(f"values: expected one per vertex ({len(v)}), got {len(w)}")
    return v, f, n, w


def write_mesh(path: PathLike, verts: npt.ArrayLike, faces: npt.ArrayLike, normals: Optional[npt.ArrayLike] = None,
               values: Optional[npt.ArrayLike] = None) -> None:
    """Write a triangle mesh as PLY, OBJ or STL, by the file's name.

    Parameters
    ----------
    path : str or os.PathLike
        ``.ply`` (binary little-endian; normals and values kept), ``.obj`` (text; normals kept)
        or ``.stl`` (binary; per-triangle normals from the geometry). Written under a temporary
        name and renamed into place.
    verts : array_like
        [V, 3] positions, written as given: the file's x, y, z are columns 0, 1, 2. (Pass world
        coordinates, ``marching_cubes(..., affine=)``; for a volume's index space, whose columns
        are z, y, x, reverse them, and the faces' order with them, to keep the surface facing out.)
    faces : array_like
        [F, 3] vertex indices, counter-clockwise seen from outside.
    normals : array_like, optional
        [V, 3] per-vertex normals (PLY, OBJ).
    values : array_like, optional
        [V] per-vertex scalars (PLY only).

    Raises
    ------
    OSError
        The folder cannot be written.
    ValueError
        A name of no mesh format, inconsistent arrays, a mesh the format cannot hold.

    See Also
    --------
    winnow.marching_cubes, trimesh.load

    Examples
    --------
    >>> import os, tempfile, numpy as np, winnow, winnow.io
    >>> z, y, x = np.mgrid[-8:9, -8:9, -8:9]
    >>> verts, faces, normals, values = winnow.marching_cubes((x * x + y * y + z * z).astype(np.float32), 25.0)
    >>> winnow.io.write_mesh(os.path.join(tempfile.mkdtemp(), "ball.ply"), verts, faces, normals, values)
    """
    v, f, n, w = _mesh_arrays(verts, faces, normals, values)
    _winnow.write_mesh(os.fspath(path), v, f, n, w)


def render_preview(verts: npt.ArrayLike, faces: npt.ArrayLike, normals: Optional[npt.ArrayLike] = None, *,
                   size: tuple = (512, 512), view_from: Sequence[float] = (1.0, 1.4, 0.9)) -> np.ndarray:
    """A shaded picture of a triangle mesh, as the command line previews meshes.

    Parameters
    ----------
    verts, faces, normals : array_like
        As for :func:`write_mesh` (normals unused: shading takes the faces' area-weighted normals).
    size : (int, int), optional
        (height, width) in pixels, 1 to 16384 each.
    view_from : sequence of float, optional
        The direction from the mesh toward the viewer, in the verts' x, y, z (columns 0, 1, 2).

    Returns
    -------
    numpy.ndarray
        uint8 RGBA [height, width, 4]: an orthographic view that the mesh fills, Lambert shading
        with the light at the viewer, a white background.

    Examples
    --------
    >>> import numpy as np, winnow, winnow.io
    >>> z, y, x = np.mgrid[-8:9, -8:9, -8:9]
    >>> verts, faces, _, _ = winnow.marching_cubes((x * x + y * y + z * z).astype(np.float32), 25.0)
    >>> winnow.io.render_preview(verts, faces, size=(64, 96)).shape
    (64, 96, 4)
    """
    v, f, n, _ = _mesh_arrays(verts, faces, normals, None)
    if len(size) != 2:
        raise ValueError(f"size: expected (height, width), got {size!r}")
    height, width = (int(s) for s in size)
    view = tuple(float(c) for c in view_from)
    if len(view) != 3 or not any(view):
        raise ValueError(f"view_from: expected a non-zero direction (x, y, z), got {view_from!r}")
    return _winnow.render_preview(v, f, n, width, height, view)
