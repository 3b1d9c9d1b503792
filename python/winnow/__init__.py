"""winnow: data-parallel image primitives for NumPy, CuPy and PyTorch arrays, on the CPU and on
CUDA GPUs.

- ``compact(a, mask)``, ``select(a, op, threshold)``, ``flatnonzero(a)``: stream compaction.
- ``label(a, connectivity)``: connected components of 2D images and 3D volumes, binary or
  multi-label (a drop-in for cc3d.connected_components); ``statistics(labels)``: cc3d.statistics.
- ``voxels(volume, level)``: coordinates and values of the voxels above a level.
- ``marching_cubes(volume, level)``: isosurfaces, scikit-image's conventions, welded and watertight.
- ``scramble(image, grid)``, ``unscramble(image, grid)``: square-tile puzzles.
- ``devices()``: the CUDA devices winnow sees.

NumPy in, NumPy out; CuPy arrays and PyTorch CUDA tensors in, the same type out on the same
device, without copies, on the caller's current stream. ``backend="auto" | "cpu" | "cuda"`` on
every call (auto: the CUDA device for device arrays; for host arrays the ``WINNOW_BACKEND``
environment variable, else CUDA when a device answers, else the CPU). The extension releases
the GIL while it works. Errors: bad arguments raise TypeError (type, dtype, device) or
ValueError (shape, value), naming the argument; a backend that is not there raises RuntimeError.
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


def devices() -> list:
    """The CUDA devices that answer, as dicts (index, name, total_memory_bytes,
    compute_capability, multiprocessors); empty without CUDA.

    >>> import winnow
    >>> isinstance(winnow.devices(), list)
    True
    """
    return _winnow.devices()


def cuda_available() -> bool:
    """True when this build has the CUDA backend and a device answers."""
    return bool(_winnow.cuda_available())
