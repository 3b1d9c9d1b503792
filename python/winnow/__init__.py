"""winnow: data-parallel image primitives for NumPy, CuPy and PyTorch arrays, on the CPU and on
CUDA GPUs.

- ``compact(a, mask)``, ``select(a, op, threshold)``, ``flatnonzero(a)``: stream compaction.
- ``label(a, connectivity)``: connected components of 2D images and 3D volumes, binary or
  multi-label (a drop-in for cc3d.connected_components, skimage.measure.label and
  scipy.ndimage.label); ``statistics(labels, intensity, spacing)``: cc3d.statistics' fields and
  per-label intensity reductions, ``BoundingBoxes`` their lazy boxes.
- ``voxels(volume, level)``: coordinates and values of the voxels above a level.
- ``marching_cubes(volume, level)``: isosurfaces, scikit-image's conventions, welded and watertight.
- ``scramble(image, grid)``, ``unscramble(image, grid)``: square-tile puzzles.
- ``winnow.io``: volumes (NIfTI, NRRD, .npy, TIFF) with their spatial header, images, meshes.
- ``devices()``, ``cuda_available()``: the CUDA devices winnow sees.

NumPy in, NumPy out; CuPy arrays and PyTorch CUDA tensors in, the same type out on the same
device, without copies, on the caller's current stream. ``backend="auto" | "cpu" | "cuda"`` on
every call (auto: the CUDA device for device arrays; for host arrays the ``WINNOW_BACKEND``
environment variable, else CUDA when a device answers, else the CPU). The extension releases
the GIL while it works. Errors: bad arguments raise TypeError (type, dtype, device) or
ValueError (shape, value), naming the argument; a backend that is not there raises RuntimeError.
Importing winnow sets ``OMP_WAIT_POLICY=PASSIVE`` unless it is set (see below).
"""

from __future__ import annotations

import os
from importlib.metadata import PackageNotFoundError, version

# OpenMP threads that spin while they wait for work take turns with whatever else runs on their
# cores: on a busy machine a parallel region then waits for a thread that is not running, and a
# call of half a millisecond takes tens (bench/python_busy.py). Passive waiting (threads sleep
# between regions) avoids that for a few microseconds a region. Set before the extension loads
# OpenMP (libgomp reads it then); a value the caller set is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from . import _winnow, io  # noqa: E402 - after the environment above
from .compaction import compact, flatnonzero, select  # noqa: E402
from .isosurface import marching_cubes  # noqa: E402
from .labeling import label  # noqa: E402
from .puzzle import scramble, unscramble  # noqa: E402
from .statistics import BoundingBoxes, statistics  # noqa: E402
from .voxels import voxels  # noqa: E402

try:
    __version__ = version("winnow")
except PackageNotFoundError:  # imported from a source tree
    __version__ = "unknown"

__all__ = ["compact", "select", "flatnonzero", "label", "statistics", "BoundingBoxes", "marching_cubes", "voxels",
           "scramble", "unscramble", "io", "devices", "cuda_available", "__version__"]


def devices() -> list[dict]:
    """The CUDA devices that answer.

    Returns
    -------
    list of dict
        One per device: ``index``, ``name``, ``total_memory_bytes``, ``compute_capability``
        (major, minor), ``multiprocessors``; empty without CUDA (a build without it, no driver or
        no device).

    See Also
    --------
    cuda_available

    Examples
    --------
    >>> import winnow
    >>> isinstance(winnow.devices(), list)
    True
    """
    return _winnow.devices()


def cuda_available() -> bool:
    """Whether this build has the CUDA backend and a device answers.

    Returns
    -------
    bool
        True when ``backend="cuda"`` can run (and ``"auto"`` may choose it).

    See Also
    --------
    devices

    Examples
    --------
    >>> import winnow
    >>> winnow.cuda_available() in (True, False)
    True
    """
    return bool(_winnow.cuda_available())
