"""Does zarr serialise chunk writes from several threads? 128^3 uint32 chunks (random labels),
Blosc lz4 as label_to_zarr writes them, from 1 / 4 / 16 threads; and the raw numcodecs encode time.

    python3 bench/zarr_write_threads.py
"""
import shutil
import time
from concurrent.futures import ThreadPoolExecutor

import numcodecs
import numpy as np
import zarr
from zarr.codecs import BloscCodec

N, C = 512, 128
PATH = "/tmp/zarr-write-threads.zarr"


def main():
    rng = np.random.default_rng(1)
    block = ((rng.random((C, C, C)) < 0.3) * rng.integers(1, 1 << 20, (C, C, C))).astype(np.uint32)
    corners = [(z, y, x) for z in range(0, N, C) for y in range(0, N, C) for x in range(0, N, C)]
    print("zarr", zarr.__version__)
    for threads in (1, 4, 16):
        shutil.rmtree(PATH, ignore_errors=True)
        a = zarr.create_array(PATH, shape=(N, N, N), chunks=(C, C, C), dtype="uint32", fill_value=0,
                              compressors=[BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")])

        def write(corner, a=a):
            z, y, x = corner
            t = time.perf_counter()
            a[z:z + C, y:y + C, x:x + C] = block
            return time.perf_counter() - t

        t = time.perf_counter()
        with ThreadPoolExecutor(threads) as ex:
            calls = list(ex.map(write, corners))
        total = time.perf_counter() - t
        each = total / len(corners) * 1e3
        print(f"{threads} threads: {total:.3f} s for {len(corners)} chunks, {each:.1f} ms a chunk, "
              f"median call {np.median(calls) * 1e3:.1f} ms")
    shutil.rmtree(PATH, ignore_errors=True)
    codec = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1)
    t = time.perf_counter()
    for _ in range(10):
        encoded = codec.encode(block)
    print(f"numcodecs Blosc lz4 encode {(time.perf_counter() - t) / 10 * 1e3:.1f} ms, {len(encoded)} bytes")


if __name__ == "__main__":
    main()
