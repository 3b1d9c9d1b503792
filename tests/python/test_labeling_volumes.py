"""winnow.label on 3D volumes and multi-label images, and winnow.statistics, against
cc3d.connected_components / cc3d.statistics and scipy.ndimage.label (binary input; multi-label
input as the union of scipy's labeling of each value, renumbered by first voxel): random
volumes at several densities and sizes (1-voxel-thick ones too), lattices that connect only
through faces, edges or corners, the bundled real volumes (NIfTI read here with numpy + gzip,
the multi-page TIFF with scikit-image), every integer dtype and floats, C, Fortran and strided
layouts, min_area and largest_k, out_dtype, and every bad argument; CuPy / PyTorch volumes on
the device (skipped without one, failed under WINNOW_REQUIRE_GPU=1)."""

import gzip

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

STRUCTURES = {4: ndi.generate_binary_structure(2, 1), 8: ndi.generate_binary_structure(2, 2),
              6: ndi.generate_binary_structure(3, 1), 18: ndi.generate_binary_structure(3, 2),
              26: ndi.generate_binary_structure(3, 3)}
NIFTI_DTYPES = {2: np.uint8, 4: np.int16, 8: np.int32, 16: np.float32, 64: np.float64, 256: np.int8,
                512: np.uint16, 768: np.uint32}


def read_nifti(path):
    """A NIfTI-1 volume as a C-order array [z, y, x] (the file stores x fastest)."""
    raw = gzip.decompress(path.read_bytes())
    header = np.frombuffer(raw[:348], np.uint8)
    little = int.from_bytes(raw[0:4], "little") == 348
    order = "<" if little else ">"
    dims = np.frombuffer(raw[40:56], order + "i2")
    datatype = int(np.frombuffer(raw[70:72], order + "i2")[0])
    offset = int(np.frombuffer(raw[108:112], order + "f4")[0])
    shape = tuple(int(d) for d in dims[1:1 + dims[0]])[:3]
    dtype = np.dtype(NIFTI_DTYPES[datatype]).newbyteorder(order)
    count = int(np.prod(shape))
    assert header.size == 348
    data = np.frombuffer(raw, dtype, count, offset).astype(dtype.newbyteorder("="))
    return data.reshape(shape[::-1])


def oracle(a, connectivity, multilabel=True):
    """scipy.ndimage.label of each value (binary: of a != 0), merged and renumbered in raster
    order of each component's first voxel: (labels int64, N)."""
    structure = STRUCTURES[connectivity]
    if not multilabel or a.dtype == bool:
        labels, n = ndi.label(a != 0, structure)
        return labels.astype(np.int64), n
    combined = np.zeros(a.shape, np.int64)
    offset = 0
    for value in np.unique(a[a != 0]):
        labels, n = ndi.label(a == value, structure)
        combined[labels > 0] = labels[labels > 0] + offset
        offset += n
    # Renumber by first voxel in C order.
    flat = combined.ravel()
    firsts = np.unique(flat[flat > 0], return_index=True)
    order = np.argsort(firsts[1])
    lut = np.zeros(offset + 1, np.int64)
    lut[firsts[0][order]] = np.arange(1, len(order) + 1)
    return lut[combined], len(order)


def lattice(kind):
    """Voxels that touch their neighbours only through faces, edges or corners (so 6, 18 and
    26 give different counts)."""
    a = np.zeros((9, 9, 9), np.uint8)
    if kind == "faces":
        a[::2, ::2, :] = 1
    elif kind == "edges":
        z, y, x = np.indices(a.shape)
        a[((x + y) % 2 == 0) & (z % 2 == 0)] = 1
    else:
        a[::2, ::2, ::2] = 1
        a[1::2, 1::2, 1::2] = 1
    return a


@pytest.mark.parametrize("connectivity", [6, 18, 26])
@pytest.mark.parametrize("shape", [(1, 1, 1), (1, 1, 70), (1, 33, 1), (17, 1, 1), (31, 33, 35), (5, 64, 65)])
@pytest.mark.parametrize("density", [0.1, 0.5, 0.9])
def test_binary_volumes_match_scipy_and_cc3d(rng, connectivity, shape, density):
    mask = rng.random(shape) < density
    labels, n = winnow.label(mask, connectivity, return_N=True, backend="cpu")
    expected, expected_n = oracle(mask, connectivity)
    assert labels.dtype == np.uint32 and n == expected_n
    np.testing.assert_array_equal(labels, expected)
    if cc3d is not None:
        np.testing.assert_array_equal(labels, cc3d.connected_components(mask, connectivity=connectivity))


@pytest.mark.parametrize("connectivity", [6, 18, 26])
@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64"])
def test_multilabel_volumes_match_cc3d(rng, connectivity, dtype):
    values = rng.integers(0, 4, (23, 29, 31))
    big = np.iinfo(dtype).max if np.dtype(dtype).kind == "u" else np.iinfo(dtype).min
    # the type's extreme value is a label too (as an array of the type: NumPy 2 refuses a Python
    # int beyond int64 in a mixed expression)
    a = np.where(values == 3, np.array(big, dtype=dtype), values.astype(dtype))
    labels, n = winnow.label(a, connectivity, return_N=True)
    expected, expected_n = oracle(a, connectivity)
    assert n == expected_n
    np.testing.assert_array_equal(labels, expected)
    if cc3d is not None:
        np.testing.assert_array_equal(labels, cc3d.connected_components(a, connectivity=connectivity))
    # multilabel=False: every non-zero voxel is foreground.
    np.testing.assert_array_equal(winnow.label(a, connectivity, multilabel=False), oracle(a, connectivity, False)[0])


@pytest.mark.parametrize("connectivity", [4, 8])
@pytest.mark.parametrize("dtype", ["uint8", "uint16", "int32", "uint64"])
def test_multilabel_images_match_cc3d(rng, connectivity, dtype):
    a = rng.integers(0, 5, (157, 203)).astype(dtype)
    labels, n = winnow.label(a, connectivity, return_N=True)
    expected, expected_n = oracle(a, connectivity)
    assert labels.shape == a.shape and n == expected_n
    np.testing.assert_array_equal(labels, expected)


def test_float_volumes(rng):
    a = rng.choice(np.array([0.0, -0.5, 0.25, 3.0], np.float32), (20, 21, 22))
    np.testing.assert_array_equal(winnow.label(a, 6), oracle(a, 6)[0])
    np.testing.assert_array_equal(winnow.label(a, 26, multilabel=False), oracle(a, 26, False)[0])


@pytest.mark.parametrize("kind", ["faces", "edges", "corners"])
def test_lattices_tell_connectivities_apart(kind):
    a = lattice(kind)
    counts = {}
    for connectivity in (6, 18, 26):
        labels, counts[connectivity] = winnow.label(a, connectivity, return_N=True)
        expected, expected_n = oracle(a, connectivity)
        assert counts[connectivity] == expected_n
        np.testing.assert_array_equal(labels, expected)
    if kind == "faces":  # lines along x, two voxels apart
        assert counts[6] == counts[18] == counts[26] == 25
    elif kind == "edges":  # checkerboard planes: joined through edges, planes apart
        assert counts[6] > counts[18] == counts[26] == 5
    else:  # a body-centred lattice: joined through corners only
        assert counts[6] == counts[18] == int(a.sum()) > counts[26] == 1


@pytest.mark.parametrize("layout", ["F", "steps", "last_step", "reversed", "crop", "transposed", "swapped", "broadcast",
                                    "new_axis", "F_one_column"])
def test_volume_layouts(rng, layout):
    """Every layout NumPy makes, the rows adjacent or not: a transpose that keeps the last axis
    (slices closer than rows), a broadcast (slices 0 apart), a new axis (stride 0), a Fortran
    volume of one column (slices 1 apart)."""
    base = rng.integers(0, 3, (30, 40, 50)).astype(np.uint16)
    a = {"F": np.asfortranarray(base), "steps": base[::2, ::3], "last_step": base[:, :, ::2],
         "reversed": base[::-1, :, ::-1], "crop": base[3:27, 5:33, 7:41], "transposed": base.transpose(2, 0, 1),
         "swapped": base.swapaxes(0, 1), "broadcast": np.broadcast_to(base[:1], base.shape),
         "new_axis": base[7][None], "F_one_column": np.asfortranarray(base[:, :, :1])}[layout]
    for connectivity in (6, 26):
        np.testing.assert_array_equal(winnow.label(a, connectivity), oracle(a, connectivity)[0])
        labels, stats = winnow.label(a, connectivity, stats=True)
        np.testing.assert_array_equal(stats["voxel_counts"], np.bincount(labels.ravel()))


def test_byte_swapped_input_reads_as_its_values(rng):
    """A big-endian array (a big-endian file's voxels as nibabel's dataobj gives them) is read as
    the numbers it holds, by every function that takes a volume."""
    values = rng.integers(0, 3, (12, 13, 14)).astype(">u2")
    native = values.astype("=u2")
    np.testing.assert_array_equal(winnow.label(values, 26), oracle(native, 26)[0])
    labels, stats = winnow.label(values, 6, stats=True)
    np.testing.assert_array_equal(stats["voxel_counts"], np.bincount(oracle(native, 6)[0].ravel()))
    np.testing.assert_array_equal(winnow.statistics(labels, intensity=values)["intensity_sum"],
                                  ndi.sum_labels(native, labels, range(int(labels.max()) + 1)))
    np.testing.assert_array_equal(winnow.statistics(labels.astype(">u4"))["voxel_counts"],
                                  np.bincount(labels.ravel()))
    np.testing.assert_array_equal(winnow.select(values.astype(">i4"), ">", 1), native[native > 1])
    np.testing.assert_array_equal(winnow.marching_cubes(values, 1.5)[0], winnow.marching_cubes(native, 1.5)[0])


def remove_small_keep_largest(labels, n, min_area, largest_k):
    """The oracle of min_area then largest_k: survivors renumbered in their order."""
    areas = np.bincount(labels.ravel(), minlength=n + 1)
    keep = areas >= min_area
    keep[0] = False
    if largest_k and keep.sum() > largest_k:
        candidates = np.flatnonzero(keep)
        order = sorted(candidates, key=lambda label: (-areas[label], label))[:largest_k]
        keep[:] = False
        keep[order] = True
    lut = np.cumsum(keep) * keep
    return lut[labels], int(keep.sum())


@pytest.mark.parametrize("min_area, largest_k", [(3, 0), (0, 5), (2, 7), (0, 1)])
def test_min_area_and_largest_k(rng, min_area, largest_k):
    a = rng.integers(0, 3, (25, 26, 27)).astype(np.uint8)
    expected, expected_n = remove_small_keep_largest(*oracle(a, 6), min_area, largest_k)
    labels, n = winnow.label(a, 6, min_area=min_area, largest_k=largest_k, return_N=True)
    assert n == expected_n
    np.testing.assert_array_equal(labels, expected)
    mask = rng.random((60, 70)) < 0.5  # the image path
    expected, expected_n = remove_small_keep_largest(*oracle(mask, 8), min_area, largest_k)
    labels, n = winnow.label(mask, 8, min_area=min_area, largest_k=largest_k, return_N=True)
    assert n == expected_n
    np.testing.assert_array_equal(labels, expected)


def test_out_dtype_and_out(rng):
    a = rng.integers(0, 3, (10, 20, 30)).astype(np.uint8)
    expected = oracle(a, 26)[0]
    for dtype in ("uint16", "uint32", "uint64", "int32", "int64"):
        labels = winnow.label(a, out_dtype=dtype)
        assert labels.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(labels, expected)
    out = np.empty(a.shape, np.uint32)
    assert winnow.label(a, out=out) is out
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("multilabel", [False, True])
def test_out_is_labelled_in_place(rng, multilabel, monkeypatch):
    """A volume labelled into a poisoned out= (32-bit, C order) gets every voxel, the statistics and
    the filters as without it, and the labels are written there (no array the size of the volume
    is made and copied); outs of other types or orders are refused, as before."""
    a = ((rng.random((17, 23, 70)) < 0.4) * rng.integers(1, 4, (17, 23, 70))).astype(np.uint8)
    expected, n, stats = winnow.label(a, 18, multilabel=multilabel, min_area=2, return_N=True, stats=True)
    copied = []
    real = np.copyto

    def counting(destination, *args, **kwargs):
        copied.append(destination.shape)
        return real(destination, *args, **kwargs)

    for dtype in (np.uint32, np.int32):
        out = np.full(a.shape, 0xDEAD, dtype)
        copied.clear()
        monkeypatch.setattr(np, "copyto", counting)
        got, got_n, got_stats = winnow.label(a, 18, multilabel=multilabel, min_area=2, return_N=True, stats=True,
                                             out=out)
        monkeypatch.undo()
        assert got is out and got_n == n and a.shape not in copied
        np.testing.assert_array_equal(out, expected)
        np.testing.assert_array_equal(got_stats["voxel_counts"], stats["voxel_counts"])
        np.testing.assert_array_equal(got_stats["centroids"], stats["centroids"])
    for out in (np.full(a.shape, 7, np.int64), np.asfortranarray(np.full(a.shape, 7, np.uint32))):
        with pytest.raises(TypeError, match="out"):
            winnow.label(a, 18, multilabel=multilabel, out=out)


def expected_statistics(labels):
    """cc3d.statistics' fields computed here from the labels with NumPy alone."""
    n = int(labels.max()) if labels.size else 0
    counts = np.bincount(labels.ravel(), minlength=n + 1)
    boxes, centroids = [], np.full((n + 1, labels.ndim), np.nan)
    for value in range(n + 1):
        where = np.nonzero(labels == value)
        if len(where[0]) == 0:
            boxes.append(None)
            continue
        boxes.append(tuple(slice(int(w.min()), int(w.max()) + 1) for w in where))
        centroids[value] = [w.mean() for w in where]
    return counts, boxes, centroids


def assert_statistics(stats, labels):
    counts, boxes, centroids = expected_statistics(labels)
    np.testing.assert_array_equal(stats["voxel_counts"], counts)
    assert stats["bounding_boxes"] == boxes
    np.testing.assert_allclose(stats["centroids"], centroids, rtol=1e-12, equal_nan=True)
    assert_matches_cc3d(stats, labels)


def assert_matches_cc3d(stats, labels):
    """cc3d.statistics of the labels (skipped where cc3d is missing): also fast for many labels."""
    if cc3d is None:
        return
    reference = cc3d.statistics(np.ascontiguousarray(labels))
    np.testing.assert_array_equal(stats["voxel_counts"], reference["voxel_counts"])
    assert stats["voxel_counts"].dtype == reference["voxel_counts"].dtype
    # cc3d gives an empty label None, or at some sizes a box such as slice(65535, 1): compared
    # where the label has voxels (the NumPy oracle above says None for the rest).
    present = np.flatnonzero(stats["voxel_counts"]).tolist()
    assert [stats["bounding_boxes"][i] for i in present] == [reference["bounding_boxes"][i] for i in present]
    np.testing.assert_allclose(stats["centroids"], reference["centroids"], rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("shape", [(30, 31, 32), (47, 53)])
@pytest.mark.parametrize("multilabel", [True, False])
def test_statistics_match_cc3d(rng, shape, multilabel):
    a = rng.integers(0, 3, shape).astype(np.uint8)
    a[0] = 1  # a component touching the border
    labels, n, stats = winnow.label(a, return_N=True, stats=True, multilabel=multilabel, min_area=2)
    np.testing.assert_array_equal(labels, remove_small_keep_largest(*oracle(a, 26 if len(shape) == 3 else 8,
                                                                            multilabel), 2, 0)[0])
    assert_statistics(stats, labels)
    assert_statistics(winnow.statistics(labels), labels)


def test_statistics_of_any_label_array(rng):
    labels = rng.integers(0, 9, (13, 14, 15)).astype(np.int16)
    labels[labels == 4] = 0  # a label without voxels: None, NaN, 0
    assert_statistics(winnow.statistics(labels), labels)
    assert_statistics(winnow.statistics(np.asfortranarray(labels)[:, ::2]), labels[:, ::2])
    ones = np.ones((3, 4, 5), np.uint32)  # no background
    stats = winnow.statistics(ones)
    assert stats["voxel_counts"].tolist() == [0, 60] and stats["bounding_boxes"][0] is None
    assert_statistics(stats, ones)


@pytest.mark.parametrize("shape", [(0, 5, 6), (4, 0, 3), (0, 5)])
def test_statistics_of_arrays_without_voxels(shape):
    # The background alone, with no voxels (cc3d returns None for each field here).
    for stats in (winnow.statistics(np.zeros(shape, np.uint32)),
                  winnow.label(np.zeros(shape, np.uint8), stats=True)[1]):
        assert stats["voxel_counts"].tolist() == [0]
        assert stats["bounding_boxes"] == [None]
        assert stats["centroids"].shape == (1, len(shape)) and np.isnan(stats["centroids"]).all()


def test_bundled_volumes():
    for name in ("mni152_gm.nii.gz", "motor_activation.nii.gz"):
        volume = read_nifti(EXAMPLES / "volumes" / name)
        mask = volume > np.percentile(volume, 70)
        for connectivity in (6, 18, 26):
            labels, n = winnow.label(mask, connectivity, return_N=True)
            expected, expected_n = oracle(mask, connectivity)
            assert n == expected_n
            np.testing.assert_array_equal(labels, expected)
        # Quantised into a few levels: a real multi-label volume.
        levels = np.digitize(volume, np.percentile(volume, [50, 75, 90])).astype(np.uint8)
        labels, stats = winnow.label(levels, 26, stats=True)
        np.testing.assert_array_equal(labels, oracle(levels, 26)[0])
        if cc3d is not None:
            np.testing.assert_array_equal(labels, cc3d.connected_components(levels, connectivity=26))
        assert_statistics(stats, labels)
    blobs = io.imread(EXAMPLES / "volumes" / "blobs3d.tif")
    assert blobs.ndim == 3
    mask = blobs > blobs.mean()
    np.testing.assert_array_equal(winnow.label(mask, 6), oracle(mask, 6)[0])


def test_volume_bad_arguments(rng):
    a = rng.integers(0, 3, (5, 6, 7)).astype(np.uint8)
    cases = [
        (ValueError, "a", lambda: winnow.label(a[None])),
        (ValueError, "a", lambda: winnow.label(a[0, 0])),
        (ValueError, "connectivity", lambda: winnow.label(a, 8)),
        (ValueError, "connectivity", lambda: winnow.label(a[0], 26)),
        (ValueError, "connectivity", lambda: winnow.label(a, True)),
        (ValueError, "largest_k", lambda: winnow.label(a, largest_k=-2)),
        (ValueError, "min_area", lambda: winnow.label(a, min_area=1.5)),
        (TypeError, "out_dtype", lambda: winnow.label(a, out_dtype=np.int8)),
        (TypeError, "a", lambda: winnow.label(a.astype(np.complex64))),
        (ValueError, "out", lambda: winnow.label(a, out=np.empty((5, 6, 6), np.uint32))),
        (TypeError, "out", lambda: winnow.label(a, out=np.empty((5, 6, 7), np.float32))),
        (ValueError, "backend", lambda: winnow.label(a, backend="gpu")),
        (ValueError, "labels", lambda: winnow.statistics(np.full((3, 3), -1, np.int32))),
        (TypeError, "labels", lambda: winnow.statistics(np.zeros((3, 3), np.float32))),
        (ValueError, "labels", lambda: winnow.statistics(np.zeros(3, np.uint32))),
    ]
    for error, name, call in cases:
        with pytest.raises(error, match=name):
            call()


def test_volume_cuda_backend_on_host_arrays(rng, winnow_cuda):
    a = rng.integers(0, 3, (130, 140, 150)).astype(np.uint16)
    for connectivity in (6, 26):
        np.testing.assert_array_equal(winnow.label(a, connectivity, backend="cuda"), oracle(a, connectivity)[0])


@pytest.mark.parametrize("connectivity", [6, 18, 26])
def test_volumes_on_the_device(rng, device_lib, connectivity):
    values = rng.integers(0, 3, (70, 80, 90)).astype(np.uint16)
    for multilabel in (True, False):
        a = device_lib.asarray(values)
        labels, n = winnow.label(a, connectivity, multilabel=multilabel, return_N=True)
        expected, expected_n = oracle(values, connectivity, multilabel)
        assert device_lib.is_native(labels) and n == expected_n
        np.testing.assert_array_equal(device_lib.to_numpy(labels), expected)
    # Strided (a copy to contiguous), a multi-label image, min_area + largest_k, out=.
    strided = device_lib.asarray(values)[:, ::2]
    np.testing.assert_array_equal(device_lib.to_numpy(winnow.label(strided, connectivity)),
                                  oracle(values[:, ::2], connectivity)[0])
    swapped = device_lib.asarray(values).swapaxes(0, 1)  # slices closer than rows
    np.testing.assert_array_equal(device_lib.to_numpy(winnow.label(swapped, connectivity)),
                                  oracle(values.swapaxes(0, 1), connectivity)[0])
    image = values[5]
    np.testing.assert_array_equal(device_lib.to_numpy(winnow.label(device_lib.asarray(image), 4)), oracle(image, 4)[0])
    filtered = winnow.label(device_lib.asarray(values), connectivity, min_area=2, largest_k=9)
    np.testing.assert_array_equal(device_lib.to_numpy(filtered),
                                  remove_small_keep_largest(*oracle(values, connectivity), 2, 9)[0])
    out = device_lib.asarray(np.zeros(values.shape, np.int32))
    got = winnow.label(device_lib.asarray(values), connectivity, out=out)
    assert device_lib.pointer(got) == device_lib.pointer(out)
    np.testing.assert_array_equal(device_lib.to_numpy(out), oracle(values, connectivity)[0])


def test_device_volume_on_a_non_default_stream(rng, device_lib):
    values = rng.random((64, 64, 64)).astype(np.float32)
    stream = device_lib.new_stream()
    with device_lib.use_stream(stream):
        a = device_lib.asarray(values)
        b = a * 2  # queued on the stream; winnow must run after it on the same stream
        labels = winnow.label(b > 1.0, 26)
        # Read on the same stream: ordered after winnow's work, with no wait inside winnow.label.
        got = device_lib.to_numpy(labels)
    np.testing.assert_array_equal(got, oracle(values * 2 > 1.0, 26)[0])
