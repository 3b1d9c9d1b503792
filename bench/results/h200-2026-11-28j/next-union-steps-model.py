"""A sequential model of the 6-connected bit-row local pass's unions on one 32 x 8 x 8 brick.

Compares today's lockstep (each round a lane takes a pair and runs its union to the end, so the
warp waits for the round's longest union) with a union advanced one step a round (the candidate
in next-local6-union-steps.diff). The lanes act one after another within a round, so races are
not modelled; the counts say how many rounds and steps each way takes, not how fast they run.

    python3 next-union-steps-model.py
"""

import random

ROWS_Y, ROWS_Z, RUN_STRIDE, LANES = 8, 8, 17, 32


def run_starts(mask):
    return mask & ~(mask << 1) & 0xFFFFFFFF


def run_index(mask, bit):
    return bin(run_starts(mask) & ((1 << (bit + 1)) - 1)).count("1") - 1


def random_brick(density, rng):
    return [sum(1 << x for x in range(32) if rng.random() < density) for _ in range(ROWS_Y * ROWS_Z)]


def lane_pairs(masks, lane):
    """The run pairs lane `lane` unites: its rows lane and lane + 32 with the rows before in z and y."""
    pairs = []
    for j in range(2):
        row = lane + 32 * j
        for dy, dz in ((0, -1), (-1, 0)):
            ry, rz = row % ROWS_Y + dy, row // ROWS_Y + dz
            if ry < 0 or rz < 0:
                continue  # the merge's
            back = rz * ROWS_Y + ry
            stretches = run_starts(masks[row] & masks[back])
            for bit in range(32):
                if stretches >> bit & 1:
                    pairs.append(
                        (row * RUN_STRIDE + run_index(masks[row], bit), back * RUN_STRIDE + run_index(masks[back], bit))
                    )
    return pairs


def union_step(parent, a, b):
    """One iteration of unite's loops: (done, a, b)."""
    if a == b:
        return True, a, b
    pa, pb = parent[a], parent[b]
    if pa == a and pb == b:
        lo, hi = min(a, b), max(a, b)
        old = parent[hi]
        parent[hi] = min(old, lo)
        return old == hi, lo, old
    if pa != a:
        ga = parent[pa]
        if ga != pa:
            parent[a] = min(parent[a], ga)
        a = ga
    if pb != b:
        gb = parent[pb]
        if gb != pb:
            parent[b] = min(parent[b], gb)
        b = gb
    return False, a, b


def forest(masks):
    return {
        row * RUN_STRIDE + k: row * RUN_STRIDE + k
        for row, mask in enumerate(masks)
        for k in range(bin(run_starts(mask)).count("1"))
    }


def lockstep_today(masks):
    """(rounds, the rounds' longest unions summed, in steps)."""
    parent, queues = forest(masks), [lane_pairs(masks, lane) for lane in range(LANES)]
    rounds = longest_summed = 0
    while any(queues):
        rounds += 1
        longest = 0
        for queue in queues:
            if not queue:
                continue
            a, b = queue.pop(0)
            steps, done = 0, False
            while not done:
                steps += 1
                done, a, b = union_step(parent, a, b)
            longest = max(longest, steps)
        longest_summed += longest
    return rounds, longest_summed


def step_a_round(masks):
    """Rounds when every busy lane advances its union one step a round."""
    parent, queues = forest(masks), [lane_pairs(masks, lane) for lane in range(LANES)]
    current = [None] * LANES
    rounds = 0
    while True:
        for lane in range(LANES):
            if current[lane] is None and queues[lane]:
                current[lane] = queues[lane].pop(0)
        if all(pair is None for pair in current):
            return rounds
        rounds += 1
        for lane in range(LANES):
            if current[lane] is not None:
                done, a, b = union_step(parent, *current[lane])
                current[lane] = None if done else (a, b)


def main():
    rng = random.Random(1)
    bricks = 40
    for density in (0.1, 0.5, 0.9):
        today_rounds = today_steps = stepped = 0
        for _ in range(bricks):
            masks = random_brick(density, rng)
            rounds, steps = lockstep_today(masks)
            today_rounds += rounds
            today_steps += steps
            stepped += step_a_round(masks)
        print(
            f"density {density}: today {today_rounds / bricks:.1f} rounds, longest unions summed "
            f"{today_steps / bricks:.1f} steps; a step a round {stepped / bricks:.1f} rounds"
        )


if __name__ == "__main__":
    main()
