"""winnow.voxels against np.argwhere and boolean indexing (every voxel dtype, above, below and
non-zero, strided volumes), and winnow.scramble / unscramble against the tiles cut with NumPy
slicing from a bundled photograph."""

import numpy as np
import pytest
from skimage import io

import winnow
from conftest import EXAMPLES

VOXEL_DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64"]


@pytest.mark.parametrize("dtype", VOXEL_DTYPES)
@pytest.mark.parametrize("layout", ["C", "strided", "F", "swapped", "byte_swapped"])
def test_voxels_match_argwhere(rng, dtype, layout):
    base = rng.integers(0, 100, (9, 13, 17)).astype(dtype)
    volume = {"C": base, "strided": base[::2, 1:, ::3], "F": np.asfortranarray(base), "swapped": base.swapaxes(0, 1),
              "byte_swapped": base.astype(base.dtype.newbyteorder())}[layout]
    for level, mode, keep in ((41.5, "above", volume > 41.5), (41, "above", volume > 41),
                              (17.2, "below", volume < 17.2), (0, "nonzero", volume != 0)):
        coordinates, values = winnow.voxels(volume, level, mode=mode)
        np.testing.assert_array_equal(coordinates, np.argwhere(keep))
        np.testing.assert_array_equal(values, volume[keep])
        assert values.dtype == volume.dtype.newbyteorder("=")


def test_voxels_nan_never_kept_and_bad_arguments(rng):
    volume = rng.standard_normal((4, 5, 6)).astype(np.float32)
    volume[1, 2, 3] = np.nan
    coordinates, values = winnow.voxels(volume, -10.0)
    np.testing.assert_array_equal(coordinates, np.argwhere(volume > -10))
    for error, name, call in [(ValueError, "volume", lambda: winnow.voxels(volume[0], 0)),
                              (ValueError, "mode", lambda: winnow.voxels(volume, 0, mode="over")),
                              (ValueError, "level", lambda: winnow.voxels(volume, float("nan"))),
                              (TypeError, "level", lambda: winnow.voxels(volume, "1")),
                              (TypeError, "volume", lambda: winnow.voxels(volume.astype(np.float16), 0)),
                              (TypeError, "volume", lambda: winnow.voxels(volume.astype(object), 0)),
                              (TypeError, "volume", lambda: winnow.voxels(volume > 0, 0))]:
        with pytest.raises(error, match=name):
            call()
    # A volume without voxels: nothing kept, with the warning of an empty result.
    with pytest.warns(UserWarning, match="the volume is empty"):
        coordinates, values = winnow.voxels(np.zeros((0, 3, 4), np.uint8), 0)
    assert coordinates.shape == (0, 3) and values.shape == (0,) and values.dtype == np.uint8


def tiles_of(image, rows, cols, tile):
    return [image[r * tile:(r + 1) * tile, c * tile:(c + 1) * tile] for r in range(rows) for c in range(cols)]


@pytest.mark.parametrize("grid", [(2, 2), (3, 3), (4, 6)])
def test_scramble_then_unscramble_a_photo(grid):
    image = io.imread(EXAMPLES / "chelsea.png")[..., :3]
    rows, cols = grid
    scrambled, truth = winnow.scramble(image, grid, seed=11)
    tile = min(image.shape[0] // rows, image.shape[1] // cols)
    original = tiles_of(image, rows, cols, tile)
    puzzle = tiles_of(scrambled, rows, cols, tile)
    assert scrambled.dtype == np.uint8 and scrambled.shape == (rows * tile, cols * tile, 3)
    assert sorted(truth.tolist()) == list(range(rows * cols))
    for t, position in enumerate(truth):
        np.testing.assert_array_equal(puzzle[t], original[position])
    restored, placement = winnow.unscramble(scrambled, grid)
    assert [truth[p] for p in placement] == list(range(rows * cols))  # every tile back in place
    np.testing.assert_array_equal(restored, image[:rows * tile, :cols * tile])


def test_puzzle_bad_arguments():
    image = np.zeros((32, 32), np.uint8) + np.arange(32, dtype=np.uint8)
    for error, name, call in [(ValueError, "grid", lambda: winnow.scramble(image, (2, 2), tile=8)),
                              (ValueError, "grid", lambda: winnow.scramble(image)),
                              (ValueError, "tile", lambda: winnow.scramble(image, tile=1)),
                              (ValueError, "measure", lambda: winnow.unscramble(image, (2, 2), measure="l2")),
                              (ValueError, "method", lambda: winnow.unscramble(image, (4, 4), method="exhaustive")),
                              (ValueError, "image", lambda: winnow.unscramble(image[None, None], (2, 2)))]:
        with pytest.raises(error, match=name):
            call()


@pytest.mark.parametrize("dtype", VOXEL_DTYPES)
def test_voxels_on_the_device(rng, device_lib, dtype):
    """CuPy / PyTorch volumes: the host path's voxels, as arrays of the caller's library."""
    base = rng.integers(0, 100, (9, 13, 17)).astype(dtype)
    if np.dtype(dtype).kind == "f":
        base[2, 3, 4] = np.nan
    for volume in (base, base[::2, 1:, ::3]):
        on_device = device_lib.asarray(volume)
        for level, mode in ((41.5, "above"), (17.2, "below"), (0, "nonzero")):
            coordinates, values = winnow.voxels(on_device, level, mode=mode)
            assert device_lib.is_native(coordinates) and device_lib.is_native(values)
            expected = winnow.voxels(volume, level, mode=mode)
            np.testing.assert_array_equal(device_lib.to_numpy(coordinates), expected[0])
            np.testing.assert_array_equal(device_lib.to_numpy(values).astype(np.float64),
                                          expected[1].astype(np.float64))
    with pytest.warns(UserWarning, match="no voxel kept"):
        coordinates, _ = winnow.voxels(device_lib.asarray(base), 1000)
    assert tuple(coordinates.shape) == (0, 3)
    with pytest.warns(UserWarning, match="the volume is empty"):
        coordinates, values = winnow.voxels(device_lib.asarray(base[:0]), 0)
    assert tuple(coordinates.shape) == (0, 3) and tuple(values.shape) == (0,)
    with pytest.raises(ValueError, match="backend"):
        winnow.voxels(device_lib.asarray(base), 0, backend="cpu")


def test_puzzles_on_the_device(device_lib):
    image = io.imread(EXAMPLES / "astronaut.png")[:256, :256]
    scrambled, truth = winnow.scramble(device_lib.asarray(image), (3, 3), seed=5)
    assert device_lib.is_native(scrambled) and device_lib.is_native(truth)
    expected = winnow.scramble(image, (3, 3), seed=5)
    np.testing.assert_array_equal(device_lib.to_numpy(scrambled), expected[0])
    np.testing.assert_array_equal(device_lib.to_numpy(truth), expected[1])
    restored, placement = winnow.unscramble(scrambled, (3, 3))
    assert device_lib.is_native(restored)
    np.testing.assert_array_equal(device_lib.to_numpy(restored), winnow.unscramble(expected[0], (3, 3))[0])


def test_puzzles_keep_pytorch_cpu_tensors():
    torch = pytest.importorskip("torch")
    image = io.imread(EXAMPLES / "astronaut.png")[:128, :128]
    scrambled, truth = winnow.scramble(torch.from_numpy(image), (2, 2), seed=3)
    assert isinstance(scrambled, torch.Tensor) and isinstance(truth, torch.Tensor)
    np.testing.assert_array_equal(scrambled.numpy(), winnow.scramble(image, (2, 2), seed=3)[0])
