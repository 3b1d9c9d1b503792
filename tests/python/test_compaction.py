"""winnow.compact, select and flatnonzero on NumPy arrays against NumPy's boolean indexing and
np.flatnonzero: every dtype, random data and masks, empty and odd sizes, C, Fortran and strided
layouts, out= buffers, and every bad argument."""

import numpy as np
import pytest

import winnow

ALL_DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16",
              "float32", "float64", "complex64", "complex128"]
SELECT_DTYPES = ["uint8", "uint16", "int32", "uint32", "float32", "int64", "uint64", "float64"]
SIZES = [0, 1, 31, 1000, 100_003]
OPS = [">", ">=", "<", "<=", "==", "!="]


def random_array(rng, dtype, shape):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return (rng.standard_normal(shape) * 100).astype(dtype)


def small_values(rng, dtype, shape):
    """Values around a threshold of 0..10 so every comparison keeps some and drops some."""
    return rng.integers(0, 10, size=shape).astype(dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("backend", ["auto", "cpu"])
def test_compact_matches_boolean_indexing(rng, dtype, n, backend):
    a = random_array(rng, dtype, n)
    mask = rng.random(n) < rng.random()
    got = winnow.compact(a, mask, backend=backend)
    assert got.dtype == a.dtype
    np.testing.assert_array_equal(got, a[mask])


def test_compact_any_order_keeps_the_same_elements(rng):
    a = rng.integers(0, 1 << 30, 50_000, dtype=np.int64)
    mask = rng.random(a.size) < 0.3
    np.testing.assert_array_equal(np.sort(winnow.compact(a, mask, order="any")), np.sort(a[mask]))


@pytest.mark.parametrize("layout", ["C", "F", "strided", "reversed"])
def test_compact_layouts(rng, layout):
    base = rng.standard_normal((64, 96)).astype(np.float32)
    a = {"C": base, "F": np.asfortranarray(base), "strided": base[::3, 1::2], "reversed": base[::-1, ::-2]}[layout]
    mask = a > 0.2
    np.testing.assert_array_equal(winnow.compact(a, mask), a[mask])


def test_compact_into_out_writes_the_given_buffer(rng):
    a = rng.integers(0, 100, 1000, dtype=np.int32)
    out = np.empty(1000, np.int32)
    got = winnow.compact(a, a > 50, out=out)
    assert np.shares_memory(got, out)
    np.testing.assert_array_equal(got, a[a > 50])


def test_compact_accepts_read_only_and_lists(rng):
    a = rng.integers(0, 100, 100, dtype=np.uint16)
    a.setflags(write=False)
    mask = a > 30
    mask.setflags(write=False)
    np.testing.assert_array_equal(winnow.compact(a, mask), a[mask])
    np.testing.assert_array_equal(winnow.compact([1, 2, 3], [True, False, True]), [1, 3])


@pytest.mark.parametrize("dtype", SELECT_DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_select_matches_comparison(rng, dtype, op):
    for n in (0, 1, 1000, 70_001):
        a = small_values(rng, dtype, n)
        for threshold in (4, 4.5, -3, 0):
            expected = a[eval(f"a.astype(np.float64) {op} threshold")] if np.dtype(dtype).kind in "iu" else \
                a[eval(f"a {op} np.dtype(dtype).type(threshold)")]
            got = winnow.select(a, op, threshold)
            assert got.dtype == a.dtype
            np.testing.assert_array_equal(got, expected, err_msg=f"{dtype} {op} {threshold} n={n}")


@pytest.mark.parametrize("dtype", ["uint8", "int32", "uint64", "int64"])
@pytest.mark.parametrize("op", OPS)
def test_select_thresholds_beyond_the_type_are_exact(rng, dtype, op):
    info = np.iinfo(dtype)
    a = random_array(rng, dtype, 5000)
    a[:3] = [info.min, info.max, 0]
    for threshold in (int(info.min) - 1, int(info.max) + 1, int(info.max), int(info.min), float("inf"),
                      float("-inf"), float("nan"), 2.0**70):
        exact = np.array([eval(f"int(x) {op} threshold") if threshold == threshold else op == "!="
                          for x in a.tolist()], bool)
        np.testing.assert_array_equal(winnow.select(a, op, threshold), a[exact], err_msg=f"{op} {threshold}")


def test_select_names_and_any_order(rng):
    a = rng.standard_normal(10_000)
    np.testing.assert_array_equal(winnow.select(a, "greater_equal", 0.5), a[a >= 0.5])
    np.testing.assert_array_equal(np.sort(winnow.select(a, "<", 0.0, order="any")), np.sort(a[a < 0.0]))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(0,), (1,), (1000,), (37, 53), (5, 7, 11), (5000,), (70, 90), (150, 130)])
def test_flatnonzero_matches_numpy(rng, dtype, shape):
    a = random_array(rng, dtype, shape)
    if np.dtype(dtype) != np.bool_:
        a[rng.random(shape) < 0.5] = 0
    # auto: NumPy's nonzero below 2048 elements (16384 for bool), the library above; cpu: the
    # library always.
    for backend in ("auto", "cpu"):
        got = winnow.flatnonzero(a, backend=backend)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, np.flatnonzero(a))


def test_flatnonzero_negative_zero_and_nan():
    a = np.array([0.0, -0.0, np.nan, 1.0, -0.0, np.inf], np.float32)
    for backend in ("auto", "cpu"):
        np.testing.assert_array_equal(winnow.flatnonzero(a, backend=backend), np.flatnonzero(a))
        np.testing.assert_array_equal(winnow.flatnonzero(a.astype(np.float16), backend=backend), np.flatnonzero(a))
    large = np.tile(a, 1000)
    np.testing.assert_array_equal(winnow.flatnonzero(large), np.flatnonzero(large))


def test_results_hold_only_what_they_keep(rng):
    """A result with 1 MiB or more of its input-sized buffer unused owns exactly its elements (the
    buffer shrunk in place), equal to NumPy's; a smaller one may be a view of its buffer."""
    a = rng.random(1_000_000) < 0.3
    values = rng.standard_normal(a.size)
    for got, want in ((winnow.flatnonzero(a), np.flatnonzero(a)), (winnow.compact(values, a), values[a]),
                      (winnow.select(values, ">", 1.0), values[values > 1.0])):
        np.testing.assert_array_equal(got, want)
        assert got.base is None and got.flags.owndata and got.nbytes == want.nbytes
    small = winnow.flatnonzero(a[:20_000], backend="cpu")
    np.testing.assert_array_equal(small, np.flatnonzero(a[:20_000]))


@pytest.mark.parametrize("layout", ["F", "strided"])
def test_flatnonzero_layouts(rng, layout):
    base = rng.integers(0, 3, (140, 160), dtype=np.uint8)
    a = np.asfortranarray(base) if layout == "F" else base[1::2, ::3]
    for backend in ("auto", "cpu"):
        np.testing.assert_array_equal(winnow.flatnonzero(a, backend=backend), np.flatnonzero(a))


def test_bad_arguments_raise_named_errors(rng):
    a = rng.integers(0, 10, 100, dtype=np.int32)
    mask = a > 5
    cases = [
        (TypeError, "mask", lambda: winnow.compact(a, mask.astype(np.uint8))),
        (ValueError, "mask", lambda: winnow.compact(a, mask[:50])),
        (TypeError, "a", lambda: winnow.compact(np.array([object()] * 100), mask)),
        (TypeError, "a", lambda: winnow.compact(np.zeros(100, "V3"), mask)),
        (ValueError, "order", lambda: winnow.compact(a, mask, order="sorted")),
        (ValueError, "backend", lambda: winnow.compact(a, mask, backend="gpu0")),
        (ValueError, "out", lambda: winnow.compact(a, mask, out=np.empty(10, np.int32))),
        (TypeError, "out", lambda: winnow.compact(a, mask, out=np.empty(100, np.int8))),
        (ValueError, "op", lambda: winnow.select(a, "=>", 3)),
        (TypeError, "threshold", lambda: winnow.select(a, ">", "3")),
        (TypeError, "a", lambda: winnow.select(a.astype(np.int8), ">", 3)),
        (TypeError, "a", lambda: winnow.flatnonzero(np.array(["x", "y"]))),
        (ValueError, "backend", lambda: winnow.flatnonzero(a, backend="")),
    ]
    for error, name, call in cases:
        with pytest.raises(error, match=name):
            call()


def test_cuda_backend_without_a_device_is_an_error(rng):
    if winnow.cuda_available():
        pytest.skip("a CUDA device answers")
    a = rng.integers(0, 10, 100, dtype=np.int32)
    with pytest.raises(RuntimeError):
        winnow.compact(a, a > 5, backend="cuda")


def test_cuda_backend_on_host_arrays(rng, winnow_cuda):
    a = rng.standard_normal(300_001).astype(np.float32)
    np.testing.assert_array_equal(winnow.compact(a, a > 0.3, backend="cuda"), a[a > 0.3])
    np.testing.assert_array_equal(winnow.select(a, "<", -0.1, backend="cuda"), a[a < np.float32(-0.1)])
    np.testing.assert_array_equal(winnow.flatnonzero(a > 1, backend="cuda"), np.flatnonzero(a > 1))
