"""winnow.dask against one call on the whole array (winnow.label, scipy.ndimage.label, cc3d):
labels, N and statistics of random and real volumes and images under chunkings that cut
components in every direction (one-voxel-thick chunks, uneven chunks, 1 x 1 x N, chunks without
voxels, a single chunk), 4/8 and 6/18/26-connectivity, binary and multi-label input of every
kind of dtype, min_area and largest_k; that each chunk is labelled once and read once; the
per-chunk summary of device chunks (its array code run on NumPy); zarr in and out, with no
half-written output after a failure; a LocalCluster of two worker processes; the command line
(``python -m winnow label``); and the errors. Skipped without dask (the ``dask`` extra)."""

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

import winnow  # noqa: E402
import winnow.dask as wd  # noqa: E402
from winnow.dask import _chunks  # noqa: E402
from conftest import EXAMPLES  # noqa: E402
from test_labeling_volumes import oracle, read_nifti  # noqa: E402

try:
    import cc3d
except ImportError:  # a PyPI package the offline GPU hosts may lack; scipy stays the oracle there
    cc3d = None


def assert_same_statistics(got, expected):
    assert got.keys() == expected.keys()
    assert got["voxel_counts"].dtype == expected["voxel_counts"].dtype
    np.testing.assert_array_equal(got["voxel_counts"], expected["voxel_counts"])
    assert got["bounding_boxes"] == expected["bounding_boxes"]
    np.testing.assert_array_equal(got["centroids"], expected["centroids"])  # bit for bit: exact sums


def check(a, chunks, connectivity, multilabel=True, **filters):
    """winnow.dask.label of a in the given chunks against winnow.label of the whole: labels, N,
    statistics; returns the labels."""
    labels, n, stats = wd.label(da.from_array(a, chunks=chunks), connectivity, multilabel=multilabel, stats=True,
                                progress=False, **filters)
    expected, expected_n, expected_stats = winnow.label(a, connectivity, multilabel=multilabel, return_N=True,
                                                        stats=True, backend="cpu", **filters)
    got = labels.compute()
    assert labels.dtype == np.uint32 and got.dtype == np.uint32 and labels.chunks == da.from_array(a, chunks).chunks
    assert n == expected_n
    np.testing.assert_array_equal(got, expected)
    assert_same_statistics(stats, expected_stats)
    return got


# Chunkings of a (13, 17, 19) volume that cut components in every direction.
CHUNKINGS = {
    "single": (13, 17, 19),
    "cubes": (4, 4, 4),
    "uneven": ((5, 1, 7), (2, 9, 6), (10, 3, 6)),
    "one_voxel_z": (1, 17, 19),
    "one_voxel_y": (13, 1, 19),
    "one_voxel_x": (13, 17, 1),
    "columns_1x1xN": (1, 1, 19),
    "empty_chunks": ((6, 0, 7), (0, 17, 0), (9, 0, 10)),
}


@pytest.mark.parametrize("chunking", CHUNKINGS)
@pytest.mark.parametrize("connectivity", [6, 18, 26])
def test_binary_volumes_match_the_whole_array(rng, chunking, connectivity):
    a = rng.random((13, 17, 19)) < 0.35
    got = check(a, CHUNKINGS[chunking], connectivity)
    np.testing.assert_array_equal(got, oracle(a, connectivity)[0])  # scipy.ndimage.label


@pytest.mark.parametrize("connectivity", [6, 18, 26])
@pytest.mark.parametrize("dtype", ["uint8", "int16", "uint64", "float32"])
def test_multilabel_volumes_match_cc3d(rng, connectivity, dtype):
    a = (rng.integers(0, 4, (11, 14, 16)) * (rng.random((11, 14, 16)) < 0.6)).astype(dtype)
    if dtype == "int16":
        a[a == 3] = -7  # negative values are labels too
    got = check(a, ((3, 5, 3), 4, (1, 7, 8)), connectivity)
    if cc3d is not None:
        np.testing.assert_array_equal(got, cc3d.connected_components(a, connectivity=connectivity))
    check(a, 5, connectivity, multilabel=False)


@pytest.mark.parametrize("connectivity", [4, 8])
@pytest.mark.parametrize("chunks", [(7, 9), (1, 40), (41, 1), ((3, 20, 18), (0, 30, 10, 10))])
def test_images(rng, connectivity, chunks):
    a = rng.random((41, 50)) < 0.4
    got = check(a, chunks, connectivity)
    np.testing.assert_array_equal(got, oracle(a, connectivity)[0])
    values = (a * rng.integers(1, 3, a.shape)).astype(np.uint8)
    check(values, chunks, connectivity)


@pytest.mark.parametrize("min_area, largest_k", [(3, 0), (0, 1), (0, 4), (2, 3), (50, 0), (0, 1000)])
@pytest.mark.parametrize("connectivity", [6, 26])
def test_min_area_and_largest_k_across_chunks(rng, min_area, largest_k, connectivity):
    a = rng.random((14, 15, 16)) < 0.25
    a[2:12, 7, 3:13] = True  # a large component cut by every chunk boundary
    check(a, (5, 4, 6), connectivity, min_area=min_area, largest_k=largest_k)
    # Equal sizes: largest_k's ties go to the component whose first voxel comes first.
    ties = np.zeros((6, 6, 6), bool)
    ties[::2, ::2, ::2] = True
    check(ties, (1, 3, 2), 6, largest_k=5)


def test_bundled_volumes():
    volume = read_nifti(EXAMPLES / "volumes" / "mni152_gm.nii.gz")[::2, ::2, ::2]
    mask = volume > 128
    for connectivity in (6, 26):
        got = check(mask, (32, 40, 24), connectivity)
        np.testing.assert_array_equal(got, oracle(mask, connectivity)[0])
    fmri = read_nifti(EXAMPLES / "volumes" / "motor_activation.nii.gz")
    levels = np.digitize(fmri, [-3, -1, 1, 3]).astype(np.uint8) * (np.abs(fmri) > 1)
    got = check(levels, (20, 9, 31), 18, min_area=2)
    if cc3d is not None:
        kept = cc3d.dust(cc3d.connected_components(levels, connectivity=18), 2)
        np.testing.assert_array_equal(got > 0, kept > 0)
        assert len(np.unique(got)) == len(np.unique(kept))


def test_arrays_without_voxels_and_without_foreground():
    for shape in ((0, 4, 5), (3, 0), (0, 0)):
        labels, n, stats = wd.label(da.zeros(shape, np.uint8, chunks=2), stats=True, progress=False)
        assert n == 0 and labels.shape == shape and labels.compute().shape == shape
        assert stats["voxel_counts"].tolist() == [0]
    check(np.zeros((5, 6, 7), np.uint8), 3, 26)
    check(np.ones((5, 6, 7), np.uint8), (1, 2, 3), 6)
    check(np.ones((1, 1, 1), bool), 1, 26)


def test_each_chunk_labelled_once_and_read_once(monkeypatch, rng):
    """No chunk is labelled twice, and the input's chunks are computed once: the labels read the
    persisted provisional labels, however often they are computed."""
    a = rng.random((12, 13, 14)) < 0.4
    labelled, read = [], []
    real = _chunks.label_block

    def counting(block, plan):
        labelled.append(block.shape)
        return real(block, plan)

    def reading(block, block_info=None):
        read.append(block_info[0]["chunk-location"])
        return block

    monkeypatch.setattr(_chunks, "label_block", counting)
    source = da.from_array(a, chunks=(5, 4, 6)).map_blocks(reading, dtype=bool)
    chunks = source.npartitions
    for scheduler in ("threads", "sync"):
        labelled.clear(), read.clear()
        with dask.config.set(scheduler=scheduler):
            labels, n = wd.label(source, 26, min_area=2, progress=False)
            first, second = labels.compute(), labels.compute()
        assert len(labelled) == chunks and len(read) == chunks and len(set(read)) == chunks
        np.testing.assert_array_equal(first, winnow.label(a, 26, min_area=2))
        np.testing.assert_array_equal(second, first)


def test_results_tell_dask_the_memory_they_hold(rng):
    """dask.sizeof of a chunk's record and table counts the arrays they hold (its labels, faces and
    per-label arrays), so a distributed scheduler keeps a chunk's tasks where its data lies."""
    from dask.sizeof import sizeof

    block = (rng.random((20, 21, 22)) < 0.4).astype(np.uint8)
    spec = _chunks.ChunkSpec((0, 0, 1), (0, 0, 22), block.shape, (20, 21, 66), (False, False, True),
                             (False, False, True))
    plan = _chunks.Plan(connectivity=26, multilabel=False, min_area=1, largest_k=0, statistics=True, values=False,
                        threads=1)
    record = _chunks.label_chunk(block, spec, plan)
    faces = sum(face.nbytes for face, _ in record.faces.values())
    arrays = [record.labels, record.first, record.voxels, record.lower, record.upper, record.sums, record.boundary]
    held = sum(a.nbytes for a in arrays) + faces
    assert faces > 0 and held <= sizeof(record) < held + 4096
    table = _chunks.ChunkTable(np.arange(record.count + 1, dtype=np.uint32), labels=record.labels)
    assert sizeof(table) >= record.labels.nbytes + table.table.nbytes


@pytest.mark.parametrize("label_dtype", [np.uint32, np.uint64])
@pytest.mark.parametrize("table_dtype", [np.uint32, np.uint64])
def test_relabel_on_the_host_is_numpy_take(rng, label_dtype, table_dtype):
    """The extension's relabel pass against numpy.take: 3D, 2D and strided labels."""
    table = rng.integers(0, 2**32 - 1, 300).astype(table_dtype)
    labels = rng.integers(0, 300, (7, 9, 11)).astype(label_dtype)
    for case in (labels, labels[:, 0], labels[::2, 1:, ::3], labels[:, :, :0]):
        np.testing.assert_array_equal(_chunks._relabel_host(table, case), np.take(table, case))
        assert _chunks._relabel_host(table, case).dtype == table_dtype
    bad = labels.copy()
    bad[3, 4, 5] = 300
    with pytest.raises(ValueError, match="label 300 has no entry in a table of 300"):
        _chunks._relabel_host(table, bad)
    with pytest.raises(TypeError, match="table"):
        _chunks._relabel_host(table.astype(np.float32), labels)


def test_store_and_zarr_round_trip(tmp_path, rng):
    zarr = pytest.importorskip("zarr")
    a = (rng.random((20, 21, 22)) < 0.3) * rng.integers(1, 3, (20, 21, 22)).astype(np.uint8)
    source = zarr.open_array(str(tmp_path / "in.zarr"), mode="w", shape=a.shape, chunks=(8, 7, 9), dtype=a.dtype)
    source[:] = a
    expected, expected_n = winnow.label(a, 18, return_N=True)
    # Provisional labels in a store: the labels read them back.
    labels, n = wd.label(da.from_zarr(str(tmp_path / "in.zarr")), 18, store=tmp_path / "provisional.zarr",
                         progress=False)
    assert n == expected_n
    np.testing.assert_array_equal(labels.compute(), expected)
    labels.to_zarr(str(tmp_path / "lazy.zarr"))  # chunk-aligned writes of the lazy labels
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "lazy.zarr"), mode="r")[:], expected)
    with pytest.raises(FileExistsError):
        wd.label(da.from_zarr(source), 18, store=tmp_path / "provisional.zarr", progress=False)
    # zarr to zarr, statistics too; then into the same path again, with overwrite.
    out = tmp_path / "labels.zarr"
    n, stats = wd.label_to_zarr(da.from_zarr(source), out, 18, stats=True, min_area=2, progress=False)
    reference, reference_n, reference_stats = winnow.label(a, 18, min_area=2, return_N=True, stats=True)
    written = zarr.open_array(str(out), mode="r")
    assert n == reference_n and written.dtype == np.uint32 and tuple(written.chunks) == (8, 7, 9)
    np.testing.assert_array_equal(written[:], reference)
    assert_same_statistics(stats, reference_stats)
    with pytest.raises(FileExistsError):
        wd.label_to_zarr(da.from_zarr(source), out, progress=False)
    assert wd.label_to_zarr(da.from_zarr(source), out, 6, compression="zstd", overwrite=True,
                            progress=False) == winnow.label(a, 6, return_N=True)[1]
    np.testing.assert_array_equal(zarr.open_array(str(out), mode="r")[:], winnow.label(a, 6))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.zarr", "labels.zarr", "lazy.zarr", "provisional.zarr"]


def test_zarr_output_leaves_out_chunks_without_labels(tmp_path, rng):
    """label_to_zarr writes every chunk that holds labels, and only those: the others (no
    foreground, or only components min_area removes) read as zeros."""
    zarr = pytest.importorskip("zarr")
    a = ((rng.random((16, 18, 20)) < 0.3) * rng.integers(1, 3, (16, 18, 20))).astype(np.uint8)
    a[:8, :9] = 0  # the chunks at grid (0, 0, x): empty
    a[8:, :9, :10] = 0
    a[10, 3, 4] = 1  # chunk (1, 0, 0): one voxel alone, below min_area
    out = tmp_path / "labels.zarr"
    n = wd.label_to_zarr(da.from_array(a, chunks=(8, 9, 10)), out, 26, min_area=2, progress=False)
    expected, expected_n = winnow.label(a, 26, min_area=2, return_N=True)
    written = zarr.open_array(str(out), mode="r")
    assert n == expected_n
    np.testing.assert_array_equal(written[:], expected)
    with_labels = sum(bool(expected[z:z + 8, y:y + 9, x:x + 10].any()) for z in (0, 8) for y in (0, 9) for x in (0, 10))
    assert with_labels == 5 and written.nchunks_initialized == with_labels


def test_a_failure_leaves_no_output(tmp_path, rng):
    pytest.importorskip("zarr")
    a = rng.random((10, 11, 12)) < 0.5

    def failing(block, block_info=None):
        if block_info[0]["chunk-location"] == (1, 1, 1):
            raise OSError("disk on fire")
        return block

    source = da.from_array(a, chunks=5).map_blocks(failing, dtype=bool)
    with pytest.raises(OSError, match="disk on fire"):
        wd.label_to_zarr(source, tmp_path / "labels.zarr", progress=False)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="compression"):
        wd.label_to_zarr(da.from_array(a, chunks=5), tmp_path / "labels.zarr", compression="gzip", progress=False)
    with pytest.raises(ValueError, match="regular chunks"):
        wd.label_to_zarr(da.from_array(a, chunks=((3, 7), 11, 12)), tmp_path / "labels.zarr", progress=False)
    assert list(tmp_path.iterdir()) == []


def test_bad_arguments(rng):
    a = da.from_array(rng.random((5, 6, 7)) < 0.5, chunks=3)
    cases = [
        (TypeError, "darr", lambda: wd.label(a.compute())),
        (ValueError, "darr", lambda: wd.label(a[0, 0])),
        (ValueError, "connectivity", lambda: wd.label(a, 8)),
        (ValueError, "connectivity", lambda: wd.label(a[0], 6)),
        (TypeError, "darr", lambda: wd.label(a.astype(complex))),
        (ValueError, "min_area", lambda: wd.label(a, min_area=-1)),
        (ValueError, "largest_k", lambda: wd.label(a, largest_k=1.5)),
        (ValueError, "compute_chunk_sizes", lambda: wd.label(a[a[:, 0, 0]])),
        (ValueError, "regular chunks", lambda: wd.label(da.from_array(a.compute(), chunks=((1, 4), 6, 7)),
                                                        store="unused.zarr")),
    ]
    for error, fragment, call in cases:
        with pytest.raises(error, match=fragment):
            call()


def test_labels_need_64_bits_from_2_to_the_32_voxels(monkeypatch, rng):
    from winnow.dask import _output_dtype

    assert _output_dtype((1024, 2048, 2047)) == np.uint32
    assert _output_dtype((1024, 2048, 2048)) == np.uint64
    assert _output_dtype((65536, 65536)) == np.uint64
    # The 64-bit path (tables, labels, statistics), with the bound lowered to this volume's size.
    monkeypatch.setattr(wd, "_WIDE", 1000)
    a = rng.random((10, 11, 12)) < 0.3
    labels, n, stats = wd.label(da.from_array(a, chunks=4), 6, stats=True, progress=False)
    expected, expected_n, expected_stats = winnow.label(a, 6, return_N=True, stats=True)
    assert labels.dtype == np.uint64 and labels.compute().dtype == np.uint64 and n == expected_n
    np.testing.assert_array_equal(labels.compute(), expected)
    assert_same_statistics(stats, expected_stats)


def test_layouts_and_progress(rng, capsys):
    """Fortran-order and strided chunks; the progress bar on request (standard error)."""
    a = rng.integers(0, 3, (14, 13, 12)).astype(np.uint16)
    transposed = da.from_array(np.ascontiguousarray(a.T), chunks=5).T  # chunks in Fortran order
    labels, n = wd.label(transposed, 18, progress=True)
    np.testing.assert_array_equal(labels.compute(), winnow.label(a, 18))
    assert "100%" in capsys.readouterr().err
    strided = da.from_array(np.repeat(a, 2, axis=2), chunks=(5, 6, 8))[:, :, ::2]
    np.testing.assert_array_equal(wd.label(strided, 26, progress=False)[0].compute(), winnow.label(a, 26))
    assert capsys.readouterr().err == ""


def test_local_cluster_of_two_processes(rng, tmp_path):
    """wd.label and label_to_zarr (its provisional chunk files written and read by the workers)."""
    distributed = pytest.importorskip("distributed")
    a = (rng.random((24, 25, 26)) < 0.3) * rng.integers(1, 3, (24, 25, 26)).astype(np.uint8)
    expected, expected_n, expected_stats = winnow.label(a, 26, largest_k=7, return_N=True, stats=True)
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster:
        with distributed.Client(cluster):
            labels, n, stats = wd.label(da.from_array(a, chunks=(10, 9, 11)), 26, largest_k=7, stats=True,
                                        progress=False)
            got = labels.compute()
            if importlib.util.find_spec("zarr") is not None:
                import zarr

                n_zarr = wd.label_to_zarr(da.from_array(a, chunks=(10, 9, 11)), tmp_path / "labels.zarr", 26,
                                          largest_k=7, progress=False)
                assert n_zarr == expected_n
                np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "labels.zarr"), mode="r")[:], expected)
                assert [p.name for p in tmp_path.iterdir()] == ["labels.zarr"]
    assert n == expected_n
    np.testing.assert_array_equal(got, expected)
    assert_same_statistics(stats, expected_stats)


def test_provisional_chunk_files(tmp_path, rng):
    """label_to_zarr's provisional store: chunks round trip by region, an unwritten chunk reads as
    zeros, a write after the folder was removed does nothing."""
    from winnow.dask import _stores

    files = _stores.ChunkFiles(tmp_path / "provisional", np.uint32)
    block = rng.integers(0, 2**32 - 1, (4, 5, 6), dtype=np.uint64).astype(np.uint32)
    region = (slice(8, 12), slice(0, 5), slice(12, 18))
    _stores.write(files, region, block)
    np.testing.assert_array_equal(files[region], block)
    np.testing.assert_array_equal(files[(slice(0, 4), slice(0, 5), slice(0, 6))], np.zeros((4, 5, 6), np.uint32))
    with pytest.raises(FileExistsError):
        _stores.ChunkFiles(tmp_path / "provisional", np.uint32)
    _stores.remove(tmp_path / "provisional")
    _stores.write(files, region, block)
    files[region] = block
    assert list(tmp_path.iterdir()) == []


def test_command_line(tmp_path, rng, monkeypatch, capsys):
    """``python -m winnow label`` once as a process; its other runs in this one (main())."""
    from winnow.__main__ import main

    zarr = pytest.importorskip("zarr")
    a = rng.integers(0, 5, (9, 30, 31)).astype(np.uint8)
    source = zarr.open_array(str(tmp_path / "big.zarr"), mode="w", shape=a.shape, chunks=(4, 16, 16), dtype=a.dtype)
    source[:] = a
    done = subprocess.run([sys.executable, "-m", "winnow", "label", "big.zarr", "--out-labels", "labels.zarr",
                           "--threshold", "2", "--connectivity", "6", "--min-area", "2", "--stats", "stats.csv"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "components (6-connectivity" in done.stdout, done.stderr
    expected, stats = winnow.label(a > 2, 6, min_area=2, stats=True)
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "labels.zarr"), mode="r")[:], expected)
    rows = np.loadtxt(tmp_path / "stats.csv", delimiter=",", skiprows=1, ndmin=2)
    assert (tmp_path / "stats.csv").read_text().startswith("label,voxels,x,y,z,width,height,depth,cx,cy,cz\n")
    np.testing.assert_array_equal(rows[:, 1], stats["voxel_counts"][1:])
    np.testing.assert_allclose(rows[:, 8:11], stats["centroids"][1:, ::-1], atol=1e-6)
    monkeypatch.chdir(tmp_path)
    assert main(["label", "big.zarr", "--out-labels", "multi.zarr", "--multilabel", "--chunks", "5", "--stats",
                 "multi.csv", "--compression", "none", "--quiet"]) == 0
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "multi.zarr"), mode="r")[:], winnow.label(a, 26))
    values = np.loadtxt(tmp_path / "multi.csv", delimiter=",", skiprows=1, ndmin=2)[:, 11]
    firsts = np.unique(winnow.label(a, 26).ravel(), return_index=True)[1][1:]
    np.testing.assert_array_equal(values, a.ravel()[firsts])
    before = sorted(p.name for p in tmp_path.iterdir())
    for args, fragment in ((("missing.zarr", "--out-labels", "x.zarr"), "no such file"),
                           (("big.zarr", "--out-labels", "labels.zarr"), "exists"),
                           (("big.zarr", "--out-labels", "x.zarr", "--connectivity", "8"), "connectivity"),
                           (("big.zarr", "--out-labels", "nowhere/x.zarr"), "does not exist"),
                           (("stats.csv", "--out-labels", "x.zarr"), "not a zarr array")):
        capsys.readouterr()
        assert main(["label", *args]) == 2
        error = capsys.readouterr().err
        assert fragment in error and error.startswith("winnow: error: ") and error.count("\n") == 1, error
    assert sorted(p.name for p in tmp_path.iterdir()) == before
