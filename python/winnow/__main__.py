"""``python -m winnow label BIG.zarr --out-labels LABELS.zarr``: labeling of volumes too big for
memory, chunk by chunk on Dask (winnow.dask.label_to_zarr), from a shell.

The input is a zarr array (a folder; a group's array named by its path, e.g. ``big.zarr/0``),
read chunk by chunk; the labels are written as a zarr array of the same shape and chunks
(uint32, uint64 from 2^32 voxels; Blosc lz4 unless --compression says otherwise), under a
temporary name beside the target and renamed into place when complete; the statistics
(``--stats``) as CSV, the columns of the ``winnow label`` command's
(label,voxels,x,y,z,width,height,depth,cx,cy,cz[,value]). Every error is one line on standard
error and exit status 2 (1 for a failure that is not the input's).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence


class InputProblem(Exception):
    """Bad input or arguments: one line, exit status 2."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m winnow", description="winnow on arrays too big for memory")
    commands = parser.add_subparsers(dest="command", required=True)
    label = commands.add_parser("label", help="label the connected components of a zarr volume, chunk by chunk (Dask)",
                                description="Labels the connected components of a zarr array (2D or 3D) chunk by "
                                            "chunk on Dask: the labels of one winnow.label call on the whole array.")
    label.add_argument("input", help="zarr array (a folder; an array inside a group by its path, e.g. big.zarr/0)")
    label.add_argument("--out-labels", required=True,
                       help="zarr array to write (uint32 labels; uint64 from 2^32 voxels)")
    label.add_argument("--connectivity", type=int, help="2D: 4 or 8 (default 8); 3D: 6, 18 or 26 (default 26)")
    label.add_argument("--multilabel", action="store_true", help="neighbours join only when their values are equal")
    label.add_argument("--threshold", type=float, help="foreground: value > T (default: value != 0)")
    label.add_argument("--min-area", type=int, default=0, help="remove components of fewer voxels, renumber the rest")
    label.add_argument("--largest-k", type=int, default=0, help="keep the K largest components (after --min-area)")
    label.add_argument("--stats", help="CSV: label,voxels,x,y,z,width,height,depth,cx,cy,cz (and value with "
                                       "--multilabel)")
    label.add_argument("--chunks", help="rechunk the input first: N or Z,Y,X voxels per chunk (default: its own)")
    label.add_argument("--compression", default="lz4", choices=("lz4", "zstd", "none"),
                       help="the labels' chunks: Blosc lz4 (default, fast), Blosc zstd (smaller, slower) or none")
    label.add_argument("--scheduler", default="threads",
                       help="threads (default), processes (a local cluster of worker processes), or the address of "
                            "a dask.distributed scheduler (tcp://host:port)")
    label.add_argument("--workers", type=int, help="threads or worker processes (default: one per core)")
    label.add_argument("--overwrite", action="store_true", help="replace --out-labels (and --stats) if present")
    label.add_argument("--quiet", action="store_true", help="no progress bar, no summary")
    return parser


def _open_input(path: str) -> Any:
    import zarr

    if not os.path.exists(path):
        raise InputProblem(f"{path}: no such file or folder")
    try:
        node = zarr.open(path, mode="r")
    except Exception as error:  # noqa: BLE001 - zarr's errors vary by version
        raise InputProblem(f"{path}: not a zarr array ({error})") from None
    if not hasattr(node, "shape"):
        names = ", ".join(sorted(name for name, _ in node.arrays())) or "none"
        raise InputProblem(f"{path}: a zarr group, not an array (its arrays: {names}; name one, e.g. {path}/NAME)")
    return node


def _chunks(text: Optional[str], ndim: int) -> Any:
    if text is None:
        return None
    try:
        sizes = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise InputProblem(f"--chunks: expected N or {','.join('N' * ndim)}, got {text!r}") from None
    if len(sizes) == 1:
        sizes *= ndim
    if len(sizes) != ndim or min(sizes) < 1:
        raise InputProblem(f"--chunks: expected {ndim} positive sizes, got {text!r}")
    return sizes


def _client(scheduler: str, workers: Optional[int]) -> Any:
    """The dask.distributed client of --scheduler, or None (threads)."""
    if scheduler == "threads":
        return None
    from distributed import Client, LocalCluster

    if scheduler == "processes":
        cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        return Client(cluster)
    if "://" not in scheduler:
        raise InputProblem(
            f"--scheduler: expected threads, processes or an address (tcp://host:port), got {scheduler!r}")
    return Client(scheduler)


def _write_stats(path: Path, statistics: dict, values: Any, ndim: int, overwrite: bool) -> None:
    """The statistics as the winnow CLI's CSV (labels 1..N; x fastest), written beside and renamed."""
    from .dask import _stores

    counts = statistics["voxel_counts"]
    boxes = statistics["bounding_boxes"]
    centroids = statistics["centroids"]
    header = "label,voxels,x,y,z,width,height,depth,cx,cy,cz" + (",value" if values is not None else "")
    lines = [header]
    for i in range(1, len(counts)):
        box = ((slice(0, 1),) * (3 - ndim)) + tuple(boxes[i])
        centre = [0.0] * (3 - ndim) + [float(c) for c in centroids[i]]
        fields = [i, int(counts[i]), box[2].start, box[1].start, box[0].start, box[2].stop - box[2].start,
                  box[1].stop - box[1].start, box[0].stop - box[0].start]
        line = ",".join(str(f) for f in fields) + f",{centre[2]:.6f},{centre[1]:.6f},{centre[0]:.6f}"
        if values is not None:
            line += f",{values[i]}"
        lines.append(line)
    temporary = _stores.temporary_beside(path)
    try:
        temporary.write_text("\n".join(lines) + "\n")
        if path.exists() and not overwrite:
            raise InputProblem(f"{path}: exists (pass --overwrite to replace it)")
        os.replace(temporary, path)
    finally:
        if temporary.exists():
            temporary.unlink()


def _label(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    try:
        import dask.array as da

        from . import dask as winnow_dask
    except ImportError as error:
        raise InputProblem(f"{error} (pip install 'winnow[dask]')") from None
    out = Path(args.out_labels)
    stats_path = Path(args.stats) if args.stats else None
    for target in (out, stats_path):
        if target is None:
            continue
        if not target.parent.is_dir():
            raise InputProblem(f"{target}: its folder {target.parent} does not exist")
        if (target.exists() or target.is_symlink()) and not args.overwrite:
            raise InputProblem(f"{target}: exists (pass --overwrite to replace it)")
    source = _open_input(args.input)
    if source.ndim not in (2, 3):
        raise InputProblem(f"{args.input}: expected a 2D or 3D array, got {source.ndim} dimensions")
    volume = da.from_zarr(source)
    chunks = _chunks(args.chunks, source.ndim)
    if chunks is not None:
        volume = volume.rechunk(chunks)
    multilabel = args.multilabel
    if args.threshold is not None:
        if args.multilabel:
            raise InputProblem("--threshold and --multilabel: a threshold makes one foreground (value > T)")
        volume = volume > args.threshold
    client = _client(args.scheduler, args.workers)
    try:
        import dask

        settings = {"scheduler": "threads", "num_workers": args.workers} if client is None else {}
        with dask.config.set(settings):
            n, statistics, values = winnow_dask._label_to_zarr(
                volume, out, args.connectivity, multilabel, args.min_area, args.largest_k, stats_path is not None,
                multilabel, args.compression, args.overwrite, False if args.quiet else None)
    except (ValueError, TypeError, FileExistsError) as error:
        raise InputProblem(f"{args.input}: {error}") from None
    finally:
        if client is not None:
            cluster = getattr(client, "cluster", None)
            client.close()
            if cluster is not None:
                cluster.close()
    if stats_path is not None:
        _write_stats(stats_path, statistics, values, source.ndim, args.overwrite)
    if not args.quiet:
        shape = "x".join(str(s) for s in source.shape[::-1])
        connectivity = args.connectivity or (26 if source.ndim == 3 else 8)
        kind = ", multilabel" if multilabel else ""
        print(f"{args.input}: {shape}, {n} components ({connectivity}-connectivity{kind}, "
              f"{time.perf_counter() - started:.2f} s) -> {out}")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "label":
            return _label(args)
    except InputProblem as problem:
        print(f"winnow: error: {problem}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("winnow: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # noqa: BLE001 - one line for whatever else fails
        print(f"winnow: error: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    return 2


if __name__ == "__main__":
    sys.exit(main())
