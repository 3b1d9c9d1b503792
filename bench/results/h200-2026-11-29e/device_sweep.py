"""Device inputs a new user passes: every dtype, layouts, empty and tiny arrays; each function's
device result against its host result on the same values."""
import warnings
import numpy as np
import winnow
warnings.simplefilter("ignore")
rng = np.random.default_rng(9)
libs = {}
try:
    import cupy as cp
    libs["cupy"] = (cp.asarray, cp.asnumpy)
except Exception as e:
    print("no cupy", e)
try:
    import torch
    libs["torch"] = (lambda a: torch.from_numpy(np.ascontiguousarray(a)).cuda(), lambda t: t if isinstance(t, np.ndarray) else t.cpu().numpy())
except Exception as e:
    print("no torch", e)
fails = 0
def same(x, y):
    x, y = np.asarray(x), np.asarray(y)
    return x.shape == y.shape and np.allclose(x.astype(np.float64), y.astype(np.float64), equal_nan=True)
base = rng.integers(0, 4, (17, 19, 23))
for lib, (to_dev, to_host) in libs.items():
    for dt in ("bool", "uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64", "float32", "float64"):
        if lib == "torch" and dt in ("uint32", "uint64"):
            continue
        a = (base - (1 if dt.startswith("int") else 0)).astype(dt)
        for layout in ("C", "swapped", "strided", "F", "tiny", "empty"):
            h = {"C": a, "swapped": a.swapaxes(0, 1), "strided": a[:, ::2, 1:], "F": np.asfortranarray(a),
                 "tiny": a[:2, :2, :2], "empty": a[:0]}[layout]
            try:
                d = to_dev(h) if layout != "swapped" else to_dev(a).swapaxes(0, 1)
                if layout == "F" and lib == "cupy":
                    d = cp.asfortranarray(d)
            except Exception as e:
                print(lib, dt, layout, "to device:", repr(e)[:100]); continue
            checks = {
                "label26": lambda x: winnow.label(x, 26),
                "label6_stats": lambda x: winnow.label(x, 6, stats=True)[1]["voxel_counts"],
                "label_2d": lambda x: winnow.label(x[0], 8) if x.shape[0] else winnow.label(x.reshape(0, 0), 8),
                "flatnonzero": lambda x: winnow.flatnonzero(x),
                "mc": lambda x: winnow.marching_cubes(x, 1.5)[0],
                "voxels": lambda x: winnow.voxels(x, 1)[0],
                "select": lambda x: winnow.select(x, ">", 1),
            }
            for name, f in checks.items():
                try:
                    hr = f(h)
                    herr = None
                except Exception as e:
                    herr = type(e).__name__ + ": " + str(e)[:90]
                try:
                    dr = f(d)
                    derr = None
                except Exception as e:
                    derr = type(e).__name__ + ": " + str(e)[:90]
                if herr or derr:
                    if (herr is None) != (derr is None) or herr.split(":")[0] != derr.split(":")[0]:
                        fails += 1
                        print(f"{lib:5s} {dt:7s} {layout:7s} {name:12s} host: {herr} | device: {derr}")
                    continue
                dr_h = to_host(dr) if not isinstance(dr, (list, tuple)) else dr
                if not same(hr, dr_h):
                    fails += 1
                    print(f"{lib:5s} {dt:7s} {layout:7s} {name:12s} DIFFER {np.asarray(hr).shape} {np.asarray(dr_h).shape}")
print("device sweep fails", fails)
