"""Isosurface peers on the CPU, on the fields of bench/isosurface_cpu_bench.cpp: scikit-image's
marching_cubes (methods 'lewiner' and 'lorensen') and, when `import vtk` works (Debian
python3-vtk9), VTK's vtkFlyingEdges3D on the same number of threads (vtkSMPTools, which runs its
threads). Prints the median of R calls. Debian's VTK is built for /usr/bin/python3: run the script
from a venv made with `--system-site-packages` (pip: numpy, scikit-image, nibabel).

    python3 bench/isosurface_peers.py [--size N] [--reps R] [--threads T] [--peers skimage,vtk] [VOLUME LEVEL]
"""
import argparse
import time

import numpy as np


def fields(n):
    i = np.arange(n, dtype=np.float64)
    z, y, x = np.meshgrid(i, i, i, indexing="ij")
    c = (n - 1) / 2.0
    sphere = (0.4 * n - np.sqrt((x - c) ** 2 + (y - c) ** 2 + (z - c) ** 2)).astype(np.float32)
    k = 2 * np.pi / (n / 8.0)
    gyroid = (np.sin(k * x) * np.cos(k * y) + np.sin(k * y) * np.cos(k * z) + np.sin(k * z) * np.cos(k * x)).astype(np.float32)
    return {"sphere f32": sphere, "gyroid f32": gyroid}


def median_ms(f, reps):
    f()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        out = f()
        times.append((time.perf_counter() - t0) * 1e3)
    return sorted(times)[len(times) // 2], out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--peers", default="skimage,vtk", help="comma-separated: skimage, vtk")
    ap.add_argument("rest", nargs="*")
    a = ap.parse_args()
    vols = {name: (v, 0.0) for name, v in fields(a.size).items()}
    if len(a.rest) == 2:
        import nibabel  # the bundled MRI is NIfTI

        img = np.asarray(nibabel.load(a.rest[0]).dataobj, dtype=np.float32)
        vols["file (as f32)"] = (np.ascontiguousarray(img.transpose(2, 1, 0)), float(a.rest[1]))
    from skimage.measure import marching_cubes

    try:
        import vtk
        from vtk.util import numpy_support
    except ImportError:
        vtk = None
    for name, (v, level) in vols.items():  # arrays are (z, y, x): x fastest, as winnow's volumes
        for method in ("lewiner", "lorensen") if "skimage" in a.peers else ():
            ms, (verts, faces, _, _) = median_ms(lambda: marching_cubes(v, level, method=method), a.reps)
            print(f"{name:16s} skimage {method:9s} {len(verts):9d} verts {len(faces):9d} tris {ms:9.2f} ms")
        if "vtk" not in a.peers:
            continue
        if vtk is not None:
            vtk.vtkSMPTools.Initialize(a.threads)  # Flying Edges runs on vtkSMPTools' threads
            vtk.vtkMultiThreader.SetGlobalMaximumNumberOfThreads(a.threads)
            image = vtk.vtkImageData()
            image.SetDimensions(v.shape[2], v.shape[1], v.shape[0])
            image.GetPointData().SetScalars(numpy_support.numpy_to_vtk(v.ravel(), deep=True))
            fe = vtk.vtkFlyingEdges3D()
            fe.SetInputData(image)
            fe.SetValue(0, level)
            fe.ComputeNormalsOff()

            def run():
                fe.Modified()
                fe.Update()
                return fe.GetOutput()

            ms, poly = median_ms(run, a.reps)
            print(f"{name:16s} vtk FlyingEdges3D  {poly.GetNumberOfPoints():9d} verts {poly.GetNumberOfCells():9d} tris {ms:9.2f} ms")
        else:
            print(f"{name:16s} vtk: not installed (import vtk failed)")


if __name__ == "__main__":
    main()
