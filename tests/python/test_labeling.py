"""winnow.label on NumPy images against scipy.ndimage.label and cc3d (labels, count and
statistics): random masks of every density, the bundled photographs thresholded, every input
dtype, C, Fortran and strided layouts, min_area, out=, out_dtype, and every bad argument."""

import numpy as np
import pytest
import scipy.ndimage as ndi
from skimage import io

import winnow
from conftest import EXAMPLES

try:  # a PyPI package the offline GPU hosts may lack; scipy stays the oracle there
    import cc3d
except ImportError:
    cc3d = None

STRUCTURE = {4: ndi.generate_binary_structure(2, 1), 8: np.ones((3, 3), bool)}
SHAPES = [(1, 1), (1, 257), (257, 1), (64, 64), (203, 317)]


def scipy_labels(mask, connectivity):
    labels, n = ndi.label(mask, STRUCTURE[connectivity])
    return labels, n


def assert_same_partition(labels, other):
    """The same components, whatever their numbers: cc3d numbers 8-connected 2D components in
    the order its decision tree meets them, not always by first pixel as scipy (and winnow) do."""
    np.testing.assert_array_equal(labels == 0, other == 0)
    pairs = np.unique(np.stack([labels.ravel(), other.ravel().astype(np.int64)]), axis=1)
    assert len(np.unique(pairs[0])) == len(np.unique(pairs[1])) == pairs.shape[1]


def remove_small(labels, n, min_area):
    """The oracle of min_area: drop the small components, renumber the rest in their order."""
    areas = np.bincount(labels.ravel(), minlength=n + 1)
    keep = areas >= min_area
    keep[0] = False
    lut = np.cumsum(keep) * keep
    return lut[labels], int(keep.sum())


@pytest.mark.parametrize("connectivity", [4, 8])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("density", [0.0, 0.2, 0.5, 0.75, 1.0])
def test_label_matches_scipy_and_cc3d(rng, connectivity, shape, density):
    mask = rng.random(shape) < density
    labels, n = winnow.label(mask, connectivity, return_N=True, backend="cpu")
    expected, expected_n = scipy_labels(mask, connectivity)
    assert labels.dtype == np.uint32 and n == expected_n
    np.testing.assert_array_equal(labels, expected)
    # cc3d 4.1.1 labels some background pixels of bool images; uint8 of the same mask is right.
    if cc3d is not None:
        assert_same_partition(labels, cc3d.connected_components(mask.astype(np.uint8), connectivity=connectivity))


@pytest.mark.parametrize("name", ["coins.png", "astronaut.png", "hubble_deep_field.jpg"])
def test_label_real_images(name):
    image = io.imread(EXAMPLES / name)
    grey = image if image.ndim == 2 else image[..., :3].mean(axis=2)
    mask = grey > np.median(grey)
    for connectivity in (4, 8):
        labels, n = winnow.label(mask, connectivity, return_N=True)
        expected, expected_n = scipy_labels(mask, connectivity)
        assert n == expected_n
        np.testing.assert_array_equal(labels, expected)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "uint16", "int32", "uint32", "int64",
                                   "uint64", "float16", "float32", "float64"])
def test_label_every_dtype_nonzero_is_foreground(rng, dtype):
    values = rng.integers(0, 4, (97, 131)).astype(dtype)
    np.testing.assert_array_equal(winnow.label(values, multilabel=False), scipy_labels(values != 0, 8)[0])


@pytest.mark.parametrize("layout", ["F", "rows", "columns", "reversed", "crop"])
def test_label_layouts(rng, layout):
    base = rng.random((120, 150)) < 0.45
    a = {"F": np.asfortranarray(base), "rows": base[::2], "columns": base[:, ::3], "reversed": base[::-1],
         "crop": base[10:90, 7:120]}[layout]
    np.testing.assert_array_equal(winnow.label(a, 4), scipy_labels(a, 4)[0])


@pytest.mark.parametrize("min_area", [2, 5, 40])
def test_label_min_area(rng, min_area):
    mask = rng.random((150, 170)) < 0.5
    expected, expected_n = remove_small(*scipy_labels(mask, 8), min_area)
    labels, n = winnow.label(mask, min_area=min_area, return_N=True)
    assert n == expected_n
    np.testing.assert_array_equal(labels, expected)


def test_label_statistics_match_cc3d(rng):
    if cc3d is None:
        pytest.skip("cc3d is not installed")
    mask = rng.random((80, 90)) < 0.4
    labels, n, stats = winnow.label(mask, 8, return_N=True, stats=True)
    np.testing.assert_array_equal(labels, scipy_labels(mask, 8)[0])
    expected = cc3d.statistics(labels)  # cc3d's own statistics of the (scipy-checked) labels
    np.testing.assert_array_equal(stats["voxel_counts"], expected["voxel_counts"])
    assert stats["bounding_boxes"] == list(expected["bounding_boxes"])
    np.testing.assert_allclose(stats["centroids"], expected["centroids"], rtol=1e-12)


def test_label_out_and_out_dtype(rng):
    mask = rng.random((64, 48)) < 0.5
    out = np.empty((64, 48), np.uint32)
    got = winnow.label(mask, 4, out=out)
    assert got is out
    expected = scipy_labels(mask, 4)[0]
    np.testing.assert_array_equal(out, expected)
    for dtype in ("uint16", "int32", "uint64", "int64"):
        converted = winnow.label(mask, 4, out_dtype=dtype)
        assert converted.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(converted, expected)


def test_label_bad_arguments(rng):
    mask = rng.random((10, 10)) < 0.5
    cases = [
        (ValueError, "a", lambda: winnow.label(mask[None, None])),
        (ValueError, "connectivity", lambda: winnow.label(mask, 6)),
        (ValueError, "min_area", lambda: winnow.label(mask, min_area=-1)),
        (TypeError, "out_dtype", lambda: winnow.label(mask, out_dtype=np.float32)),
        (ValueError, "backend", lambda: winnow.label(mask, backend="tpu")),
        (TypeError, "a", lambda: winnow.label(np.array([["a", "b"]]))),
        (ValueError, "out", lambda: winnow.label(mask, out=np.empty((10, 9), np.uint32))),
        (TypeError, "out", lambda: winnow.label(mask, out=np.empty((10, 10), np.float32))),
    ]
    for error, name, call in cases:
        with pytest.raises(error, match=name):
            call()


def test_label_cuda_backend_on_host_arrays(rng, winnow_cuda):
    mask = rng.random((1000, 1300)) < 0.45
    for connectivity in (4, 8):
        np.testing.assert_array_equal(winnow.label(mask, connectivity, backend="cuda"),
                                      scipy_labels(mask, connectivity)[0])
