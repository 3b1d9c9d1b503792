"""The zarr I/O floor of a zarr -> zarr labeling on this host's cores, and dask-image's time on the
same volume (the peers of bench/dask_label_bench.py, whose volumes and dask-image run it uses).

Volumes: 1024^3 uint8 (SIZE overrides), random density 0.3 (seed 1) and the MNI152 mask tiled, in
128^3 chunks (zarr's default codec, as dask_label_bench.py writes them). The floor reads the input
and writes a uint32 array of the same shape in label_to_zarr's codec (Blosc lz4, level 5, byte
shuffle; every chunk written, as label_to_zarr does), the input's values cast: the labels of these
volumes are one giant component and few others, so the cast compresses like them. Threaded
scheduler, THREADS threads (default 16).

    python3 bench/dask_zarr_floor.py bench random,mri [DASK_IMAGE_TIMEOUT_S]
    SIZE=256 THREADS=2 SKIPFLOOR=1 python3 bench/dask_zarr_floor.py bench random 60   # dask-image only
"""
import os
import shutil
import statistics
import sys
import time

import dask
import dask.array as da
import numpy as np
import zarr
from zarr.codecs import BloscCodec

sys.path.insert(0, sys.argv[1])  # bench/, for dask_label_bench
from dask_label_bench import lazy_volume, run_dask_image  # noqa: E402

# label_to_zarr writes every chunk as given (no comparison with the fill value first); ZARR_CHECK=1
# measures zarr's default instead, which compares each chunk on zarr's event-loop thread.
WRITE_EMPTY = not os.environ.get("ZARR_CHECK")


def main():
    size, chunk = int(os.environ.get("SIZE", 1024)), 128
    workers = int(os.environ.get("THREADS", 16))
    out = "/tmp/floor"
    os.makedirs(out, exist_ok=True)
    print("zarr", zarr.__version__, "dask", dask.__version__, "threads", workers, flush=True)
    for kind in sys.argv[2].split(","):
        source = os.path.join(out, f"{kind}.zarr")
        shutil.rmtree(source, ignore_errors=True)
        with dask.config.set(scheduler="threads", num_workers=workers):
            lazy_volume(kind, size, chunk, 0.3, 1).to_zarr(source)
        times = []
        for _ in range(0 if os.environ.get("SKIPFLOOR") else 3):
            target = os.path.join(out, f"{kind}-u32.zarr")
            shutil.rmtree(target, ignore_errors=True)
            t = time.perf_counter()
            z = zarr.create_array(store=target, shape=(size,) * 3, chunks=(chunk,) * 3, dtype=np.uint32,
                                  fill_value=0, compressors=BloscCodec(cname="lz4", clevel=5, shuffle="shuffle"),
                                  config={"write_empty_chunks": WRITE_EMPTY})
            with dask.config.set(scheduler="threads", num_workers=workers):
                da.from_zarr(source).astype(np.uint32).store(z, lock=False)
            times.append(time.perf_counter() - t)
        if times:
            print(f"{kind}: zarr read u8 + write u32 lz4 (the I/O floor): median {statistics.median(times):.3f} s "
                  f"of {[round(x, 3) for x in times]}", flush=True)
        if kind == "random" and len(sys.argv) > 3:
            found = run_dask_image(source, out, 26, workers, float(sys.argv[3]))
            result = found[:4] if found else "dask-image not installed"
            print(f"{kind}: dask-image ndmeasure.label zarr->zarr, 26-connectivity, {workers} threads: {result}",
                  flush=True)


if __name__ == "__main__":
    main()
