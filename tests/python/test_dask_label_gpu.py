"""winnow.dask on CuPy chunks (each chunk labelled on its GPU): labels, N and statistics equal
to winnow.label of the whole array on the host, under chunkings that cut components in every
direction, binary and multi-label, 6/18/26 and 8, min_area and largest_k, provisional labels in
a zarr store; the device chunks' summary against the C++ host pass. One file, so a GPU host runs
it alone: ``pytest tests/python/test_dask_label_gpu.py`` (WINNOW_REQUIRE_GPU=1: fail, not skip,
without a device). Skipped without dask, CuPy or a CUDA device."""

import numpy as np
import pytest

pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

import winnow  # noqa: E402
import winnow.dask as wd  # noqa: E402
from winnow import _winnow  # noqa: E402
from winnow.dask import _chunks  # noqa: E402
from conftest import need_gpu  # noqa: E402
from test_dask_label import assert_same_statistics  # noqa: E402


@pytest.fixture
def cp():
    try:
        import cupy
    except ImportError:
        need_gpu("cupy is not installed")
    try:
        available = cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 - no driver, no device
        available = False
    if not available:
        need_gpu("cupy sees no CUDA device")
    if not winnow.cuda_available():
        need_gpu("winnow has no CUDA device (or was built without CUDA)")
    return cupy


def check_on_device(cp, a, chunks, connectivity, **options):
    device = da.from_array(cp.asarray(a), chunks=chunks, asarray=False)
    labels, n, stats = wd.label(device, connectivity, stats=True, progress=False, **options)
    expected, expected_n, expected_stats = winnow.label(a, connectivity, return_N=True, stats=True, backend="cpu",
                                                        **options)
    got = labels.compute()
    assert isinstance(got, cp.ndarray) and got.dtype == np.uint32
    assert n == expected_n
    np.testing.assert_array_equal(got.get(), expected)
    assert_same_statistics(stats, expected_stats)


@pytest.mark.parametrize("connectivity", [6, 18, 26])
@pytest.mark.parametrize("chunks", [(9, 10, 11), (1, 23, 31), ((5, 18), (20, 3), (1, 30)), (23, 1, 1)])
def test_cupy_chunks_match_the_whole_array(cp, rng, connectivity, chunks):
    a = rng.random((23, 23, 31)) < 0.3
    check_on_device(cp, a, chunks, connectivity)
    values = (a * rng.integers(1, 3, a.shape)).astype(np.uint16)
    check_on_device(cp, values, chunks, connectivity, min_area=2, largest_k=9)


def test_cupy_images_and_stores(cp, rng, tmp_path):
    image = rng.random((70, 90)) < 0.45
    check_on_device(cp, image, (16, 25), 8)
    pytest.importorskip("zarr")
    volume = rng.random((30, 32, 34)) < 0.3
    labels, n = wd.label(da.from_array(cp.asarray(volume), chunks=(10, 16, 17), asarray=False), 26,
                         store=tmp_path / "provisional.zarr", progress=False)
    got = labels.compute()
    assert isinstance(got, cp.ndarray)
    np.testing.assert_array_equal(got.get(), winnow.label(volume, 26))


def test_device_summary_matches_the_host_pass(cp, rng):
    """The device summary of CuPy chunk labels against the host pass: shapes of one voxel along an
    axis, a component filling the chunk, 64-bit labels, strided views, each option."""
    cases = [(rng.random((17, 19, 37)) < 0.5, 6), (rng.random((1, 1, 70)) < 0.5, 26),
             (rng.random((5, 1, 33)) < 0.6, 18), (rng.random((40, 50, 300)) < 0.35, 26),
             (rng.random((3, 4, 5)) < 0.0, 6)]
    for mask, connectivity in cases:
        labels, n = winnow.label(mask, connectivity, return_N=True)
        host = _winnow.chunk_label_summary(labels, n, True, True)
        for dtype in (np.uint32, np.uint64, np.int64):
            device = _chunks.device_summary(cp.asarray(labels.astype(dtype)), n, True, True)
            for h, d in zip(host, device):
                assert d.dtype == h.dtype
                np.testing.assert_array_equal(d, h)
        counted = _chunks.device_summary(cp.asarray(labels), n, True, False)
        np.testing.assert_array_equal(counted[0], host[0])
        np.testing.assert_array_equal(counted[1], host[1])
        assert counted[2:] == (None, None, None)
        lean = _chunks.device_summary(cp.asarray(labels), n, False, False)
        np.testing.assert_array_equal(lean[0], host[0])
        assert lean[1:] == (None, None, None, None)
    labels, n = winnow.label(rng.random((20, 30, 40)) < 0.3, 6, return_N=True)
    padded = cp.zeros((20, 30, 48), cp.uint32)
    padded[:, :, :40] = cp.asarray(labels)
    device = _chunks.device_summary(padded[:, :, :40], n, True, True)
    for h, d in zip(_winnow.chunk_label_summary(labels, n, True, True), device):
        np.testing.assert_array_equal(d, h)


def test_device_summary_refuses_what_the_host_pass_refuses(cp, rng):
    labels, n = winnow.label(rng.random((6, 7, 8)) < 0.4, 6, return_N=True)
    assert n >= 3
    with pytest.raises(ValueError, match="not below the number of labels"):
        _chunks.device_summary(cp.asarray(labels), n - 1, True, True)
    with pytest.raises(ValueError, match="label 3 is missing"):
        _chunks.device_summary(cp.asarray(np.where(labels == 3, 0, labels)), n, True, True)
    swapped = np.where(labels == 1, 2, np.where(labels == 2, 1, labels)).astype(np.uint32)
    with pytest.raises(ValueError, match="raster order"):
        _chunks.device_summary(cp.asarray(swapped), n, True, True)
    with pytest.raises(TypeError, match="labels"):
        _chunks.device_summary(cp.asarray(labels.astype(np.uint16)), n, True, True)
