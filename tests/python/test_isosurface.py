"""winnow.marching_cubes against skimage.measure.marching_cubes: the same vertex positions
(array-index order times spacing), faces oriented the same way for both gradient directions,
normals pointing the same way; and, beyond scikit-image, a welded watertight mesh (every edge
of a closed surface used by two faces, once in each direction). Analytic fields and a noisy
volume, every voxel dtype, strided and Fortran-order volumes, bad arguments."""

import numpy as np
import pytest
from scipy.spatial import cKDTree
from skimage import measure

import winnow

SPACINGS = [(1.0, 1.0, 1.0), (1.0, 2.0, 0.5)]


def ellipsoid(dtype, shape=(25, 25, 23)):
    z, y, x = np.mgrid[: shape[0], : shape[1], : shape[2]].astype(np.float64)
    z, y, x = z - shape[0] // 2, y - shape[1] // 2, x - shape[2] // 2
    field = 100 - 6 * np.sqrt(x * x + 1.3 * y * y + 0.7 * z * z)  # greater inside
    if np.dtype(dtype).kind in "iu":
        field = np.clip(field, 0, None)
    return field.astype(dtype)


def sorted_rows(points, decimals=3):
    return np.unique(np.round(points.astype(np.float64), decimals), axis=0)


def orientation(verts, faces, centre):
    a, b, c = verts[faces[:, 0]], verts[faces[:, 1]], verts[faces[:, 2]]
    return np.sign(np.einsum("ij,ij->i", np.cross(b - a, c - a), (a + b + c) / 3 - centre))


def assert_watertight(faces):
    edges = np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]]).astype(np.int64)
    directed = {tuple(e) for e in edges.tolist()}
    assert len(directed) == len(edges), "an edge used twice in the same direction"
    assert all((b, a) in directed for a, b in directed), "an edge without its opposite"


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "int16", "float32", "float64", "int32"])
@pytest.mark.parametrize("spacing", SPACINGS)
@pytest.mark.parametrize("direction", ["descent", "ascent"])
def test_matches_scikit_image(dtype, spacing, direction):
    volume = ellipsoid(dtype)
    level = 50.5  # a closed surface, clear of the border
    verts, faces, normals, values = winnow.marching_cubes(volume, level, spacing=spacing, gradient_direction=direction)
    s_verts, s_faces, s_normals, _ = measure.marching_cubes(volume, level, spacing=spacing,
                                                            gradient_direction=direction)
    assert verts.dtype == np.float32 and verts.shape[1] == 3 and len(values) == len(verts)
    assert len(sorted_rows(verts)) == len(verts)  # welded: no two vertices at one place
    np.testing.assert_allclose(sorted_rows(verts), sorted_rows(s_verts), atol=2e-3)
    centre = verts.mean(axis=0)
    assert (orientation(verts, faces, centre) == orientation(s_verts, s_faces, centre).mean()).all()
    ours = np.sign(np.einsum("ij,ij->i", normals, verts - centre))
    theirs = np.sign(np.einsum("ij,ij->i", s_normals, s_verts - centre))
    assert ours.mean() == pytest.approx(theirs.mean(), abs=0.02) and abs(ours.mean()) > 0.9
    np.testing.assert_allclose(np.linalg.norm(normals, axis=1), 1, atol=1e-5)
    assert_watertight(faces)


def test_noisy_volume_vertices_and_default_level(rng):
    volume = rng.standard_normal((24, 20, 22)).astype(np.float32)
    volume[0], volume[-1], volume[:, 0], volume[:, -1], volume[:, :, 0], volume[:, :, -1] = (-5,) * 6
    verts, faces, _, _ = winnow.marching_cubes(volume)
    s_verts, _, _, _ = measure.marching_cubes(volume)
    ours, theirs = sorted_rows(verts), sorted_rows(s_verts)
    # Every edge crossing is scikit-image's; where an ambiguous cell needs it, Lewiner's method
    # also adds a vertex inside the cell (off every cell edge), which the face rule here does not.
    assert (cKDTree(theirs).query(ours)[0] < 1e-3).all()
    extra = theirs[cKDTree(ours).query(theirs)[0] >= 1e-3]
    on_grid = np.isclose(extra, np.round(extra), atol=1e-3).sum(axis=1)
    assert (on_grid < 2).all(), "a scikit-image edge crossing is missing"
    assert_watertight(faces)


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "int16", "float32"])
def test_levels_equal_to_voxel_values_give_a_closed_manifold(rng, dtype):
    # CT and MRI users call marching cubes at integer levels of integer volumes: many voxels equal
    # the level. Each crossed edge keeps its own vertex (one per edge, counted here from the
    # volume), at scikit-image's position within a float's rounding, on a closed oriented mesh.
    volume = np.zeros((14, 12, 13), dtype)
    volume[1:-1, 1:-1, 1:-1] = rng.integers(0, 4, (12, 10, 11))
    for level in (1.0, 2.0):
        verts, faces, _, _ = winnow.marching_cubes(volume, level)
        assert_watertight(faces)
        assert np.array_equal(np.unique(faces), np.arange(len(verts))), "every vertex used"
        assert (faces[:, 0] != faces[:, 1]).all() and (faces[:, 1] != faces[:, 2]).all()
        assert (faces[:, 0] != faces[:, 2]).all()
        above = volume > level
        crossed = sum(int((np.diff(above.astype(np.int8), axis=axis) != 0).sum()) for axis in range(3))
        assert len(verts) == crossed
        assert len(np.unique(verts, axis=0)) == len(verts)  # distinct points, if a float apart
        s_verts = measure.marching_cubes(volume.astype(np.float64), level, method="lorensen")[0]
        assert (cKDTree(sorted_rows(s_verts)).query(verts)[0] < 1e-3).all()


@pytest.mark.parametrize("layout", ["strided", "F", "swapped", "broadcast"])
def test_layouts(layout):
    base = ellipsoid(np.float32, (30, 26, 34))
    volume = {"strided": base[::2, 1:, ::2], "F": np.asfortranarray(base), "swapped": base.swapaxes(0, 1),
              "broadcast": np.broadcast_to(base[15:16], (3,) + base.shape[1:])}[layout]
    verts, _, _, _ = winnow.marching_cubes(volume, 40.0)
    np.testing.assert_allclose(sorted_rows(verts), sorted_rows(measure.marching_cubes(volume, 40.0)[0]), atol=2e-3)


@pytest.mark.parametrize("step", [1, 2, 3])
@pytest.mark.parametrize("mask", ["none", "half", "random"])
def test_step_size_and_mask_match_scikit_image(rng, step, mask):
    volume = ellipsoid(np.float32)
    z = np.indices(volume.shape)[0]
    cells = None if mask == "none" else z >= 12 if mask == "half" else rng.random(volume.shape) < 0.6
    spacing = (1.0, 2.0, 0.5)
    verts, faces, normals, values = winnow.marching_cubes(volume, 50.5, spacing=spacing, step_size=step, mask=cells)
    s_verts, s_faces, _, _ = measure.marching_cubes(volume, 50.5, spacing=spacing, step_size=step, mask=cells,
                                                    method="lewiner")
    np.testing.assert_allclose(sorted_rows(verts), sorted_rows(s_verts), atol=2e-3)
    assert len(faces) == len(s_faces)
    assert np.array_equal(np.unique(faces), np.arange(len(verts))), "every vertex used"
    assert len(normals) == len(values) == len(verts)
    if mask == "none":  # the mesh of every step-th voxel
        expected = winnow.marching_cubes(volume[::step, ::step, ::step], 50.5,
                                         spacing=tuple(s * step for s in spacing))
        np.testing.assert_array_equal(verts, expected[0])
        np.testing.assert_array_equal(faces, expected[1])
        assert_watertight(faces)


def test_mask_cuts_an_open_surface():
    volume = ellipsoid(np.float32)
    z = np.indices(volume.shape)[0]
    verts, faces, _, _ = winnow.marching_cubes(volume, 50.5, mask=z >= 12)
    assert (verts[:, 0] >= 11).all()  # cells whose upper corner is at z >= 12
    edges = np.sort(np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]]), axis=1)
    _, uses = np.unique(edges, axis=0, return_counts=True)
    assert (uses <= 2).all() and (uses == 1).any()  # an open surface: a rim of edges used once
    with pytest.warns(UserWarning, match="mask"):
        empty = winnow.marching_cubes(volume, 50.5, mask=np.zeros(volume.shape, bool))
    assert empty[0].shape == (0, 3) and empty[1].shape == (0, 3)


def test_bad_arguments():
    volume = ellipsoid(np.float32)
    for error, name, call in [(ValueError, "volume", lambda: winnow.marching_cubes(volume[0], 1.0)),
                              (ValueError, "volume", lambda: winnow.marching_cubes(volume[:1], 1.0)),
                              (ValueError, "gradient_direction",
                               lambda: winnow.marching_cubes(volume, 1.0, gradient_direction="up")),
                              (ValueError, "spacing", lambda: winnow.marching_cubes(volume, 1.0, spacing=(1, 1))),
                              (ValueError, "spacing", lambda: winnow.marching_cubes(volume, 1.0, spacing=(1, 0, 1))),
                              (TypeError, "level", lambda: winnow.marching_cubes(volume, "1")),
                              (ValueError, "level", lambda: winnow.marching_cubes(volume, float("nan"))),
                              (TypeError, "volume", lambda: winnow.marching_cubes(volume.astype(np.complex64), 1.0)),
                              (ValueError, "backend", lambda: winnow.marching_cubes(volume, 1.0, backend="x")),
                              (ValueError, "step_size", lambda: winnow.marching_cubes(volume, 1.0, step_size=0)),
                              (ValueError, "step_size", lambda: winnow.marching_cubes(volume, 1.0, step_size=1.5)),
                              (ValueError, "lewiner", lambda: winnow.marching_cubes(volume, 1.0, method="lorensen")),
                              (ValueError, "method", lambda: winnow.marching_cubes(volume, 1.0, method="dual")),
                              (ValueError, "mask", lambda: winnow.marching_cubes(volume, 1.0, mask=volume[1:] > 0))]:
        with pytest.raises(error, match=name):
            call()


@pytest.mark.parametrize("dtype", ["uint8", "int16", "float32", "float64", "int32"])
@pytest.mark.parametrize("direction", ["descent", "ascent"])
def test_device_volumes_match_the_host_mesh(device_lib, dtype, direction):
    """CuPy / PyTorch volumes: the mesh in the caller's library on the device, the host path's
    mesh exactly (the device API's contract), on strided input and a non-default stream too."""
    volume = ellipsoid(dtype, (30, 28, 26))
    expected = winnow.marching_cubes(volume, 50.5, spacing=(1.0, 2.0, 0.5), gradient_direction=direction,
                                     backend="cpu")
    stream = device_lib.new_stream()
    with device_lib.use_stream(stream):
        on_device = device_lib.asarray(volume)
        got = winnow.marching_cubes(on_device, 50.5, spacing=(1.0, 2.0, 0.5), gradient_direction=direction)
    assert all(device_lib.is_native(part) for part in got)
    verts, faces, normals, values = (device_lib.to_numpy(part) for part in got)
    np.testing.assert_array_equal(verts, expected[0])
    np.testing.assert_array_equal(faces.astype(np.int64), expected[1].astype(np.int64))
    np.testing.assert_allclose(normals, expected[2], atol=1e-6)
    np.testing.assert_allclose(values, expected[3], atol=1e-6)
    assert_watertight(faces)
    strided = winnow.marching_cubes(device_lib.asarray(volume)[::2, :, 1:], 50.5)
    np.testing.assert_array_equal(device_lib.to_numpy(strided[0]),
                                  winnow.marching_cubes(volume[::2, :, 1:], 50.5, backend="cpu")[0])
    swapped = winnow.marching_cubes(device_lib.asarray(volume).swapaxes(0, 1), 50.5)  # slices closer than rows
    np.testing.assert_array_equal(device_lib.to_numpy(swapped[0]),
                                  winnow.marching_cubes(volume.swapaxes(0, 1), 50.5, backend="cpu")[0])
    default_level = winnow.marching_cubes(device_lib.asarray(volume))
    np.testing.assert_array_equal(device_lib.to_numpy(default_level[0]),
                                  winnow.marching_cubes(volume, backend="cpu")[0])
    with pytest.raises(ValueError, match="backend"):
        winnow.marching_cubes(on_device, 50.5, backend="cpu")
    # step_size and mask on the device: the host path's mesh.
    z = np.indices(volume.shape)[0]
    for step, mask in ((2, None), (1, z >= 10), (3, z % 3 == 0)):
        got = winnow.marching_cubes(device_lib.asarray(volume), 50.5, step_size=step,
                                    mask=None if mask is None else device_lib.asarray(mask))
        expected = winnow.marching_cubes(volume, 50.5, step_size=step, mask=mask, backend="cpu")
        assert all(device_lib.is_native(part) for part in got)
        np.testing.assert_array_equal(device_lib.to_numpy(got[0]), expected[0])
        np.testing.assert_array_equal(device_lib.to_numpy(got[1]).astype(np.int64), expected[1].astype(np.int64))
    with pytest.raises(TypeError, match="mask"):
        winnow.marching_cubes(device_lib.asarray(volume), 50.5, mask=z > 3)
