"""The per-chunk tasks of winnow.dask: what runs once per chunk, where the chunk lives (a worker's
memory, NumPy on the CPU or CuPy on the GPU).

- ``label_chunk`` (stage 1): labels the chunk with ``winnow.label`` and summarises its labels in
  the same task: per label its first voxel, count and, for statistics, box and exact coordinate
  sums (one pass of the library over the chunk's labels: ``chunk_label_summary`` on the host,
  the device statistics with first voxels on a device), the chunk's face planes on the sides it
  shares with other chunks (labels and, for multi-label input, values), and which labels lie on
  them. The provisional labels stay in memory, or go to the store (a zarr array given as
  ``store=``, or label_to_zarr's chunk files).
- ``far_piece`` / ``far_pieces``: the pieces of a chunk's low faces that its lower neighbours join
  (a whole face for a face neighbour; a line or a corner for an edge or corner neighbour): on a
  distributed scheduler small tasks of their own (a face each, the lines and corners together),
  so a worker fetches planes, never a chunk's labels.
- ``chunk_pairs``: the equivalences between the chunk and its forward neighbours (each pair of
  neighbouring chunks is joined once, by the one with the lower index): the distinct label pairs
  of touching voxels across every face, edge and corner that the connectivity relates
  (``chunk_border_pairs`` in C++).
- ``chunk_rows`` / ``chunk_table`` (after the merge): which labels survive, how many first voxels
  of surviving components each row of the chunk holds, and the chunk's table local label ->
  global label; ``relabel_chunk`` (stage 3): ``table[labels]``.

Coordinates: every chunk is three-dimensional [z, y, x] here (an image is one slice); a label's
*key* is the global flat index of its first voxel, ``(z * Y + y) * X + x`` over the whole volume,
the order in which a whole-volume labeling numbers components.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from .. import _winnow
from .._arrays import classify, on_device
from ..labeling import label as _label
from . import _stores

INT64_MAX = np.iinfo(np.int64).max


@dataclass(frozen=True, eq=False)
class Plan:
    """The parameters every task of one labeling shares."""

    connectivity: int  # 6, 18 or 26 (a 2D image is a one-slice volume: 4 -> 6, 8 -> 26)
    multilabel: bool  # neighbours join only when their values are equal
    min_area: int
    largest_k: int
    statistics: bool  # boxes and coordinate sums too
    values: bool  # keep each label's value (the CLI's statistics of multi-label input)
    threads: int  # OpenMP threads of one host chunk's labeling
    store: Any = None  # a zarr array or _stores.ChunkFiles for the provisional labels, or None (in memory)
    ndim: int = 3  # the input's dimensions (2: an image; its store has no slice axis)

    @property
    def counts(self) -> bool:
        """Whether the labels' voxel counts are needed (else first voxels alone)."""
        return self.min_area > 1 or self.largest_k > 0 or self.statistics


@dataclass(frozen=True)
class ChunkSpec:
    """Where a chunk sits: its position in the grid of non-empty chunks, its first voxel's global
    coordinates, its shape, the volume's shape, and which of its faces it shares with another
    chunk (low: towards index 0 along the axis; high: the other side)."""

    position: tuple
    offset: tuple
    shape: tuple
    volume: tuple
    low: tuple
    high: tuple

    def keys(self, flat: np.ndarray) -> np.ndarray:
        """Global keys (flat indices in the volume) of local flat indices."""
        _, ny, nx = self.shape
        _, vy, vx = self.volume
        z, rest = np.divmod(flat, ny * nx)
        y, x = np.divmod(rest, nx)
        return ((z + self.offset[0]) * vy + (y + self.offset[1])) * vx + (x + self.offset[2])

    def region(self, ndim: int) -> tuple:
        """The chunk's slices in a store of ndim dimensions (2: no slice axis)."""
        slices = tuple(slice(o, o + s) for o, s in zip(self.offset, self.shape))
        return slices[3 - ndim:]


def register_result_sizes(*classes: type) -> None:
    """Tells dask how much memory a task result of these dataclasses holds: the arrays in its
    fields (NumPy or CuPy). dask's sizeof otherwise counts the object alone, some 50 bytes, and a
    distributed scheduler then takes a chunk's record for free to move: it may place or steal the
    chunk's next task onto another worker, which fetches the whole chunk (a 512^3 CuPy chunk's
    labels are 512 MiB, through host memory and TCP)."""
    from dask.sizeof import sizeof

    def fields_size(result: Any) -> int:
        return sys.getsizeof(result) + sum(sizeof(getattr(result, f.name)) for f in dataclasses.fields(result))

    for cls in classes:
        sizeof.register(cls)(fields_size)


@dataclass
class ChunkRecord:
    """Stage 1's result for one chunk. Arrays indexed by label 0..count (row 0 the background);
    boxes and sums local to the chunk, axes z, y, x; faces on host memory."""

    spec: ChunkSpec
    labels: Any  # the provisional labels (NumPy or CuPy), or None when written to the store
    count: int
    first: np.ndarray  # int64 local flat index of each label's first voxel
    voxels: Optional[np.ndarray]  # uint64, None unless Plan.counts
    lower: Optional[np.ndarray]  # int64 [count + 1, 3] with statistics, else None
    upper: Optional[np.ndarray]
    sums: Optional[np.ndarray]  # uint64 [count + 1, 3]
    values: Optional[np.ndarray]  # each label's value (Plan.values), else None
    faces: dict = field(default_factory=dict)  # (axis, 0 low | 1 high) -> (labels, values or None)
    boundary: np.ndarray = None  # the labels on shared faces, ascending (int64)


def _is_device(a: Any) -> bool:
    cupy = sys.modules.get("cupy")
    return cupy is not None and isinstance(a, cupy.ndarray)


def _to_host(a: Any) -> np.ndarray:
    """A C-contiguous NumPy copy or view of a host or device array."""
    if _is_device(a):
        import cupy

        return cupy.ascontiguousarray(a).get()
    return np.ascontiguousarray(a)


def _copy_to_host(a: Any) -> np.ndarray:
    """A C-contiguous NumPy copy (never a view: a face kept as a view of the chunk would keep the
    whole chunk in memory)."""
    return _to_host(a) if _is_device(a) else np.array(a, order="C", copy=True)


def label_block(block: Any, plan: Plan) -> tuple:
    """(labels, N) of one chunk by ``winnow.label``: host chunks on the CPU with plan.threads
    OpenMP threads, device chunks on their device. One call per chunk: a chunked labeling counts
    them in its tests."""
    if _is_device(block):
        return _label(block, plan.connectivity, multilabel=plan.multilabel, return_N=True)
    previous = _winnow.set_cpu_threads_of_calling_thread(plan.threads)
    try:
        return _label(block, plan.connectivity, multilabel=plan.multilabel, return_N=True, backend="cpu")
    finally:
        _winnow.set_cpu_threads_of_calling_thread(previous)


def device_summary(labels: Any, count: int, counts: bool, boxes_and_sums: bool) -> tuple:
    """chunk_label_summary's results for a chunk's labels on a device: the library's device
    statistics with each label's first voxel, one pass on the array's stream. Host arrays back."""
    view, lib = classify(labels, "labels")
    return on_device(lib, _winnow.chunk_label_summary_device, lib.view(view), count, counts, boxes_and_sums)


def _face_slices(axis: int, side: int) -> tuple:
    index = [slice(None)] * 3
    index[axis] = slice(-1, None) if side else slice(0, 1)
    return tuple(index)


def label_chunk(block: Any, spec: ChunkSpec, plan: Plan) -> ChunkRecord:
    """Stage 1 of one chunk: labels, per-label summary, shared faces, the labels on them."""
    labels, count = label_block(block, plan)
    if _is_device(labels):
        first, voxels, lower, upper, sums = device_summary(labels, count, plan.counts, plan.statistics)
    else:
        first, voxels, lower, upper, sums = _winnow.chunk_label_summary(labels, count, plan.counts, plan.statistics)
    values = None
    if plan.values:
        z, rest = np.divmod(first[1:], spec.shape[1] * spec.shape[2])
        y, x = np.divmod(rest, spec.shape[2])
        values = np.zeros(count + 1, dtype=block.dtype)
        values[1:] = _gather(block, z, y, x)
    faces = {}
    marks = np.zeros(count + 1, dtype=bool)
    compare_values = plan.multilabel and np.dtype(block.dtype).kind != "b"
    for axis in range(3):
        for side, shared in ((0, spec.low[axis]), (1, spec.high[axis])):
            if not shared:
                continue
            index = _face_slices(axis, side)
            face = _copy_to_host(labels[index])
            faces[axis, side] = (face, _comparable(_copy_to_host(block[index])) if compare_values else None)
            marks[face.reshape(-1)] = True
    marks[0] = False
    boundary = np.flatnonzero(marks)
    if plan.store is not None:
        _stores.write(plan.store, spec.region(plan.ndim), _to_host(labels).reshape(spec.shape[3 - plan.ndim:]))
        labels = None
    return ChunkRecord(spec, labels, count, first, voxels, lower, upper, sums, values, faces, boundary)


def _gather(block: Any, *index: np.ndarray) -> np.ndarray:
    """block[index] on the host (device chunks: indexed on the device, the values copied back)."""
    if _is_device(block):
        import cupy

        return block[tuple(cupy.asarray(i) for i in index)].get()
    return np.asarray(block[index])


def _comparable(values: np.ndarray) -> np.ndarray:
    """Face values as unsigned integers of their width (what the border pairs compare): equal
    non-zero values are equal bits; bool as uint8."""
    if values.dtype.kind == "b":
        return values.view(np.uint8)
    return np.ascontiguousarray(values).view(np.dtype(f"u{values.dtype.itemsize}"))


# Neighbour directions (dz, dy, dx) in which a chunk joins its neighbours: forward ones only (the
# first non-zero step is +1), so each pair of chunks is joined once; how many axes a direction
# moves along says what the chunks share: 1 a face, 2 an edge, 3 a corner.
def forward_directions(connectivity: int) -> list:
    reach = {6: 1, 18: 2, 26: 3}[connectivity]
    found = []
    for dz in (-1, 0, 1):
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                step = (dz, dy, dx)
                moved = sum(s != 0 for s in step)
                if 0 < moved <= reach and next(s for s in step if s) == 1:
                    found.append(step)
    return found


def _piece(face: tuple, direction: tuple, near: bool) -> tuple:
    """The part of a face that faces the neighbour in `direction` (near: the face is the lower
    chunk's high face; else the neighbour's low face): along every other axis the direction moves,
    the first or last line of the face."""
    leading = next(axis for axis, s in enumerate(direction) if s)
    index = [slice(None)] * 3
    for axis, step in enumerate(direction):
        if axis != leading and step:
            last = (step > 0) == near
            index[axis] = slice(-1, None) if last else slice(0, 1)
    index = tuple(index)
    labels, values = face
    return np.ascontiguousarray(labels[index]), None if values is None else np.ascontiguousarray(values[index])


def without_faces(record: ChunkRecord) -> ChunkRecord:
    """The record without its faces, for the tasks after the joining: the faces (6 planes a
    chunk) are freed once the border pairs are found, before the merge waits for every chunk."""
    return dataclasses.replace(record, faces={})


def far_piece(record: ChunkRecord, direction: tuple) -> tuple:
    """The piece of the chunk's low faces that its neighbour below in `direction` joins: the whole
    face for a face neighbour, a line or a corner of it for an edge or corner neighbour."""
    leading = next(axis for axis, s in enumerate(direction) if s)
    return _piece(record.faces[leading, 0], direction, near=False)


def far_pieces(record: ChunkRecord, directions: list) -> dict:
    """far_piece for each of the directions: direction -> piece (every piece of the chunk's low
    faces that its lower neighbours join, faces, lines and corner, small enough to travel together)."""
    return {d: far_piece(record, d) for d in directions}


def pick(mapping: dict, key: Any) -> Any:
    return mapping[key]


@dataclass
class ChunkJoin:
    """A chunk's equivalences with its forward neighbours, and what the merge needs of the labels
    on its shared faces (keys, counts, global boxes and sums, values) and of its others (the
    largest_k candidates)."""

    index: int  # the chunk's linear index in the grid
    count: int
    far: list  # linear indices of the neighbours
    pairs: list  # per neighbour: int64 [P, 2] (this chunk's label, the neighbour's label)
    boundary: np.ndarray
    keys: np.ndarray
    voxels: np.ndarray
    lower: Optional[np.ndarray]
    upper: Optional[np.ndarray]
    sums: Optional[np.ndarray]
    values: Optional[np.ndarray]
    candidates: Optional[tuple]  # (voxels, keys) of the interior labels that may be among the largest_k


def global_boxes(record: ChunkRecord, labels: np.ndarray) -> tuple:
    """(lower, upper, sums) of the given labels in global coordinates (exact)."""
    offset = np.asarray(record.spec.offset, dtype=np.int64)
    lower = record.lower[labels] + offset
    upper = record.upper[labels] + offset
    sums = record.sums[labels] + offset.astype(np.uint64) * record.voxels[labels][:, None]
    return lower, upper, sums


def chunk_pairs(record: ChunkRecord, index: int, directions: list, far: list, pieces: list, plan: Plan) -> ChunkJoin:
    """The chunk's border pairs with its forward neighbours, and its boundary labels' facts."""
    pairs = []
    for direction, piece in zip(directions, pieces):
        leading = next(axis for axis, s in enumerate(direction) if s)
        near_labels, near_values = _piece(record.faces[leading, 1], direction, near=True)
        far_labels, far_values = piece
        if far_labels.dtype != near_labels.dtype:
            near_labels, far_labels = near_labels.astype(np.uint64), far_labels.astype(np.uint64)
        found = _winnow.chunk_border_pairs(near_labels, far_labels, near_values, far_values,
                                           tuple(s != 0 for s in direction), plan.connectivity)
        pairs.append(found.astype(np.int64))
    boundary = record.boundary
    lower = upper = sums = None
    if plan.statistics:
        lower, upper, sums = global_boxes(record, boundary)
    candidates = None
    if plan.largest_k:
        interior = np.ones(record.count + 1, dtype=bool)
        interior[0] = False
        interior[boundary] = False
        interior &= record.voxels >= plan.min_area
        labels = np.flatnonzero(interior)
        counts = record.voxels[labels]
        if labels.size > plan.largest_k:
            # The k largest, ties to the lower label (the earlier first voxel).
            order = np.lexsort((labels, -counts.astype(np.int64)))[:plan.largest_k]
            labels, counts = labels[order], counts[order]
        candidates = (counts, record.spec.keys(record.first[labels]))
    voxels = record.voxels[boundary] if record.voxels is not None else np.zeros(boundary.size, np.uint64)
    return ChunkJoin(index, record.count, list(far), pairs, boundary, record.spec.keys(record.first[boundary]),
                     voxels, lower, upper, sums,
                     None if record.values is None else record.values[boundary], candidates)


def surviving_labels(record: ChunkRecord, owned: np.ndarray, rule: Any) -> np.ndarray:
    """The chunk's labels that number a surviving component (ascending): its interior labels
    that pass min_area and largest_k (``rule``), and the boundary labels that are their
    component's first part (``owned``, decided by the merge)."""
    if record.voxels is None:  # no filter
        survive = np.ones(record.count + 1, dtype=bool)
    else:
        survive = rule.keep(record.voxels, lambda labels: record.spec.keys(record.first[labels]))
    survive[0] = False
    survive[record.boundary] = owned
    return np.flatnonzero(survive)


@dataclass
class ChunkRows:
    """How many surviving first voxels the rows (z, y) of a chunk hold -- the rows that hold any,
    as row indices z * ny + y ascending and their counts: a chunk of 512^2 rows and a few thousand
    labels sends a few thousand numbers, not 512^2 -- and where the chunk's owned boundary labels
    fall: their component, row and rank among the row's survivors."""

    rows: np.ndarray  # int64, the rows holding survivors' first voxels, ascending
    counts: np.ndarray  # int64, how many each
    planes: int  # the chunk's nz
    plane_rows: int  # the chunk's ny (row r lies in plane r // ny)
    components: np.ndarray
    owner_rows: np.ndarray
    owner_ranks: np.ndarray


def _rows_and_ranks(record: ChunkRecord, labels: np.ndarray) -> tuple:
    """Each label's row (z * ny + y) and rank among the given labels of its row (labels ascending,
    so rows ascend too)."""
    rows = record.first[labels] // record.spec.shape[2]
    ranks = np.arange(labels.size, dtype=np.int64) - np.searchsorted(rows, rows)
    return rows, ranks


def chunk_rows(record: ChunkRecord, status: Any) -> ChunkRows:
    labels = surviving_labels(record, status.owned, status.rule)
    rows, ranks = _rows_and_ranks(record, labels)
    held, counts = np.unique(rows, return_counts=True)
    owners = record.boundary[status.owned]
    at = np.searchsorted(labels, owners)
    nz, ny, _ = record.spec.shape
    return ChunkRows(held.astype(np.int64), counts.astype(np.int64), nz, ny, status.components[status.owned], rows[at],
                     ranks[at])



@dataclass
class ChunkTable:
    """A chunk's table local label -> global label (0: background or removed) and, with
    statistics, its interior survivors' facts and its background's (zeros and removed labels)."""

    table: np.ndarray
    numbers: Optional[np.ndarray] = None
    voxels: Optional[np.ndarray] = None
    lower: Optional[np.ndarray] = None
    upper: Optional[np.ndarray] = None
    sums: Optional[np.ndarray] = None
    values: Optional[np.ndarray] = None
    background: Optional[tuple] = None  # (voxels, lower [3], upper [3], sums [3]) global
    labels: Any = None  # the provisional labels (None: in the store), for stage 3


register_result_sizes(ChunkRecord, ChunkJoin, ChunkRows, ChunkTable)


def table_statistics(table: ChunkTable) -> ChunkTable:
    """The table's statistics without the table and the labels (what the statistics gather)."""
    return ChunkTable(None, table.numbers, table.voxels, table.lower, table.upper, table.sums, table.values,
                      table.background)


def chunk_table(record: ChunkRecord, offsets: tuple, numbering: Any, plan: Plan, dtype: Any) -> ChunkTable:
    """The chunk's table: a surviving component's first voxel in row (z, y) of this chunk is
    numbered base[z] (the survivors' first voxels in the volume before this row's stretch of the
    chunk row) + its row's offset (those of this chunk row before this chunk's stretch; `offsets`:
    the rows that hold survivors, ascending, and their offsets) + its rank in its row + 1; the
    boundary labels take their component's number from the merge."""
    labels = surviving_labels(record, numbering.owned, numbering.rule)
    rows, ranks = _rows_and_ranks(record, labels)
    held, row_offsets = offsets
    table = np.zeros(record.count + 1, dtype=dtype)
    table[labels] = numbering.base[rows // record.spec.shape[1]] + row_offsets[np.searchsorted(held, rows)] + ranks + 1
    table[record.boundary] = numbering.numbers
    result = ChunkTable(table, labels=record.labels)
    if plan.statistics:
        interior = np.ones(labels.size, dtype=bool)
        interior[np.searchsorted(labels, record.boundary[numbering.owned])] = False
        labels = labels[interior]
        result.numbers = table[labels].astype(np.int64)
        result.voxels = record.voxels[labels]
        result.lower, result.upper, result.sums = global_boxes(record, labels)
        if record.values is not None:
            result.values = record.values[labels]
        removed = np.flatnonzero(table == 0)  # the background (0) and the removed labels
        removed = removed[record.voxels[removed] > 0]
        voxels = int(record.voxels[removed].sum())
        if voxels:
            lower, upper, sums = global_boxes(record, removed)
            result.background = (voxels, lower.min(axis=0), upper.max(axis=0), sums.sum(axis=0, dtype=np.uint64))
        else:
            result.background = (0, np.full(3, INT64_MAX, np.int64), np.full(3, -1, np.int64), np.zeros(3, np.uint64))
    return result


def relabel_chunk(table: ChunkTable, spec: ChunkSpec, store: Any, ndim: int, device: bool) -> Any:
    """Stage 3: the chunk's final labels, ``table[labels]`` (on the labels' device); labels read
    from the store when the provisional labels went there (onto the current device for device
    input)."""
    labels = table.labels
    lookup = table.table
    if labels is None:
        labels = np.asarray(store[spec.region(ndim)]).reshape(spec.shape)
        if device:
            import cupy

            labels = cupy.asarray(labels)
    if _is_device(labels):
        import cupy

        return cupy.take(cupy.asarray(lookup), labels)
    return _relabel_host(lookup, labels)


def _relabel_host(lookup: np.ndarray, labels: Any, in_place: bool = False) -> np.ndarray:
    """lookup[labels] on the host in one pass of the extension (numpy.take first converts the
    labels to intp, a second pass and an array of 8 bytes a voxel). With in_place, into labels
    themselves when their type and layout allow (a chunk read for this alone: no second array of
    its size, whose fresh pages a worker process would fault in)."""
    labels = np.asarray(labels)
    if labels.ndim and labels.shape[-1] > 1 and labels.strides[-1] != labels.itemsize:
        labels = np.ascontiguousarray(labels)  # the pass reads rows with x adjacent
    writable = labels.flags.writeable and labels.flags.c_contiguous and labels.dtype == lookup.dtype
    out = labels if in_place and writable else np.empty(labels.shape, dtype=lookup.dtype)
    as_volume = (1,) * (3 - labels.ndim) + labels.shape
    _winnow.relabel_chunk(labels.reshape(as_volume), lookup, out.reshape(as_volume))
    return out


def relabel_into(table: ChunkTable, spec: ChunkSpec, store: Any, out: Any, ndim: int) -> int:
    """Stage 3 into a zarr array: the chunk's provisional labels read from the store, relabelled
    and written to the same region of out (the chunk's own zarr chunk); a chunk without labels
    left is not written (it reads as the array's zeros). Returns its voxel count."""
    region = spec.region(ndim)
    if table.table[1:].any():
        _stores.write(out, region, _relabel_host(table.table, store[region], in_place=True))
    return int(np.prod(spec.shape))


def empty_block(shape: tuple, dtype: Any, device: bool) -> Any:
    """The labels of a chunk without voxels (CuPy on the current device, else NumPy)."""
    if device:
        import cupy

        return cupy.zeros(shape, dtype)
    return np.zeros(shape, dtype)
