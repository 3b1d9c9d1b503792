"""winnow.label as a drop-in for scikit-image's and scipy's labelings and for cc3d.largest_k:
skimage.measure.label's background, return_num and connectivity=1..ndim on random multi-label
images and volumes (labels equal, numbering included); scipy.ndimage.label's structure (the
standard structures, as a keyword or as the second argument; others refused); cc3d.largest_k's
rule (largest_k_rule="cc3d": its choice among equal sizes and its numbering by size, equal to
cc3d's output wherever cc3d numbers components by first voxel) beside winnow's rule (ties to the
lower label, raster order); the same on CuPy / PyTorch arrays where a device is present; and
every refusal."""

import numpy as np
import pytest
import scipy.ndimage as ndi
from skimage import measure

import winnow
from test_labeling_volumes import remove_small_keep_largest

try:
    import cc3d
except ImportError:
    cc3d = None


@pytest.mark.parametrize("shape", [(67, 81), (19, 23, 27)])
@pytest.mark.parametrize("background", [0, 2, -1, 7])
def test_scikit_image_background_and_hops(rng, shape, background):
    a = rng.integers(-1, 4, shape).astype(np.int16)
    for hops in range(1, len(shape) + 1):
        expected, expected_n = measure.label(a, background=background, connectivity=hops, return_num=True)
        labels, n = winnow.label(a, connectivity=hops, background=background, return_num=True)
        assert n == expected_n
        np.testing.assert_array_equal(labels, expected)
    # The default: the densest connectivity, background 0.
    np.testing.assert_array_equal(winnow.label(a), measure.label(a))


def test_background_of_every_dtype(rng):
    values = rng.integers(0, 5, (40, 50))
    for dtype in ("bool", "uint8", "int8", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64"):
        a = values.astype(dtype)
        for background in (0, 1, 3, 300, -2):
            expected = measure.label(a, background=background, connectivity=1)
            np.testing.assert_array_equal(winnow.label(a, 4, background=background), expected,
                                          err_msg=f"{dtype} background {background}")
        # Binary input with a background: every other value is foreground.
        expected = ndi.label(a != 1, ndi.generate_binary_structure(2, 2))[0]
        np.testing.assert_array_equal(winnow.label(a, 8, multilabel=False, background=1), expected)
    # A background no value equals (compared by value; scikit-image truncates it to the dtype first).
    np.testing.assert_array_equal(winnow.label(values.astype(np.uint8), 4, background=2.5),
                                  measure.label(values.astype(np.uint8) + 1, background=0, connectivity=1))
    volume = rng.integers(0, 3, (10, 11, 12)).astype(np.float32)
    np.testing.assert_array_equal(winnow.label(volume, 6, background=2), measure.label(volume, background=2,
                                                                                         connectivity=1))


@pytest.mark.parametrize("ndim", [2, 3])
def test_scipy_structure(rng, ndim):
    mask = rng.random((45, 46) if ndim == 2 else (15, 16, 17)) < 0.4
    for hops in range(1, ndim + 1):
        structure = ndi.generate_binary_structure(ndim, hops)
        expected, expected_n = ndi.label(mask, structure)
        labels, n = winnow.label(mask, structure=structure, return_N=True)
        assert n == expected_n
        np.testing.assert_array_equal(labels, expected)
        np.testing.assert_array_equal(winnow.label(mask, structure), expected)  # scipy's second argument
        np.testing.assert_array_equal(winnow.label(mask, structure.astype(np.uint8).tolist()), expected)
    with pytest.raises(ValueError, match="structure"):
        winnow.label(mask, structure=np.ones((3,) * ndim, bool) & (np.indices((3,) * ndim)[0] != 0))
    with pytest.raises(ValueError, match="structure"):
        winnow.label(mask, structure=np.ones((5,) * ndim, bool))
    with pytest.raises(ValueError, match="structure"):
        winnow.label(mask, 4, structure=ndi.generate_binary_structure(ndim, 1))
    with pytest.raises(ValueError, match="connectivity"):
        winnow.label(mask, 4.0)


def test_largest_k_rules(rng):
    if cc3d is None:
        pytest.skip("cc3d is not installed")
    for trial in range(12):
        shape, connectivity = [((60, 70), 4), ((20, 21, 22), 6), ((20, 21, 22), 18), ((20, 21, 22), 26)][trial % 4]
        mask = rng.random(shape) < rng.uniform(0.2, 0.6)
        for k in (1, 2, 7, 30):
            expected = cc3d.largest_k(mask, k, connectivity=connectivity)
            labels, n = winnow.label(mask, connectivity, largest_k=k, largest_k_rule="cc3d", return_N=True)
            np.testing.assert_array_equal(labels.astype(np.int64), expected.astype(np.int64))
            assert n == min(k, int(expected.max()))
            # The library's rule: ties to the lower label, raster order.
            oracle = remove_small_keep_largest(*ndi.label(mask, ndi.generate_binary_structure(
                len(shape), {4: 1, 6: 1, 18: 2, 26: 3}[connectivity])), 0, k)[0]
            np.testing.assert_array_equal(winnow.label(mask, connectivity, largest_k=k), oracle)
    # Equal sizes: single voxels, the rules part.
    lattice = np.zeros((9, 9), bool)
    lattice[::2, ::2] = True
    winnow_rule = winnow.label(lattice, 4, largest_k=3)
    assert np.flatnonzero(winnow_rule).tolist() == [0, 2, 4]  # the first three in raster order
    cc3d_rule = winnow.label(lattice, 4, largest_k=3, largest_k_rule="cc3d")
    np.testing.assert_array_equal(cc3d_rule, cc3d.largest_k(lattice, 3, connectivity=4))
    # With min_area first, and statistics of the survivors.
    blobs = ndi.binary_dilation(rng.random((80, 90)) < 0.02, iterations=2)
    labels, stats = winnow.label(blobs, 8, min_area=10, largest_k=4, largest_k_rule="cc3d", stats=True)
    np.testing.assert_array_equal(stats["voxel_counts"], np.bincount(labels.ravel(), minlength=5))
    assert np.all(np.diff(stats["voxel_counts"][1:]) >= 0)  # numbered by increasing size
    with pytest.raises(ValueError, match="largest_k_rule"):
        winnow.label(blobs, largest_k=2, largest_k_rule="scipy")


def test_drop_in_on_the_device(rng, device_lib):
    a = rng.integers(0, 4, (30, 40, 50)).astype(np.int16)
    on_device = device_lib.asarray(a)
    labels, n = winnow.label(on_device, connectivity=1, background=2, return_num=True)
    expected, expected_n = measure.label(a, background=2, connectivity=1, return_num=True)
    assert n == expected_n
    np.testing.assert_array_equal(device_lib.to_numpy(labels), expected)
    structure = ndi.generate_binary_structure(3, 2)
    np.testing.assert_array_equal(device_lib.to_numpy(winnow.label(device_lib.asarray(a > 1), structure)),
                                  ndi.label(a > 1, structure)[0])
    if cc3d is not None:
        for k in (1, 5):
            got = winnow.label(device_lib.asarray(a > 1), 26, largest_k=k, largest_k_rule="cc3d")
            np.testing.assert_array_equal(device_lib.to_numpy(got).astype(np.int64),
                                          cc3d.largest_k(a > 1, k, connectivity=26).astype(np.int64))
