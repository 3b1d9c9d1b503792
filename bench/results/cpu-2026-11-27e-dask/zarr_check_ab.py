"""A/B of label_to_zarr's output array, alternating in one process: zarr's default (each chunk
compared with the fill value before it is written, on zarr's event-loop thread) against every
chunk written as given (write_empty_chunks, the labeling leaving out chunks without labels). 512^3
random d0.3 or the MNI152 mask tiled, 128^3 chunks, 26-connectivity, 2 threads; run from the
repository root: python3 bench/results/cpu-2026-11-27e-dask/zarr_check_ab.py random|mri"""
import sys, time, os, shutil, statistics
sys.path.insert(0, "bench")
import numpy as np, dask, dask.array as da, zarr
from dask_label_bench import lazy_volume, mni152_mask
import winnow.dask as wd
from winnow.dask import _stores, _chunks
new_create = _stores.create_array
def old_create(path, shape, chunks, dtype, compression="lz4"):
    codec = None if compression == "none" else _stores._blosc(compression, True)
    return zarr.create_array(store=str(path), shape=shape, chunks=chunks, dtype=np.dtype(dtype), fill_value=0, compressors=codec)
kind = sys.argv[1]
src = f"/tmp/z2z-{kind}.zarr"
if not os.path.exists(src):
    lazy_volume(kind, 512, 128, 0.3, 1).to_zarr(src)
times = {"zarr checks each chunk (before)": [], "every chunk written (after)": []}
for rep in range(5):
    for name, create in (("zarr checks each chunk (before)", old_create), ("every chunk written (after)", new_create)):
        _stores.create_array = create
        shutil.rmtree("/tmp/z2z-out.zarr", ignore_errors=True)
        t = time.perf_counter()
        with dask.config.set(scheduler="threads", num_workers=2):
            wd.label_to_zarr(da.from_zarr(src), "/tmp/z2z-out.zarr", 26, progress=False)
        times[name].append(time.perf_counter() - t)
for name, v in times.items():
    print(f"{kind} {name}: median {statistics.median(v):.3f} s of {[round(x, 3) for x in v]}")
