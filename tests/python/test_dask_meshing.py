"""winnow.dask.marching_cubes against winnow.marching_cubes on the whole array: order="volume"
gives the same arrays exactly (positions, faces, normals, values); the default chunk order the
same vertices and triangles; welded and watertight across the chunks' seams; chunkings that cut
the surface everywhere (uneven, thin chunks merged, one chunk), levels equal to voxel values,
spacing, both gradient directions, bad arguments."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import winnow  # noqa: E402
import winnow.dask  # noqa: E402


def gyroid(shape=(23, 27, 30)):
    z, y, x = np.mgrid[: shape[0], : shape[1], : shape[2]].astype(np.float64)
    k = 2 * np.pi / 11
    return (np.sin(k * x) * np.cos(k * y) + np.sin(k * y) * np.cos(k * z) + np.sin(k * z) * np.cos(k * x)).astype(
        np.float32)


def assert_same_arrays(a, b):
    for got, want in zip(a, b):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got, want)


def as_sets(mesh):
    """Vertex rows (position, normal, value) sorted, and triangles as sorted rows of those rows' ranks."""
    verts, faces, normals, values = mesh
    rows = np.column_stack([verts, normals, values[:, None]])
    order = np.lexsort(rows.T[::-1])
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    triangles = rank[faces.astype(np.int64)]
    triangles = triangles[np.lexsort(triangles.T[::-1])]
    return rows[order], triangles


def assert_watertight(faces):
    edges = np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]]).astype(np.int64)
    directed = {tuple(e) for e in edges.tolist()}
    assert len(directed) == len(edges)
    assert all((b, a) in directed for a, b in directed)


@pytest.mark.parametrize("chunks", [(7, 9, 11), (23, 27, 30), (5, 1, 30), ((10, 13), (1, 26), (15, 1, 14))])
def test_volume_order_is_the_whole_call(chunks):
    field = gyroid()
    whole = winnow.marching_cubes(field, 0.1)
    chunked = winnow.dask.marching_cubes(da.from_array(field, chunks=chunks), 0.1, order="volume", progress=False)
    assert_same_arrays(chunked, whole)


def test_chunk_order_holds_the_same_mesh_and_is_watertight():
    field = gyroid()
    field[0], field[-1], field[:, 0], field[:, -1], field[:, :, 0], field[:, :, -1] = (-5,) * 6  # closed
    whole = winnow.marching_cubes(field, 0.1, spacing=(1.5, 1.0, 0.5))
    chunked = winnow.dask.marching_cubes(da.from_array(field, chunks=(6, 8, 10)), 0.1, spacing=(1.5, 1.0, 0.5),
                                         progress=False)
    assert len(chunked[0]) == len(whole[0]) and len(chunked[1]) == len(whole[1])
    for got, want in zip(as_sets(chunked), as_sets(whole)):
        assert np.array_equal(got, want)
    assert_watertight(chunked[1])


@pytest.mark.parametrize("direction", ["descent", "ascent"])
def test_levels_equal_to_voxel_values_and_gradient_direction(rng, direction):
    volume = rng.integers(0, 4, (19, 17, 21)).astype(np.uint8)
    whole = winnow.marching_cubes(volume, 2.0, gradient_direction=direction)
    chunked = winnow.dask.marching_cubes(da.from_array(volume, chunks=(5, 6, 7)), 2.0, gradient_direction=direction,
                                         order="volume", progress=False)
    assert_same_arrays(chunked, whole)


@pytest.mark.parametrize("layout", ["big_endian", "swapped"])
def test_chunks_of_any_byte_order_and_layout(layout):
    """Big-endian chunks (an N5 store's) and chunks with swapped axes mesh as the whole array does."""
    field = gyroid()
    if layout == "big_endian":
        darr = da.from_array(field.astype(">f4"), chunks=(7, 9, 11))
    else:
        darr = da.from_array(np.ascontiguousarray(field.swapaxes(0, 1)), chunks=(9, 7, 11)).swapaxes(0, 1)
    chunked = winnow.dask.marching_cubes(darr, 0.1, order="volume", progress=False)
    assert_same_arrays(chunked, winnow.marching_cubes(field, 0.1))


def test_default_level_and_other_dtypes(rng):
    volume = rng.integers(-50, 50, (12, 13, 14)).astype(np.int32)  # meshed as float64
    whole = winnow.marching_cubes(volume)
    chunked = winnow.dask.marching_cubes(da.from_array(volume, chunks=5), order="volume", progress=False)
    assert_same_arrays(chunked, whole)


def test_bad_arguments():
    field = da.from_array(gyroid((6, 6, 6)), chunks=3)
    with pytest.raises(TypeError, match="darr"):
        winnow.dask.marching_cubes(np.zeros((4, 4, 4)), 0.5)
    with pytest.raises(ValueError, match="darr"):
        winnow.dask.marching_cubes(da.zeros((4, 4), chunks=2), 0.5)
    with pytest.raises(ValueError, match="order"):
        winnow.dask.marching_cubes(field, 0.1, order="random")
    with pytest.raises(ValueError, match="spacing"):
        winnow.dask.marching_cubes(field, 0.1, spacing=(1, 0, 1))
    with pytest.raises(ValueError, match="gradient_direction"):
        winnow.dask.marching_cubes(field, 0.1, gradient_direction="up")
