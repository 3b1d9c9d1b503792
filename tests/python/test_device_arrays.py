"""CuPy arrays and PyTorch CUDA tensors: the result is of the caller's type on the same device,
equal to the NumPy oracle, written into the caller's out= buffer without a hidden copy (its
pointer), and ordered on a non-default current stream (the input is produced on that stream
just before the call; a call on another stream would race with it). Skipped without a device;
failed under WINNOW_REQUIRE_GPU=1."""

import numpy as np
import pytest
import scipy.ndimage as ndi

import winnow


def test_compact_select_flatnonzero(rng, device_lib):
    a_host = rng.standard_normal(1_000_003).astype(np.float32)
    a = device_lib.asarray(a_host)
    mask = a > 0.25
    got = winnow.compact(a, mask)
    assert device_lib.is_native(got)
    np.testing.assert_array_equal(device_lib.to_numpy(got), a_host[a_host > 0.25])
    got = winnow.select(a, "<=", -0.5)
    assert device_lib.is_native(got)
    np.testing.assert_array_equal(device_lib.to_numpy(got), a_host[a_host <= np.float32(-0.5)])
    got = winnow.flatnonzero(mask)
    assert device_lib.is_native(got)
    np.testing.assert_array_equal(device_lib.to_numpy(got), np.flatnonzero(a_host > 0.25))


def test_strided_device_input(rng, device_lib):
    base = rng.integers(0, 100, (300, 400), dtype=np.int32)
    a = device_lib.asarray(base)[::2, 1::3]
    expected = base[::2, 1::3]
    np.testing.assert_array_equal(device_lib.to_numpy(winnow.select(a, ">", 40)), expected[expected > 40])


def test_out_buffer_is_written_in_place(rng, device_lib):
    a_host = rng.integers(0, 1000, 100_000, dtype=np.int64)
    a = device_lib.asarray(a_host)
    out = device_lib.asarray(np.zeros(100_000, np.int64))
    got = winnow.compact(a, a > 500, out=out)
    assert device_lib.pointer(got) == device_lib.pointer(out)
    np.testing.assert_array_equal(device_lib.to_numpy(got), a_host[a_host > 500])


def test_label_on_the_device(rng, device_lib):
    mask_host = rng.random((777, 1031)) < 0.45
    mask = device_lib.asarray(mask_host)
    for connectivity, structure in ((4, ndi.generate_binary_structure(2, 1)), (8, np.ones((3, 3), bool))):
        labels, n = winnow.label(mask, connectivity, return_N=True)
        expected, expected_n = ndi.label(mask_host, structure)
        assert device_lib.is_native(labels) and n == expected_n
        np.testing.assert_array_equal(device_lib.to_numpy(labels), expected)
    small = winnow.label(mask, 8, min_area=5)
    expected = ndi.label(mask_host, np.ones((3, 3), bool))[0]
    areas = np.bincount(expected.ravel())
    keep = areas >= 5
    keep[0] = False
    np.testing.assert_array_equal(device_lib.to_numpy(small).astype(np.int64), (np.cumsum(keep) * keep)[expected])


def test_non_default_stream(rng, device_lib):
    a_host = rng.standard_normal(4_000_000).astype(np.float32)
    stream = device_lib.new_stream()
    with device_lib.use_stream(stream):
        assert device_lib.current_stream_pointer() != 0
        a = device_lib.asarray(a_host)
        b = a * 2  # queued on the stream; winnow must run after it on the same stream
        got = winnow.select(b, ">", 1.0)
        labels = winnow.label((b > 1.0).reshape(2000, 2000), 8)
        # Read on the same stream: a device labeling does not wait for its stream.
        got, labels = device_lib.to_numpy(got), device_lib.to_numpy(labels)
    np.testing.assert_array_equal(got, (a_host * 2)[a_host * 2 > 1.0])
    expected = ndi.label((a_host * 2 > 1.0).reshape(2000, 2000), np.ones((3, 3), int))[0]
    np.testing.assert_array_equal(labels, expected)


def test_device_arrays_refuse_cpu_backend_and_mixed_inputs(rng, device_lib):
    a = device_lib.asarray(rng.standard_normal(100).astype(np.float32))
    with pytest.raises(ValueError, match="backend"):
        winnow.compact(a, a > 0, backend="cpu")
    with pytest.raises(TypeError, match="mask"):
        winnow.compact(a, np.ones(100, bool))
