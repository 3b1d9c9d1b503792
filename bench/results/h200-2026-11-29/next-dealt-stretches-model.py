"""Extends ../h200-2026-11-28j/next-union-steps-model.py: the 6-connected local pass's unions a
step a round, with each lane taking its own row pairs' stretches (as committed) against the warp's
stretches dealt out as one pool (a free lane takes the pool's next pair), for the idea that the
lanes idle once their own stretches are done. Counts rounds and the lanes busy a round.

    python3 next-dealt-stretches-model.py [examples/data/volumes/mni152_gm.nii.gz]

(random bricks; with the path, also the bundled MRI's bricks, which needs NumPy)
"""

import importlib.util
import pathlib
import random
import sys

_path = pathlib.Path(__file__).resolve().parent.parent / "h200-2026-11-28j" / "next-union-steps-model.py"
_spec = importlib.util.spec_from_file_location("union_steps_model", _path)
model = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(model)


def stepped(masks, dealt):
    """(rounds, busy lane-rounds) with a step a round; dealt: one pool for the warp."""
    parent = model.forest(masks)
    queues = [model.lane_pairs(masks, lane) for lane in range(model.LANES)]
    if dealt:  # raster order of the lanes' rows, as a prefix sum of the lanes' counts would deal them
        pool = [pair for queue in queues for pair in queue]
        queues = [pool]
    current = [None] * model.LANES
    rounds = busy = 0
    while True:
        for lane in range(model.LANES):
            queue = queues[0] if dealt else queues[lane]
            if current[lane] is None and queue:
                current[lane] = queue.pop(0)
        active = sum(pair is not None for pair in current)
        if not active:
            return rounds, busy
        rounds += 1
        busy += active
        for lane in range(model.LANES):
            if current[lane] is not None:
                done, a, b = model.union_step(parent, *current[lane])
                current[lane] = None if done else (a, b)


def main():
    rng = random.Random(1)
    bricks = 40
    for density in (0.1, 0.3, 0.5, 0.7, 0.9):
        own = [0, 0]
        pool = [0, 0]
        for _ in range(bricks):
            masks = model.random_brick(density, rng)
            for total, dealt in ((own, False), (pool, True)):
                rounds, busy = stepped([m for m in masks], dealt)
                total[0] += rounds
                total[1] += busy
        print(
            f"density {density}: own stretches {own[0] / bricks:.1f} rounds, {own[1] / max(own[0], 1):.1f} lanes busy; "
            f"dealt {pool[0] / bricks:.1f} rounds, {pool[1] / max(pool[0], 1):.1f} lanes busy"
        )


def stepped_shared_excess(masks, pool_size=256):
    """A step a round; each lane keeps its first K = total // 32 pairs, the rest (the lanes' excess,
    up to pool_size) go to a shared pool that free lanes take from once their own pairs are done.
    (rounds, busy lane-rounds, pool entries)."""
    parent = model.forest(masks)
    queues = [model.lane_pairs(masks, lane) for lane in range(model.LANES)]
    keep = sum(len(q) for q in queues) // model.LANES
    pool = []
    for queue in queues:
        while len(queue) > keep and len(pool) < pool_size:
            pool.append(queue.pop(keep))
    entries = len(pool)
    current = [None] * model.LANES
    rounds = busy = 0
    while True:
        for lane in range(model.LANES):
            if current[lane] is None:
                if queues[lane]:
                    current[lane] = queues[lane].pop(0)
                elif pool:
                    current[lane] = pool.pop(0)
        active = sum(pair is not None for pair in current)
        if not active:
            return rounds, busy, entries
        rounds += 1
        busy += active
        for lane in range(model.LANES):
            if current[lane] is not None:
                done, a, b = model.union_step(parent, *current[lane])
                current[lane] = None if done else (a, b)


def excess_main():
    rng = random.Random(1)
    bricks = 40
    for density in (0.1, 0.3, 0.5, 0.7, 0.9):
        rounds = busy = entries = 0
        for _ in range(bricks):
            r, b, e = stepped_shared_excess(model.random_brick(density, rng))
            rounds, busy, entries = rounds + r, busy + b, max(entries, e)
        print(
            f"density {density}: own K + shared excess {rounds / bricks:.1f} rounds, "
            f"{busy / max(rounds, 1):.1f} lanes busy, pool entries at most {entries}"
        )


def volume_bricks(mask):
    """The 32 x 8 x 8 bricks of a (z, y, x) boolean array as lists of 64 row masks (bit x)."""
    import numpy as np

    nz, ny, nx = mask.shape
    weights = 1 << np.arange(32, dtype=np.uint64)
    for z0 in range(0, nz, 8):
        for y0 in range(0, ny, 8):
            for x0 in range(0, nx, 32):
                block = np.zeros((8, 8, 32), dtype=np.uint64)
                part = mask[z0 : z0 + 8, y0 : y0 + 8, x0 : x0 + 32]
                block[: part.shape[0], : part.shape[1], : part.shape[2]] = part
                yield [int(v) for v in (block * weights).sum(axis=2).reshape(64)]


def mri_main(path):
    """Own stretches against own K + shared excess on the bundled MRI's bricks (as the benchmark
    thresholds it), with the longest serial pool-writing loop a brick (the largest lane surplus)."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
    from bench_common import tiled_mni152_mask

    mask = tiled_mni152_mask(path, times=(1, 1, 1)).astype(bool)
    bricks = nonempty = own_rounds = excess_rounds = writes = longest_write = overflow = 0
    for masks in volume_bricks(mask):
        bricks += 1
        if not any(masks):
            continue
        nonempty += 1
        queues = [model.lane_pairs(masks, lane) for lane in range(model.LANES)]
        counts = [len(q) for q in queues]
        keep = sum(counts) // model.LANES
        surplus = [max(c - keep, 0) for c in counts]
        writes += sum(surplus)
        longest_write += max(surplus)
        overflow += sum(surplus) > 128
        own_rounds += stepped(list(masks), False)[0]
        excess_rounds += stepped_shared_excess(list(masks))[0]
    print(
        f"MRI: {bricks} bricks, {nonempty} with voxels; a brick with voxels: own {own_rounds / nonempty:.1f} "
        f"rounds, own K + shared excess {excess_rounds / nonempty:.1f}; pool entries {writes / nonempty:.1f}, "
        f"the longest lane's writes {longest_write / nonempty:.1f}; pools overflowing {overflow}"
    )


if __name__ == "__main__":
    main()
    excess_main()
    if len(sys.argv) > 1:
        mri_main(sys.argv[1])
