"""The central steps of winnow.dask, between the per-chunk tasks: small data, one task each.

- ``merge_chunks``: the union-find over the chunk labels on shared faces (nodes: those labels;
  edges: the border pairs), by hooking roots onto smaller roots and pointer jumping, all NumPy;
  each component's first part (the smallest key), merged count, box, sums; which components
  survive min_area and largest_k (``SurvivalRule``).
- ``chunk_row_offsets`` (one task per row of chunks along x) and ``number_components``: the
  global numbering. A surviving component is numbered by the rank of its first voxel in raster
  order among all survivors' first voxels, counted without sorting them: each chunk counts its
  survivors' first voxels per row (z, y); along a row of chunks (same z and y range) the counts
  interleave row by row, so a prefix sum over (z, y, chunk) gives each chunk row's offsets; across
  rows of chunks only the per-plane totals matter (a prefix sum over (z, row of chunks)). A first
  voxel's number is then base[z, row of chunks] + offset[z, y, chunk] + its rank in its row + 1.
  The central step sees per-plane totals and the boundary components only, never a chunk's labels.
- ``assemble_statistics``: cc3d.statistics' fields from the chunks' survivors and the merged
  components (exact integer sums, one division per centroid as the whole-volume call divides).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from ..statistics import _empty_raw, cc3d_fields
from ._chunks import register_result_sizes


def _empty_statistics(ndim: int) -> dict:
    """winnow.statistics' fields of an array without voxels (the background alone)."""
    raw = _empty_raw(ndim, None)
    return cc3d_fields(raw["voxel_counts"], raw["bounding_boxes"], raw["centroids"])


def _cc3d_fields(counts: np.ndarray, lower: np.ndarray, upper: np.ndarray, centroids: np.ndarray, ndim: int,
                 shape: tuple) -> dict:
    """winnow.statistics' fields (the dtypes winnow.label gives for an array of `shape`) from rows
    [z, y, x] of labels 0..N: counts, first and last index per axis (a label without voxels has
    first > last), centroids."""
    axes = slice(3 - ndim, 3)
    voxels = int(np.prod(shape, dtype=np.uint64))
    side = max(shape) if shape else 0
    box_dtype = np.uint16 if side <= 0xFFFF else np.uint32 if side <= 0xFFFFFFFF else np.uint64
    boxes = np.empty((len(counts), 2 * ndim), box_dtype)
    empty = counts == 0
    low, high = lower[:, axes].copy(), upper[:, axes].copy()
    low[empty], high[empty] = np.iinfo(box_dtype).max, 0
    boxes[:, 0::2], boxes[:, 1::2] = low, high
    count_dtype = np.uint32 if voxels < 2**32 else np.uint64
    return cc3d_fields(counts.astype(count_dtype), boxes, np.ascontiguousarray(centroids[:, axes], dtype=np.float64))

INT64_MAX = np.iinfo(np.int64).max


@dataclass(frozen=True)
class SurvivalRule:
    """min_area and largest_k as one predicate on (voxel count, key), the same for every chunk and
    component: at least min_area voxels and, when largest_k cuts, at or above the k-th largest
    (count descending, then key ascending: ties go to the earlier first voxel, the lower label of
    the whole-volume call, as ``winnow.label``'s rule)."""

    min_area: int
    threshold: Optional[tuple] = None  # (count, key) of the k-th largest component

    def keep(self, voxels: np.ndarray, keys_of: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """Which entries survive; keys_of(indices) gives the keys of the entries asked about (only
        those tied with the threshold's count)."""
        keep = voxels >= self.min_area if self.min_area > 1 else np.ones(voxels.shape, dtype=bool)
        if self.threshold is None:
            return keep
        count, key = self.threshold
        above = voxels > count
        tied = np.flatnonzero(keep & (voxels == count))
        above[tied[keys_of(tied) <= key]] = True
        return keep & above


def survival_rule(min_area: int, largest_k: int, voxels: np.ndarray, keys: np.ndarray) -> SurvivalRule:
    """The rule whose largest_k threshold is the k-th of the candidates (voxels, keys): every
    component that may be among the k largest (the merged components, and each chunk's own k
    largest interior labels: no other can be)."""
    if not largest_k:
        return SurvivalRule(min_area)
    passing = voxels >= min_area
    voxels, keys = voxels[passing], keys[passing]
    if voxels.size < largest_k:
        return SurvivalRule(min_area)
    order = np.lexsort((keys, -voxels.astype(np.int64)))
    kth = order[largest_k - 1]
    return SurvivalRule(min_area, (int(voxels[kth]), int(keys[kth])))


def union_roots(nodes: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Each node's root, the smallest node of its component, for edges (u, v): every round hooks
    the larger root of each edge whose ends differ onto the smaller, then jumps pointers until
    every node points at a root; rounds repeat over the edges still split."""
    parent = np.arange(nodes, dtype=np.int64)
    while u.size:
        pu, pv = parent[u], parent[v]
        split = pu != pv
        u, v, pu, pv = u[split], v[split], pu[split], pv[split]
        if not u.size:
            break
        np.minimum.at(parent, np.maximum(pu, pv), np.minimum(pu, pv))
        while True:
            grand = parent[parent]
            if np.array_equal(grand, parent):
                break
            parent = grand
    return parent


@dataclass
class Merge:
    """The union of the chunks' boundary labels: per chunk, each boundary label's component and
    whether it numbers a surviving component (its first part); per component, key, count and (with
    statistics) box, sums and value."""

    rule: SurvivalRule
    components: list  # per chunk (linear index): int64 component of each boundary label
    owned: list  # per chunk: bool, the label is its surviving component's first part
    keys: np.ndarray
    voxels: np.ndarray
    survives: np.ndarray
    lower: Optional[np.ndarray] = None
    upper: Optional[np.ndarray] = None
    sums: Optional[np.ndarray] = None
    values: Optional[np.ndarray] = None


def merge_chunks(joins: list, min_area: int, largest_k: int) -> Merge:
    """The union-find over all chunks' boundary labels (joins: ChunkJoin per chunk, by index)."""
    joins = sorted(joins, key=lambda j: j.index)
    chunk_base = np.concatenate([[0], np.cumsum([j.count for j in joins], dtype=np.int64)])
    ids = np.concatenate([chunk_base[j.index] + j.boundary for j in joins] + [np.zeros(0, np.int64)])
    sizes = [j.boundary.size for j in joins]
    u, v = [], []
    for j in joins:
        for far, pairs in zip(j.far, j.pairs):
            u.append(chunk_base[j.index] + pairs[:, 0])
            v.append(chunk_base[far] + pairs[:, 1])
    u = np.searchsorted(ids, np.concatenate(u + [np.zeros(0, np.int64)]))
    v = np.searchsorted(ids, np.concatenate(v + [np.zeros(0, np.int64)]))
    roots = union_roots(ids.size, u, v)
    is_root = roots == np.arange(ids.size)
    component = (np.cumsum(is_root) - 1)[roots]
    count = int(is_root.sum())
    keys = np.concatenate([j.keys for j in joins] + [np.zeros(0, np.int64)])
    voxels = np.concatenate([j.voxels for j in joins] + [np.zeros(0, np.uint64)])
    first_keys = np.full(count, INT64_MAX, dtype=np.int64)
    np.minimum.at(first_keys, component, keys)
    first_part = keys == first_keys[component]
    totals = np.zeros(count, dtype=np.uint64)
    np.add.at(totals, component, voxels)
    candidates = [(totals, first_keys)] + [j.candidates for j in joins if j.candidates is not None]
    rule = survival_rule(min_area, largest_k, np.concatenate([c[0] for c in candidates]),
                         np.concatenate([c[1] for c in candidates]))
    survives = rule.keep(totals, lambda index: first_keys[index])
    owned = first_part & survives[component]
    merged = Merge(rule, np.split(component, np.cumsum(sizes)[:-1]), np.split(owned, np.cumsum(sizes)[:-1]),
                   first_keys, totals, survives)
    if joins and joins[0].lower is not None:
        merged.lower = np.full((count, 3), INT64_MAX, dtype=np.int64)
        merged.upper = np.full((count, 3), -1, dtype=np.int64)
        merged.sums = np.zeros((count, 3), dtype=np.uint64)
        np.minimum.at(merged.lower, component, np.concatenate([j.lower for j in joins]))
        np.maximum.at(merged.upper, component, np.concatenate([j.upper for j in joins]))
        np.add.at(merged.sums, component, np.concatenate([j.sums for j in joins]))
    if joins and joins[0].values is not None:
        values = np.concatenate([j.values for j in joins])
        merged.values = np.zeros(count, dtype=values.dtype)
        merged.values[component[first_part]] = values[first_part]
    return merged


@dataclass
class BoundaryStatus:
    """One chunk's part of the merge: its boundary labels' components and which of them number a
    surviving component, and the survival rule of its other labels."""

    components: np.ndarray
    owned: np.ndarray
    rule: SurvivalRule


def merge_status(merge: Merge, index: int) -> BoundaryStatus:
    return BoundaryStatus(merge.components[index], merge.owned[index], merge.rule)


def merge_statuses(merge: Merge, indices: list) -> list:
    """merge_status of each chunk of a row of chunks (one task a row)."""
    return [merge_status(merge, index) for index in indices]


@dataclass
class ChunkRowOffsets:
    """A row of chunks along x (same z and y range): each chunk's offsets as (its rows that hold
    survivors, ascending; their offsets: survivors' first voxels of the row of chunks in plane z
    before row y of the chunk, and in row y before the chunk), the plane totals [nz], and the owned
    boundary labels' numbers within their plane."""

    offsets: list
    totals: np.ndarray
    components: np.ndarray
    planes: np.ndarray
    numbers: np.ndarray


def chunk_row_offsets(rows: list) -> ChunkRowOffsets:
    """rows: ChunkRows of the chunks of one row of chunks, in x order (the same planes and rows
    each). Within a plane z the chunks' rows interleave as (z, y, chunk): a row's offset is the
    count of survivors before it in that order within its plane, found from the rows that hold
    any, so the work follows the survivors, not the chunks' rows."""
    planes, ny = (rows[0].planes, rows[0].plane_rows) if rows else (0, 1)
    empty = np.zeros(0, np.int64)
    held = np.concatenate([r.rows for r in rows] + [empty])
    counts = np.concatenate([r.counts for r in rows] + [empty])
    chunk = np.concatenate([np.full(r.rows.size, k, np.int64) for k, r in enumerate(rows)] + [empty])
    order = np.lexsort((chunk, held))  # (z, y, chunk) order
    ordered = counts[order]
    z = held[order] // ny
    totals = np.bincount(z, weights=ordered, minlength=planes).astype(np.int64)
    offsets = np.empty_like(ordered)
    offsets[order] = np.cumsum(ordered) - ordered - (np.cumsum(totals) - totals)[z]
    firsts = np.concatenate(([0], np.cumsum([r.rows.size for r in rows], dtype=np.int64)))
    per_chunk = [(r.rows, offsets[firsts[k]:firsts[k + 1]]) for k, r in enumerate(rows)]
    components, owner_planes, numbers = [], [], []
    for (held_k, offsets_k), r in zip(per_chunk, rows):
        components.append(r.components)
        owner_planes.append(r.owner_rows // ny)
        numbers.append(offsets_k[np.searchsorted(held_k, r.owner_rows)] + r.owner_ranks)
    return ChunkRowOffsets(per_chunk, totals, np.concatenate(components + [empty]),
                           np.concatenate(owner_planes + [empty]), np.concatenate(numbers + [empty]))


def row_offsets_of(row: ChunkRowOffsets, k: int) -> tuple:
    return row.offsets[k]


def row_summary(row: ChunkRowOffsets) -> ChunkRowOffsets:
    """The row of chunks without its chunks' offsets: what the central numbering reads."""
    return ChunkRowOffsets([], row.totals, row.components, row.planes, row.numbers)


@dataclass
class Numbering:
    """The global numbering: N, the plane bases [Z, rows of chunks], each component's number (0:
    removed)."""

    count: int
    base: np.ndarray
    numbers: np.ndarray


def number_components(merge: Merge, rows: list, starts: list, chunk_rows: list) -> Numbering:
    """rows: every row of chunks' summary; starts: their first plane z; chunk_rows: their index
    along y (the base's column)."""
    planes = max((s + r.totals.size for s, r in zip(starts, rows)), default=0)
    columns = max(chunk_rows, default=-1) + 1
    totals = np.zeros((planes, columns), dtype=np.int64)
    for start, column, r in zip(starts, chunk_rows, rows):
        totals[start:start + r.totals.size, column] = r.totals
    flat = totals.reshape(-1)
    base = (np.cumsum(flat) - flat).reshape(planes, columns)
    numbers = np.zeros(merge.keys.size, dtype=np.int64)
    for start, column, r in zip(starts, chunk_rows, rows):
        numbers[r.components] = base[start + r.planes, column] + r.numbers + 1
    if np.count_nonzero(numbers) != np.count_nonzero(merge.survives):
        raise RuntimeError("winnow.dask: internal error: a surviving component was not numbered once")
    return Numbering(int(flat.sum()), base, numbers)


def numbering_count(numbering: Numbering) -> int:
    return numbering.count


@dataclass
class ChunkNumbering:
    """One chunk's part of the numbering: the base of each of its planes, its boundary labels'
    numbers, which of them it numbers itself, and the survival rule."""

    base: np.ndarray
    numbers: np.ndarray
    owned: np.ndarray
    rule: SurvivalRule


register_result_sizes(Merge, BoundaryStatus, ChunkRowOffsets, Numbering, ChunkNumbering)


def numbering_of_chunk(numbering: Numbering, merge: Merge, index: int, start: int, planes: int,
                       column: int) -> ChunkNumbering:
    return ChunkNumbering(numbering.base[start:start + planes, column], numbering.numbers[merge.components[index]],
                          merge.owned[index], merge.rule)


def numbering_of_chunks(numbering: Numbering, merge: Merge, chunks: list) -> list:
    """numbering_of_chunk of each chunk of a row of chunks, given as (index, start, planes, column)."""
    return [numbering_of_chunk(numbering, merge, *chunk) for chunk in chunks]


def assemble_statistics(numbering: Numbering, merge: Merge, tables: list, ndim: int, shape: tuple) -> tuple:
    """(cc3d.statistics' dict, each label's value or None) of the whole labeling of a volume of
    `shape` voxels."""
    n = numbering.count
    counts = np.zeros(n + 1, dtype=np.uint64)
    lower = np.full((n + 1, 3), INT64_MAX, dtype=np.int64)
    upper = np.full((n + 1, 3), -1, dtype=np.int64)
    sums = np.zeros((n + 1, 3), dtype=np.uint64)
    values = None
    if merge.values is not None:
        values = np.zeros(n + 1, dtype=merge.values.dtype)
    for t in tables:
        counts[t.numbers], lower[t.numbers], upper[t.numbers], sums[t.numbers] = t.voxels, t.lower, t.upper, t.sums
        if values is not None:
            values[t.numbers] = t.values
        voxels, low, high, total = t.background
        counts[0] += np.uint64(voxels)
        lower[0] = np.minimum(lower[0], low)
        upper[0] = np.maximum(upper[0], high)
        sums[0] += total
    kept = np.flatnonzero(numbering.numbers)
    at = numbering.numbers[kept]
    counts[at], lower[at] = merge.voxels[kept], merge.lower[kept]
    upper[at], sums[at] = merge.upper[kept], merge.sums[kept]
    if values is not None:
        values[at] = merge.values[kept]
    if not tables:
        return _empty_statistics(ndim), values
    with np.errstate(invalid="ignore", divide="ignore"):
        centroids = sums.astype(np.float64) / counts.astype(np.float64)[:, None]
    centroids[counts == 0] = np.nan
    return _cc3d_fields(counts, lower, upper, centroids, ndim, shape), values
