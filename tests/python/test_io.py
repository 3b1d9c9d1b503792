"""winnow.io against nibabel, scikit-image and trimesh: volumes read as nibabel reads them (voxels,
spacing, img.affine) for the bundled NIfTI files and for headers of every kind (oblique sform,
mirrored qform, no codes, negative pixdims); round trips through write_volume(like=header) that
nibabel reads back with the same affine and codes, NIfTI -> NRRD -> NIfTI, .npy and TIFF stacks;
images as scikit-image reads them; meshes that trimesh reads back as written (PLY, OBJ, STL);
previews; and every refusal (OSError for files and folders that cannot be reached, ValueError
for contents and names, TypeError for arguments)."""

import numpy as np
import pytest
from skimage import io as skio

import winnow
import winnow.io
from conftest import EXAMPLES
from test_orientation import nifti_variants

VOLUMES = EXAMPLES / "volumes"


def test_read_volume_matches_nibabel(tmp_path, rng):
    nib = pytest.importorskip("nibabel")
    files = [path for path, _ in nifti_variants(tmp_path, rng)]
    files += [VOLUMES / "mni152_gm.nii.gz", VOLUMES / "motor_activation.nii.gz"]
    for path in files:
        image = nib.load(path)
        volume, header = winnow.io.read_volume(path)
        expected = np.asarray(image.dataobj)  # [x, y, z], the file's voxels (no scaling in these files)
        assert volume.shape == expected.shape[::-1] and volume.dtype == expected.dtype
        np.testing.assert_array_equal(volume, expected.T)
        assert header.source == "nifti"
        np.testing.assert_allclose(header.xyz_affine, image.affine, rtol=1e-6, atol=1e-5)
        # The array-order affine: index (z, y, x) of our array is index (x, y, z) of nibabel's.
        z, y, x = 3, 2, 1
        np.testing.assert_allclose(header.affine @ [z, y, x, 1], image.affine @ [x, y, z, 1], rtol=1e-6, atol=1e-4)
        np.testing.assert_allclose(header.spacing, np.abs(image.header.get_zooms()[:3])[::-1], rtol=1e-6)


def test_write_volume_like_a_header_round_trips_in_nibabel(tmp_path, rng):
    nib = pytest.importorskip("nibabel")
    for path, _ in nifti_variants(tmp_path, rng)[:2]:
        volume, header = winnow.io.read_volume(path)
        labels = winnow.label(volume > np.percentile(volume, 70), 26)
        for name in ("labels.nii.gz", "labels.nii"):
            out = tmp_path / name
            winnow.io.write_volume(out, labels, like=header)
            original, written = nib.load(path), nib.load(out)
            np.testing.assert_allclose(written.affine, original.affine, rtol=1e-6, atol=1e-5)
            assert int(written.header["qform_code"]) == int(original.header["qform_code"])
            assert int(written.header["sform_code"]) == int(original.header["sform_code"])
            np.testing.assert_array_equal(np.asarray(written.dataobj), labels.T)
            again, again_header = winnow.io.read_volume(out)
            np.testing.assert_array_equal(again, labels)
            np.testing.assert_allclose(again_header.affine, header.affine, rtol=1e-6, atol=1e-5)
        # Through NRRD (the NIfTI's world frame in its space fields) and back.
        winnow.io.write_volume(tmp_path / "labels.nrrd", labels, like=header)
        nrrd, nrrd_header = winnow.io.read_volume(tmp_path / "labels.nrrd")
        assert nrrd_header.source == "nrrd"
        np.testing.assert_array_equal(nrrd, labels)
        np.testing.assert_allclose(nrrd_header.xyz_affine, nib.load(path).affine, rtol=1e-6, atol=1e-4)
        winnow.io.write_volume(tmp_path / "back.nii.gz", nrrd, like=nrrd_header)
        np.testing.assert_allclose(nib.load(tmp_path / "back.nii.gz").affine, nib.load(path).affine, rtol=1e-6,
                                   atol=1e-4)


def test_write_volume_of_arrays(tmp_path, rng):
    nib = pytest.importorskip("nibabel")
    for dtype in ("bool", "uint8", "int8", "uint16", "int16", "int32", "uint32", "float16", "float32", "float64"):
        a = (rng.random((4, 5, 6)) * 100).astype(dtype)
        winnow.io.write_volume(tmp_path / "a.nii.gz", a, spacing=(3.0, 2.0, 0.5))
        image = nib.load(tmp_path / "a.nii.gz")
        expected = a.astype(np.uint8) if dtype == "bool" else a.astype(np.float32) if dtype == "float16" else a
        np.testing.assert_array_equal(np.asarray(image.dataobj), expected.T)
        np.testing.assert_allclose(image.header.get_zooms()[:3], (0.5, 2.0, 3.0))
        volume, header = winnow.io.read_volume(tmp_path / "a.nii.gz")
        assert header.spacing == (3.0, 2.0, 0.5)
        np.testing.assert_array_equal(volume, expected)
    # A strided view, .npy (C order, [z, y, x]) and a TIFF stack, a 2D image as one slice.
    a = rng.integers(0, 1000, (6, 7, 8)).astype(np.uint16)[::2, :, ::-1]
    winnow.io.write_volume(tmp_path / "a.npy", a)
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), a)
    winnow.io.write_volume(tmp_path / "a.tif", a)
    tifffile = pytest.importorskip("tifffile")
    np.testing.assert_array_equal(tifffile.imread(tmp_path / "a.tif"), a)
    assert winnow.io.read_volume(tmp_path / "a.tif")[1].source == "none"
    winnow.io.write_volume(tmp_path / "slice.npy", a[0])
    np.testing.assert_array_equal(np.load(tmp_path / "slice.npy"), a[0])  # 2D stays 2D
    np.testing.assert_array_equal(winnow.io.read_volume(tmp_path / "slice.npy")[0], a[:1])
    # A Fortran-order .npy (np.save of a nibabel array, [x, y, z]) reads as [z, y, x]; written
    # back like it, the .npy is that array as given.
    xyz = np.asfortranarray(rng.integers(-1000, 1000, (5, 4, 3)).astype(np.int16))
    np.save(tmp_path / "xyz.npy", xyz)
    volume, header = winnow.io.read_volume(tmp_path / "xyz.npy")
    np.testing.assert_array_equal(volume, xyz.T)
    winnow.io.write_volume(tmp_path / "zyx.npy", volume, like=header)
    np.testing.assert_array_equal(np.load(tmp_path / "zyx.npy"), volume)
    # np.save of a boolean mask reads as uint8 0 / 1.
    mask = rng.random((4, 5, 6)) < 0.5
    np.save(tmp_path / "mask.npy", mask)
    volume, _ = winnow.io.read_volume(tmp_path / "mask.npy")
    assert volume.dtype == np.uint8
    np.testing.assert_array_equal(volume, mask)


@pytest.mark.parametrize("name", ["coins.png", "astronaut.png", "chelsea.png", "hubble_deep_field.jpg"])
def test_read_image_matches_scikit_image(name):
    expected = skio.imread(EXAMPLES / name)
    image = winnow.io.read_image(EXAMPLES / name)
    assert image.dtype == np.uint8 and image.shape == expected.shape
    if name.endswith(".png"):
        np.testing.assert_array_equal(image, expected)
    else:  # JPEG decoders may differ by a level
        assert np.abs(image.astype(int) - expected.astype(int)).max() <= 2


def ball_mesh():
    z, y, x = np.mgrid[-8:9, -8:9, -8:9]
    return winnow.marching_cubes((x * x + y * y + z * z).astype(np.float32), 25.0)


@pytest.mark.parametrize("suffix", [".ply", ".obj", ".stl"])
def test_trimesh_reads_what_write_mesh_wrote(tmp_path, suffix):
    trimesh = pytest.importorskip("trimesh")
    verts, faces, normals, values = ball_mesh()
    path = tmp_path / ("ball" + suffix)
    winnow.io.write_mesh(path, verts, faces, normals, values)
    mesh = trimesh.load(path, process=False)
    if suffix == ".stl":  # no shared vertices: three corners per triangle, welded by trimesh's processing
        np.testing.assert_allclose(mesh.vertices[mesh.faces].reshape(-1, 3), verts[faces].reshape(-1, 3), rtol=1e-6)
        mesh = trimesh.load(path)
    else:
        np.testing.assert_allclose(mesh.vertices, verts, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(mesh.faces, faces)
    assert mesh.is_watertight
    np.testing.assert_allclose(mesh.volume, 4 / 3 * np.pi * 125, rtol=0.05)
    assert mesh.volume > 0  # faces out
    if suffix == ".ply":
        np.testing.assert_allclose(mesh.vertex_normals, normals, atol=1e-6)


def test_render_preview(tmp_path):
    verts, faces, normals, _ = ball_mesh()
    picture = winnow.io.render_preview(verts, faces, normals, size=(80, 120))
    assert picture.shape == (80, 120, 4) and picture.dtype == np.uint8
    assert (picture[0, 0] == 255).all()  # the background in a corner
    ball = (picture[..., :3] != 255).any(axis=2)
    assert 0.2 < ball.mean() < 0.9  # the mesh fills the picture, less a margin
    rows, cols = np.flatnonzero(ball.any(axis=1)), np.flatnonzero(ball.any(axis=0))
    assert abs((rows[0] + rows[-1]) / 2 - 39.5) < 3 and abs((cols[0] + cols[-1]) / 2 - 59.5) < 3  # centred
    empty = winnow.io.render_preview(np.zeros((0, 3), np.float32), np.zeros((0, 3), np.uint32), size=(4, 5))
    assert (empty == 255).all()


def test_refusals(tmp_path):
    verts, faces, _, _ = ball_mesh()
    (tmp_path / "junk.nii").write_bytes(b"not a volume at all" * 30)
    cases = [
        (FileNotFoundError, "missing", lambda: winnow.io.read_volume(tmp_path / "missing.nii.gz")),
        (IsADirectoryError, tmp_path.name, lambda: winnow.io.read_volume(tmp_path)),
        (ValueError, "junk.nii", lambda: winnow.io.read_volume(tmp_path / "junk.nii")),
        (FileNotFoundError, "missing", lambda: winnow.io.read_image(tmp_path / "missing.png")),
        (ValueError, "junk.nii", lambda: winnow.io.read_image(tmp_path / "junk.nii")),
        (FileNotFoundError, "no-folder", lambda: winnow.io.write_volume(tmp_path / "no-folder" / "a.nii",
                                                                         np.zeros((2, 2, 2), np.uint8))),
        (ValueError, "a.xyz", lambda: winnow.io.write_volume(tmp_path / "a.xyz", np.zeros((2, 2, 2), np.uint8))),
        (ValueError, "array", lambda: winnow.io.write_volume(tmp_path / "a.nii", np.zeros(4, np.uint8))),
        (TypeError, "array", lambda: winnow.io.write_volume(tmp_path / "a.nii", np.zeros((2, 2), complex))),
        (TypeError, "like", lambda: winnow.io.write_volume(tmp_path / "a.nii", np.zeros((2, 2)), like={})),
        (ValueError, "spacing", lambda: winnow.io.write_volume(tmp_path / "a.nii", np.zeros((2, 2)),
                                                                spacing=(1, 0, 1))),
        (FileNotFoundError, "no-folder", lambda: winnow.io.write_mesh(tmp_path / "no-folder" / "m.ply", verts, faces)),
        (ValueError, "m.vtk", lambda: winnow.io.write_mesh(tmp_path / "m.vtk", verts, faces)),
        (ValueError, "verts", lambda: winnow.io.write_mesh(tmp_path / "m.ply", verts[:, :2], faces)),
        (ValueError, "faces", lambda: winnow.io.write_mesh(tmp_path / "m.ply", verts, faces + len(verts))),
        (TypeError, "faces", lambda: winnow.io.write_mesh(tmp_path / "m.ply", verts, faces.astype(np.float32))),
        (ValueError, "normals", lambda: winnow.io.write_mesh(tmp_path / "m.ply", verts, faces, verts[:3])),
        (ValueError, "values", lambda: winnow.io.write_mesh(tmp_path / "m.ply", verts, faces, None, verts[:3, 0])),
        (ValueError, "size", lambda: winnow.io.render_preview(verts, faces, size=(0, 10))),
        (ValueError, "view_from", lambda: winnow.io.render_preview(verts, faces, view_from=(0, 0, 0))),
    ]
    for error, name, call in cases:
        with pytest.raises(error, match=name):
            call()
    assert not list(tmp_path.glob("m.*")) and not (tmp_path / "a.xyz").exists()  # nothing half-written
