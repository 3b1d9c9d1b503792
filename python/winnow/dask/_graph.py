"""The task graph of winnow.dask's labeling, built as dask array graphs are (a HighLevelGraph
layer of tasks keyed by chunk), over the keys of the input array's blocks: no dask array goes into
a ``delayed`` call, so no chunk is computed twice, and the graph runs on whichever scheduler is
current (threads, processes, dask.distributed).

Per chunk (position p in the grid of non-empty chunks): label (stage 1) -> pairs (with its
forward neighbours, reading the pieces of their faces it needs) -> [merge] -> rows -> [offsets of
its row of chunks] -> [numbering] -> table (with the provisional labels) -> labels (stage 3,
lazy). Rows and table read the chunk's record without its faces (a task of its own), so the faces
are freed once the pairs are found and the merge does not wait with every chunk's faces held.
``run`` persists the tables and computes N and the statistics. On a distributed scheduler
the small parts a task reads of another's result (a face piece, a chunk's part of the merge) are
tasks of their own, so a worker fetches the part and not the whole; when every task runs in this
process they are read in place.
"""

from __future__ import annotations

import itertools
import os
import sys
import uuid
from dataclasses import dataclass
from typing import Any, Optional

import dask
import dask.array as da
import dask.local
import dask.threaded
import numpy as np
from dask.delayed import Delayed
from dask.highlevelgraph import HighLevelGraph

from . import _chunks, _merge
from ._chunks import ChunkSpec, Plan


@dataclass(frozen=True)
class Grid:
    """The chunks of a 3D dask array that hold voxels, as a grid of their own (chunks without
    voxels take no part: the chunks on either side of one are neighbours)."""

    chunks: tuple  # the array's chunks along z, y, x
    kept: tuple  # per axis, the indices of the chunks of non-zero size
    starts: tuple  # per axis, each chunk's first index

    @classmethod
    def of(cls, chunks: tuple) -> Grid:
        kept = tuple(tuple(i for i, size in enumerate(sizes) if size) for sizes in chunks)
        starts = tuple(tuple(int(s) for s in np.concatenate([[0], np.cumsum(sizes)[:-1]])) for sizes in chunks)
        return cls(chunks, kept, starts)

    @property
    def shape(self) -> tuple:
        return tuple(len(k) for k in self.kept)

    @property
    def volume(self) -> tuple:
        return tuple(int(sum(sizes)) for sizes in self.chunks)

    def positions(self) -> Any:
        return itertools.product(*(range(n) for n in self.shape))

    def linear(self, position: tuple) -> int:
        return int(np.ravel_multi_index(position, self.shape))

    def block(self, position: tuple) -> tuple:
        return tuple(self.kept[a][p] for a, p in enumerate(position))

    def spec(self, position: tuple) -> ChunkSpec:
        block = self.block(position)
        return ChunkSpec(position, tuple(self.starts[a][b] for a, b in enumerate(block)),
                         tuple(int(self.chunks[a][b]) for a, b in enumerate(block)), self.volume,
                         tuple(p > 0 for p in position), tuple(p < n - 1 for p, n in zip(position, self.shape)))


def cpu_threads_per_chunk(chunks: int) -> int:
    """OpenMP threads of one host chunk's labeling: the cores shared among the chunks that run at
    once (one each when there are at least as many chunks as cores)."""
    return max(1, (os.cpu_count() or 1) // max(1, chunks))


@dataclass
class Labeling:
    """A labeling run on the cluster: N, the statistics, and the persisted collections the
    labels come from."""

    count: int
    statistics: Optional[tuple]  # (cc3d dict, values or None)
    grid: Grid
    plan: Plan
    tables: dict  # position -> persisted Delayed of the chunk's table and provisional labels


def _progress(show: bool) -> Any:
    """A text progress bar for local schedulers (dask.diagnostics), or nothing."""
    if show and _distributed_client() is None:
        from dask.diagnostics import ProgressBar

        return ProgressBar(out=sys.stderr)
    return _Nothing()


class _Nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def _distributed_client() -> Any:
    """The current dask.distributed client, or None."""
    if "distributed" not in sys.modules:
        return None
    from distributed import default_client

    try:
        return default_client()
    except ValueError:
        return None


def _wait(persisted: list, show: bool) -> None:
    """Shows distributed's progress bar over persisted futures (local schedulers draw theirs while
    they run)."""
    if show and _distributed_client() is not None:
        from distributed import progress

        progress(*persisted)


def _shared_memory(darr: da.Array) -> bool:
    """Whether the scheduler runs every task in this process (threads, or one thread): a task
    then reads its inputs where they lie, and small parts of a result need no task of their own."""
    scheduler = dask.base.get_scheduler(collections=[darr])
    return scheduler in (dask.threaded.get, dask.local.get_sync)


def run(darr: da.Array, plan: Plan, table_dtype: Any, show_progress: bool) -> Labeling:
    """Stages 1 and 2 on the current scheduler: everything but the relabeling of the chunks."""
    grid = Grid.of(darr.chunks)
    token = uuid.uuid4().hex
    dsk: dict = {}
    shared = _shared_memory(darr)
    parts = itertools.count()

    def name(stage: str) -> str:
        return f"winnow-{stage}-{token}"

    def part(key: tuple, getter: Any, *args: Any) -> Any:
        """A small part of a task's result, for a task on another worker: a task of its own (so a
        worker fetches the part, not the whole); inline in the consumer when memory is shared."""
        if shared:
            return (getter, key) + args
        # Named by what it takes (e.g. winnow-part-farpieces): the task stream and the dashboard
        # tell face pieces from shares of the merge.
        part_key = (name("part-" + getter.__name__.replace("_", "")), next(parts))
        dsk[part_key] = (getter, key) + args
        return part_key

    label, pair, merge, rows, row_offsets = name("label"), name("pairs"), name("merge"), name("rows"), name("offsets")
    summary = name("summary")
    numbering, table, count, statistics = name("numbering"), name("table"), name("count"), name("statistics")
    directions = _chunks.forward_directions(plan.connectivity)
    positions = list(grid.positions())
    specs = {p: grid.spec(p) for p in positions}
    shape = grid.shape
    for p in positions:
        dsk[(label,) + p] = (_chunks.label_chunk, (darr.name,) + grid.block(p), specs[p], plan)
    lows: dict = {}  # q -> the part holding every piece of q's low faces that its neighbours join

    def far_piece(q: tuple, d: tuple) -> Any:
        """The piece of chunk q's low faces that q - d joins: on a distributed scheduler all the
        pieces of q (its low faces, their lines and corner) are one task, a few faces' worth of
        bytes, so a chunk costs the scheduler one task for them instead of one per piece."""
        if shared:
            return (_chunks.far_piece, (label,) + q, d)
        if q not in lows:
            below = [e for e in directions if all(0 <= a - s < n for a, s, n in zip(q, e, shape))]
            lows[q] = part((label,) + q, _chunks.far_pieces, below)
        return (_chunks.pick, lows[q], d)

    for p in positions:
        ahead, far, pieces = [], [], []
        for d in directions:
            q = tuple(a + s for a, s in zip(p, d))
            if not all(0 <= a < n for a, n in zip(q, shape)):
                continue
            ahead.append(d)
            far.append(grid.linear(q))
            pieces.append(far_piece(q, d))
        dsk[(pair,) + p] = (_chunks.chunk_pairs, (label,) + p, grid.linear(p), ahead, far, pieces, plan)
    dsk[(merge,)] = (_merge.merge_chunks, [(pair,) + p for p in positions], plan.min_area, plan.largest_k)
    # What each chunk needs of the merge and of the numbering is taken out per row of chunks (one
    # task a row, each chunk picking its element inline): a task a chunk costs the distributed
    # scheduler milliseconds, and a row's share is still a small fraction of the whole.
    # With shared memory each chunk computes its own share inline.
    chunk_rows_of: dict = {}  # (gz, gy) -> the row's positions, in x order
    for p in positions:
        chunk_rows_of.setdefault(p[:2], []).append(p)

    shares: dict = {}

    def share(getter: Any, row_getter: Any, whole: Any, p: tuple, args: tuple, row_args: Any) -> Any:
        """getter(whole, *args), chunk p's share of a whole; distributed: row_getter(whole,
        *row_args(row)) once for p's row of chunks, p's element picked inline."""
        if shared:
            return (getter, whole) + args
        if (row_getter, p[:2]) not in shares:
            shares[row_getter, p[:2]] = part(whole, row_getter, *row_args(chunk_rows_of[p[:2]]))
        return (_chunks.pick, shares[row_getter, p[:2]], p[2])

    for p in positions:
        dsk[(summary,) + p] = (_chunks.without_faces, (label,) + p)
        status = share(_merge.merge_status, _merge.merge_statuses, (merge,), p, (grid.linear(p),),
                       lambda row: ([grid.linear(q) for q in row],))
        dsk[(rows,) + p] = (_chunks.chunk_rows, (summary,) + p, status)
    summaries, starts, columns = [], [], []
    for gz, gy in itertools.product(range(shape[0]), range(shape[1])):
        dsk[(row_offsets, gz, gy)] = (_merge.chunk_row_offsets, [(rows, gz, gy, gx) for gx in range(shape[2])])
        summaries.append(part((row_offsets, gz, gy), _merge.row_summary))
        starts.append(specs[gz, gy, 0].offset[0])
        columns.append(gy)
    dsk[(numbering,)] = (_merge.number_components, (merge,), summaries, starts, columns)
    dsk[(count,)] = (_merge.numbering_count, (numbering,))

    def numbering_args(q: tuple) -> tuple:
        return (grid.linear(q), specs[q].offset[0], specs[q].shape[0], q[1])

    for p in positions:
        numbered = share(_merge.numbering_of_chunk, _merge.numbering_of_chunks, (numbering,), p,
                         ((merge,),) + numbering_args(p), lambda row: ((merge,), [numbering_args(q) for q in row]))
        dsk[(table,) + p] = (_chunks.chunk_table, (summary,) + p,
                             part((row_offsets, p[0], p[1]), _merge.row_offsets_of, p[2]), numbered, plan,
                             table_dtype)
    wanted = [(table,) + p for p in positions] + [(count,)]
    if plan.statistics:
        dsk[(statistics,)] = (_merge.assemble_statistics, (numbering,), (merge,),
                              [part((table,) + p, _chunks.table_statistics) for p in positions], plan.ndim,
                              tuple(int(n) for n in grid.volume))
        wanted.append((statistics,))
    graph = HighLevelGraph.from_collections(label, dsk, dependencies=[darr])
    with dask.config.set({"optimization.fuse.delayed": False}), _progress(show_progress):
        persisted = dask.persist(*(Delayed(k, graph, layer=label) for k in wanted))
    _wait(list(persisted), show_progress)
    n = len(positions)
    found = dask.compute(*persisted[n:])
    return Labeling(int(found[0]), found[1] if plan.statistics else None, grid, plan,
                    dict(zip(positions, persisted[:n])))


def labels_array(labeling: Labeling, like: Any, dtype: Any) -> da.Array:
    """The final labels as a lazy dask array of the input's chunks: each chunk its provisional
    labels through its table (stage 3)."""
    grid, plan = labeling.grid, labeling.plan
    name = f"winnow-labels-{uuid.uuid4().hex}"
    index_of = {grid.block(p): p for p in labeling.tables}
    meta = np.zeros_like(like, shape=(0, 0, 0), dtype=dtype)
    # The tasks name the chunks' library by a flag, not by the meta array: a CuPy array in every
    # task would be pickled with each on its way to the workers.
    device = _chunks._is_device(meta)
    layer: dict = {}
    for block in itertools.product(*(range(len(c)) for c in grid.chunks)):
        p = index_of.get(block)
        shape = tuple(int(grid.chunks[a][b]) for a, b in enumerate(block))
        if p is None:
            layer[(name,) + block] = (_chunks.empty_block, shape, np.dtype(dtype), device)
        else:
            layer[(name,) + block] = (_chunks.relabel_chunk, labeling.tables[p].key, grid.spec(p), plan.store,
                                      plan.ndim, device)
    graph = HighLevelGraph.from_collections(name, layer, dependencies=list(labeling.tables.values()))
    return da.Array(graph, name, chunks=grid.chunks, dtype=dtype, meta=meta)


def relabel_into(labeling: Labeling, out: Any, show_progress: bool) -> None:
    """Stage 3 into a zarr array: every chunk's provisional labels, read from the store,
    relabelled into out."""
    plan = labeling.plan
    name = f"winnow-relabel-{uuid.uuid4().hex}"
    layer = {(name,) + p: (_chunks.relabel_into, t.key, labeling.grid.spec(p), plan.store, out, plan.ndim)
             for p, t in labeling.tables.items()}
    graph = HighLevelGraph.from_collections(name, layer, dependencies=list(labeling.tables.values()))
    keys = list(layer)
    with dask.config.set({"optimization.fuse.delayed": False}), _progress(show_progress):
        done = dask.persist(*(Delayed(k, graph, layer=name) for k in keys))
        _wait(list(done), show_progress)
        dask.compute(*done)
