"""Statistics of CuPy arrays and PyTorch CUDA tensors: winnow.label(..., stats=True) on 2D masks
and on binary and multi-label volumes, and winnow.statistics of device labels, against
cc3d.statistics and a NumPy computation of the labels brought back (assert_statistics), and
against the NumPy path's statistics of the same input: random masks and volumes, min_area and
largest_k, more components than the extension's first record storage, no background or no
foreground, out_dtype and a non-default stream. Skipped without a device; failed under
WINNOW_REQUIRE_GPU=1."""

import numpy as np
import pytest
import scipy.ndimage as ndi

import winnow
from test_labeling_volumes import assert_matches_cc3d, assert_statistics, oracle, remove_small_keep_largest


def assert_same_statistics(stats, host_stats):
    """The device call's dict is the NumPy path's, field for field (NumPy arrays, as cc3d's)."""
    assert set(stats) == set(host_stats)
    assert isinstance(stats["voxel_counts"], np.ndarray) and isinstance(stats["centroids"], np.ndarray)
    assert stats["voxel_counts"].dtype == host_stats["voxel_counts"].dtype
    np.testing.assert_array_equal(stats["voxel_counts"], host_stats["voxel_counts"])
    assert stats["bounding_boxes"] == host_stats["bounding_boxes"]
    np.testing.assert_array_equal(stats["centroids"], host_stats["centroids"])


def label_both(device_lib, a_host, connectivity, **options):
    """(labels brought back, N, statistics) of the device call, and the NumPy path's statistics."""
    labels, n, stats = winnow.label(device_lib.asarray(a_host), connectivity, return_N=True, stats=True, **options)
    assert device_lib.is_native(labels)
    host_labels, host_n, host_stats = winnow.label(a_host, connectivity, return_N=True, stats=True, **options)
    labels = device_lib.to_numpy(labels)
    np.testing.assert_array_equal(labels.astype(np.int64), host_labels.astype(np.int64))
    assert n == host_n
    assert_same_statistics(stats, host_stats)
    return labels, n, stats


@pytest.mark.parametrize("connectivity", [4, 8])
@pytest.mark.parametrize("density", [0.2, 0.5, 0.8])
def test_label_stats_of_device_masks(rng, device_lib, connectivity, density):
    mask = rng.random((151, 203)) < density
    mask[0] = True  # a component touching the border
    labels, n, stats = label_both(device_lib, mask, connectivity)
    structure = ndi.generate_binary_structure(2, 1 if connectivity == 4 else 2)
    np.testing.assert_array_equal(labels, ndi.label(mask, structure)[0])
    assert len(stats["voxel_counts"]) == n + 1
    assert_statistics(stats, labels)


@pytest.mark.parametrize("connectivity", [6, 18, 26])
@pytest.mark.parametrize("multilabel", [False, True])
def test_label_stats_of_device_volumes(rng, device_lib, connectivity, multilabel):
    a = rng.integers(0, 4, (23, 29, 31)).astype(np.int16)
    a[:, 0] = 2  # a component touching the border
    labels, n, stats = label_both(device_lib, a, connectivity, multilabel=multilabel)
    expected, expected_n = oracle(a, connectivity, multilabel)
    np.testing.assert_array_equal(labels, expected)
    assert n == expected_n
    assert_statistics(stats, labels)


def test_label_stats_of_multilabel_device_images(rng, device_lib):
    a = rng.integers(0, 5, (90, 130)).astype(np.int32)
    for connectivity in (4, 8):
        labels, _, stats = label_both(device_lib, a, connectivity)
        np.testing.assert_array_equal(labels, oracle(a, connectivity)[0])
        assert_statistics(stats, labels)


@pytest.mark.parametrize("min_area, largest_k", [(3, 0), (0, 7), (4, 5)])
def test_label_stats_with_filters(rng, device_lib, min_area, largest_k):
    mask = rng.random((157, 163)) < 0.45  # the image labeling
    volume = rng.integers(0, 3, (21, 33, 41)).astype(np.uint8)  # the volume labeling, multi-label
    for a, connectivity in ((mask, 8), (volume, 26)):
        labels, n, stats = label_both(device_lib, a, connectivity, min_area=min_area, largest_k=largest_k)
        expected, expected_n = remove_small_keep_largest(*oracle(a, connectivity), min_area, largest_k)
        np.testing.assert_array_equal(labels, expected)
        assert n == expected_n
        assert_statistics(stats, labels)


def test_label_stats_of_many_components(rng, device_lib):
    # More components than the stream's record storage holds at first (2^16): it grows and the
    # labeling runs again; the next call on the stream reuses the grown storage.
    mask = rng.random((1024, 1024)) < 0.25
    volume = rng.integers(1, 9, (64, 64, 64)).astype(np.uint8)  # mostly single-voxel components
    for _ in range(2):
        for a, connectivity in ((mask, 4), (volume, 6)):
            labels, n, stats = label_both(device_lib, a, connectivity)
            assert n > 1 << 16
            assert_matches_cc3d(stats, labels)  # the per-label NumPy oracle is too slow for this many


def test_label_stats_edge_cases(device_lib):
    for a in (np.zeros((20, 30), bool), np.ones((20, 30), bool), np.zeros((4, 5, 6), np.uint8),
              np.ones((4, 5, 6), np.uint8)):
        labels, _, stats = label_both(device_lib, a, None)
        assert_statistics(stats, labels)
    stats = winnow.label(device_lib.asarray(np.ones((4, 5, 6), np.uint8)), stats=True)[1]
    assert stats["bounding_boxes"][0] is None and np.isnan(stats["centroids"][0]).all()


def test_label_stats_out_dtype_and_stream(rng, device_lib):
    a = rng.integers(0, 3, (40, 50, 60)).astype(np.uint8)
    host_labels, host_stats = winnow.label(a, stats=True)
    stream = device_lib.new_stream()
    with device_lib.use_stream(stream):
        b = device_lib.asarray(a) * 1  # queued on the stream, just before the call
        labels, stats = winnow.label(b, stats=True, out_dtype=np.int64)
        labels = device_lib.to_numpy(labels)
    assert labels.dtype == np.int64
    np.testing.assert_array_equal(labels, host_labels)
    assert_same_statistics(stats, host_stats)


@pytest.mark.parametrize("shape", [(123, 145), (23, 34, 45)])
def test_statistics_of_device_labels(rng, device_lib, shape):
    labels = rng.integers(0, 12, shape).astype(np.int32)
    labels[labels == 5] = 0  # a label without voxels: None, NaN, 0
    stats = winnow.statistics(device_lib.asarray(labels))
    assert_statistics(stats, labels)
    assert_same_statistics(stats, winnow.statistics(labels))
    with pytest.raises(TypeError, match="labels"):
        winnow.statistics(device_lib.asarray(labels.astype(np.float32)))
    with pytest.raises(ValueError, match="labels"):
        winnow.statistics(device_lib.asarray(labels.reshape(-1)))
