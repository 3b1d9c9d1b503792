"""winnow.statistics and label(..., stats=True) against independent references: cc3d.statistics
(every field, the lazy bounding boxes and cc3d's no_slice_conversion array, dtypes included),
scipy.ndimage's labelled reductions (sum_labels, mean, minimum, maximum), scikit-image's
regionprops (area, centroid, intensity_mean, in physical units with a spacing); the
BoundingBoxes sequence (indexing, slicing, iteration, equality); intensity of every dtype (exact
integer sums, NaN, sums beyond 64 bits refused); many labels; CuPy and PyTorch labels on the
device (skipped without one); and every refusal."""

import numpy as np
import pytest
import scipy.ndimage as ndi
from skimage import measure

import winnow
from test_labeling_volumes import assert_statistics

try:
    import cc3d
except ImportError:
    cc3d = None

INTENSITY_DTYPES = ["bool", "uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64", "float16",
                    "float32", "float64"]


def random_labels(rng, shape, n):
    """Labels 0..n-1 in runs (as labelings give them), some labels without voxels."""
    labels = rng.integers(0, n, shape)
    labels = ndi.maximum_filter(labels, size=2)  # runs and blobs
    labels[labels == n // 2] = 0
    return labels.astype(np.uint32)


@pytest.mark.parametrize("shape", [(61, 73), (23, 29, 31), (1, 1, 1), (3, 1, 40)])
def test_statistics_match_cc3d_every_field(rng, shape):
    if cc3d is None:
        pytest.skip("cc3d is not installed")
    labels = random_labels(rng, shape, 40)
    stats = winnow.statistics(labels)
    reference = cc3d.statistics(labels)
    assert stats["voxel_counts"].dtype == reference["voxel_counts"].dtype
    np.testing.assert_array_equal(stats["voxel_counts"], reference["voxel_counts"])
    assert stats["bounding_boxes"] == reference["bounding_boxes"]  # the lazy form, element for element
    assert list(stats["bounding_boxes"]) == reference["bounding_boxes"]
    np.testing.assert_allclose(stats["centroids"], reference["centroids"], rtol=1e-12, equal_nan=True)
    raw = winnow.statistics(labels, no_slice_conversion=True)
    reference = cc3d.statistics(labels, no_slice_conversion=True)
    assert raw["bounding_boxes"].dtype == reference["bounding_boxes"].dtype
    np.testing.assert_array_equal(raw["bounding_boxes"], reference["bounding_boxes"])
    np.testing.assert_array_equal(stats["bounding_boxes"].array, reference["bounding_boxes"])


def test_labeling_statistics_match_cc3d(rng):
    if cc3d is None:
        pytest.skip("cc3d is not installed")
    for shape, connectivity in (((70, 80), 4), ((30, 31, 32), 6), ((30, 31, 32), 26)):
        mask = rng.random(shape) < 0.3
        labels, stats = winnow.label(mask, connectivity, stats=True)
        reference = cc3d.statistics(labels)
        np.testing.assert_array_equal(stats["voxel_counts"], reference["voxel_counts"])
        assert stats["bounding_boxes"] == reference["bounding_boxes"]
        np.testing.assert_allclose(stats["centroids"], reference["centroids"], rtol=1e-12)


def test_many_labels(rng):
    # One component per few voxels: the boxes stay an array until asked for.
    mask = rng.random((64, 64, 64)) < 0.12
    labels, n, stats = winnow.label(mask, 6, return_N=True, stats=True)
    assert n > 10000 and len(stats["bounding_boxes"]) == n + 1
    if cc3d is not None:
        reference = cc3d.statistics(labels)
        np.testing.assert_array_equal(stats["voxel_counts"], reference["voxel_counts"])
        assert stats["bounding_boxes"] == reference["bounding_boxes"]
        np.testing.assert_allclose(stats["centroids"], reference["centroids"], rtol=1e-12)
    for label in (1, n // 2, n):
        box = stats["bounding_boxes"][label]
        assert (labels[box] == label).sum() == stats["voxel_counts"][label]


def test_exact_coordinate_sums_of_the_raw_statistics(rng):
    # The extension's raw form keeps the exact sums of each label's indices (for statistics added
    # up over pieces, as chunked labelings do).
    from winnow import _winnow

    labels = random_labels(rng, (17, 19, 23), 30)
    raw = _winnow.label_statistics_host(labels, None, 3, 0, False, True)
    index = np.indices(labels.shape).reshape(3, -1).T.astype(np.uint64)
    expected = np.zeros((int(labels.max()) + 1, 3), np.uint64)
    np.add.at(expected, labels.ravel(), index)
    assert raw["coordinate_sums"].dtype == np.uint64
    np.testing.assert_array_equal(raw["coordinate_sums"], expected)
    assert "coordinate_sums" not in _winnow.label_statistics_host(labels, None, 3, 0, False)


def test_bounding_boxes_sequence():
    labels = np.array([[0, 1, 1, 0], [0, 0, 3, 3], [4, 0, 0, 0]], np.uint8)
    boxes = winnow.statistics(labels)["bounding_boxes"]
    expected = [(slice(0, 3), slice(0, 4)), (slice(0, 1), slice(1, 3)), None, (slice(1, 2), slice(2, 4)),
                (slice(2, 3), slice(0, 1))]
    assert len(boxes) == 5 and boxes == expected and expected == boxes and boxes == tuple(expected)
    assert boxes != expected[:4] and boxes != expected[::-1] and (boxes == 3) is False
    assert list(boxes) == expected and boxes.tolist() == expected
    assert boxes[-1] == expected[-1] and boxes[np.int64(3)] == expected[3] and boxes[2] is None
    assert boxes[1:4] == expected[1:4] and boxes[::2] == expected[::2]
    with pytest.raises(IndexError):
        boxes[5]
    with pytest.raises(IndexError):
        boxes[-6]
    with pytest.raises(TypeError):
        boxes[1.0]
    with pytest.raises(TypeError):
        hash(boxes)
    assert boxes == winnow.BoundingBoxes(boxes.array.copy()) and "5 labels" in repr(boxes)
    assert expected[3] in boxes and (slice(0, 9),) not in boxes  # a Sequence: `in`, index, count
    assert boxes.index(expected[3]) == 3 and boxes.count(None) == 1
    with pytest.raises(ValueError):
        winnow.BoundingBoxes(np.zeros((3, 5), np.uint16))


@pytest.mark.filterwarnings("ignore:invalid value encountered in divide:RuntimeWarning")  # scipy's empty means
@pytest.mark.parametrize("dtype", INTENSITY_DTYPES)
def test_intensity_matches_scipy(rng, dtype):
    labels = random_labels(rng, (37, 43), 25)
    values = (rng.random(labels.shape) * 200 - (0 if np.dtype(dtype).kind in "bu" else 100))
    values = values.astype(dtype)
    stats = winnow.statistics(labels, intensity=values)
    index = np.arange(int(labels.max()) + 1)
    counts = np.bincount(labels.ravel(), minlength=len(index))
    present = counts > 0
    reference = values.astype(np.float64)
    sums = ndi.sum_labels(reference, labels, index)
    kind = np.dtype(dtype).kind
    if kind in "iu" or kind == "b":
        assert stats["intensity_sum"].dtype == (np.int64 if kind == "i" else np.uint64)
        np.testing.assert_array_equal(stats["intensity_sum"], sums.astype(np.int64))  # exact
    else:
        assert stats["intensity_sum"].dtype == np.float64
        np.testing.assert_allclose(stats["intensity_sum"], sums, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(stats["intensity_mean"][present], ndi.mean(reference, labels, index)[present],
                               rtol=1e-12)
    assert np.isnan(stats["intensity_mean"][~present]).all()
    minimum, maximum = stats["intensity_min"], stats["intensity_max"]
    expected_dtype = np.float32 if dtype == "float16" else np.uint8 if dtype == "bool" else np.dtype(dtype)
    assert minimum.dtype == expected_dtype and maximum.dtype == expected_dtype
    np.testing.assert_array_equal(minimum[present], ndi.minimum(reference, labels, index)[present])
    np.testing.assert_array_equal(maximum[present], ndi.maximum(reference, labels, index)[present])
    if kind == "f":
        assert np.isnan(minimum[~present]).all() and np.isnan(maximum[~present]).all()
    else:
        assert (minimum[~present] == 0).all()


def test_intensity_extremes_nan_and_refusals():
    labels = np.array([[1, 1, 2, 2, 0]], np.uint8)
    big = np.array([[2**62, 2**62 - 1, -(2**63), 5, 1]], np.int64)
    stats = winnow.statistics(labels, intensity=big)
    assert stats["intensity_sum"].tolist() == [1, 2**63 - 1, -(2**63) + 5]  # exact, at the edge of 64 bits
    with pytest.raises(ValueError, match="64 bits"):
        winnow.statistics(labels, intensity=np.array([[2**62, 2**62, 0, 0, 0]], np.int64) * 2)
    floats = np.array([[np.nan, 2.0, np.nan, np.nan, -1.0]])
    stats = winnow.statistics(labels, intensity=floats)
    assert np.isnan(stats["intensity_sum"][1]) and stats["intensity_min"][1] == 2.0 and stats["intensity_max"][1] == 2
    assert np.isnan(stats["intensity_min"][2]) and np.isnan(stats["intensity_max"][2])  # NaN alone
    assert stats["intensity_min"][0] == -1.0


def test_regionprops_with_spacing(rng):
    labels = random_labels(rng, (19, 23, 29), 12)
    values = rng.random(labels.shape).astype(np.float32)
    spacing = (2.0, 0.5, 1.25)
    stats = winnow.statistics(labels, values, spacing)
    for region in measure.regionprops(labels.astype(np.int64), intensity_image=values, spacing=spacing):
        label = region.label
        np.testing.assert_allclose(stats["volumes"][label], region.area, rtol=1e-12)
        np.testing.assert_allclose(stats["centroids"][label], region.centroid, rtol=1e-10)
        np.testing.assert_allclose(stats["intensity_mean"][label], region.intensity_mean, rtol=1e-6)
    assert stats["voxel_counts"].sum() == labels.size
    plain = winnow.statistics(labels)
    np.testing.assert_allclose(stats["centroids"], plain["centroids"] * spacing, equal_nan=True)
    image = random_labels(rng, (31, 37), 9)
    stats = winnow.statistics(image, spacing=(3, 0.5))
    for region in measure.regionprops(image.astype(np.int64), spacing=(3, 0.5)):
        np.testing.assert_allclose(stats["volumes"][region.label], region.area)


def test_statistics_layouts_and_inputs(rng):
    labels = random_labels(rng, (21, 22, 23), 30).astype(np.int32)
    values = rng.integers(0, 50, labels.shape).astype(np.int16)
    base = winnow.statistics(labels, values)
    for a, v in ((np.asfortranarray(labels), np.asfortranarray(values)), (labels[:, ::-1], values[:, ::-1]),
                 (labels[::2, :, 1:], values[::2, :, 1:])):
        got = winnow.statistics(a, v)
        expected_labels = np.ascontiguousarray(a)
        assert_statistics(got, expected_labels)
        np.testing.assert_array_equal(got["intensity_sum"],
                                      ndi.sum_labels(v.astype(np.int64), a, np.arange(len(got["intensity_sum"]))))
    assert base["intensity_sum"].sum() == values.sum()
    listed = winnow.statistics(labels.tolist())  # anything numpy.asarray takes
    np.testing.assert_array_equal(listed["voxel_counts"], base["voxel_counts"])
    torch = pytest.importorskip("torch")
    tensor = winnow.statistics(torch.from_numpy(labels), torch.from_numpy(values))
    np.testing.assert_array_equal(tensor["intensity_sum"], base["intensity_sum"])


def test_statistics_refusals(rng):
    labels = random_labels(rng, (5, 6), 4)
    cases = [
        (TypeError, "labels", lambda: winnow.statistics(labels.astype(np.float32))),
        (ValueError, "labels", lambda: winnow.statistics(labels.reshape(-1))),
        (ValueError, "labels", lambda: winnow.statistics(-labels.astype(np.int8) - 1)),
        (ValueError, "labels", lambda: winnow.statistics(np.full((2, 2), 10**9, np.uint32))),
        (ValueError, "intensity", lambda: winnow.statistics(labels, labels[:, :5])),
        (TypeError, "intensity", lambda: winnow.statistics(labels, labels.astype(np.complex64))),
        (ValueError, "spacing", lambda: winnow.statistics(labels, spacing=(1.0, 2.0, 3.0))),
        (ValueError, "spacing", lambda: winnow.statistics(labels, spacing=(1.0, -2.0))),
        (TypeError, "spacing", lambda: winnow.statistics(labels, spacing="ab")),
    ]
    for error, name, call in cases:
        with pytest.raises(error, match=name):
            call()


@pytest.mark.parametrize("shape", [(123, 145), (23, 34, 45)])
def test_statistics_on_the_device(rng, device_lib, shape):
    labels = random_labels(rng, shape, 60).astype(np.int32)
    values = rng.normal(size=shape).astype(np.float32)
    integers = rng.integers(-1000, 1000, shape).astype(np.int64)
    on_device = device_lib.asarray(labels)
    for intensity in (values, integers):
        got = winnow.statistics(on_device, device_lib.asarray(intensity), spacing=(0.5,) * len(shape))
        expected = winnow.statistics(labels, intensity, spacing=(0.5,) * len(shape))
        assert set(got) == set(expected)
        for key in expected:
            if key == "bounding_boxes":
                assert got[key] == expected[key]
            elif key == "intensity_sum" and intensity.dtype.kind == "f":  # atomics add in any order
                np.testing.assert_allclose(got[key], expected[key], rtol=1e-9, atol=1e-9)
            elif key == "intensity_mean":
                np.testing.assert_allclose(got[key], expected[key], rtol=1e-9, atol=1e-12, equal_nan=True)
            else:
                assert got[key].dtype == expected[key].dtype, key
                np.testing.assert_array_equal(got[key], expected[key], err_msg=key)
    with pytest.raises(TypeError, match="intensity"):
        winnow.statistics(on_device, values)  # host intensity for device labels
    with pytest.raises(ValueError, match="labels"):
        winnow.statistics(device_lib.asarray(-labels - 1))
    empty = winnow.statistics(device_lib.asarray(np.zeros((0, 4), np.uint16)))
    assert empty["voxel_counts"].tolist() == [0] and empty["bounding_boxes"] == [None]
