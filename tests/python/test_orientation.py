"""Orientation, volume thresholds and empty results, against nibabel, scikit-image and scipy.

- Labels written by ``winnow label`` carry their input's spatial header: the NIfTI fields bit for
  bit (the header bytes compared) and the same ``img.affine`` in nibabel, for oblique, mirrored,
  negative-pixdim and odd-qfac headers and the bundled volumes; an NRRD input in LPS gives NIfTI
  labels whose nibabel affine is its RAS affine. ``.npy`` labels of a ``.npy`` have its shape and
  order (2-D, Fortran), so that they index as the input does: scipy.ndimage.label's, numbered in
  memory order.
- World-coordinate meshes (``winnow isosurface --coordinates world`` and
  ``winnow.marching_cubes(..., affine=)``) are ``nibabel.affines.apply_affine`` of the index
  mesh; mirroring affines keep the surface facing out.
- ``winnow label VOLUME --otsu`` uses ``skimage.filters.threshold_otsu``'s threshold, and its
  labels are scipy.ndimage.label's of the voxels above it.
- Empty results warn (Python: UserWarning pointing at the caller).

The command-line tests run the CLI of the build under test (WINNOW_CLI, set by
scripts/python-test.sh) and skip without it; the nibabel tests skip where nibabel is missing.
"""

import gzip
import os
import pathlib
import re
import subprocess
import warnings

import numpy as np
import pytest
import scipy.ndimage

import winnow
from conftest import EXAMPLES

VOLUMES = EXAMPLES / "volumes"


def cli():
    path = os.environ.get("WINNOW_CLI") or str(pathlib.Path(__file__).resolve().parents[2] / "build/apps/winnow/winnow")
    if not os.access(path, os.X_OK):
        pytest.skip("the winnow command line is not built (set WINNOW_CLI)")
    return path


def run(*args):
    result = subprocess.run([cli(), *map(str, args)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result


# NIfTI-1 header bytes that hold orientation: pixdim[0..3], xyzt_units, qform_code .. srow_z.
def spatial_bytes(path):
    raw = pathlib.Path(path).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return raw[76:92] + raw[123:124] + raw[252:328]


def read_ply(path):
    """Vertices (and normals, faces) of a binary little-endian PLY as winnow writes it."""
    raw = pathlib.Path(path).read_bytes()
    end = raw.index(b"end_header\n") + len(b"end_header\n")
    header = raw[:end].decode()
    n_vertices = int(re.search(r"element vertex (\d+)", header).group(1))
    n_faces = int(re.search(r"element face (\d+)", header).group(1))
    properties = re.findall(r"property float (\w+)", header)
    vertex = np.frombuffer(raw, dtype="<f4", count=n_vertices * len(properties), offset=end)
    vertex = vertex.reshape(n_vertices, len(properties))
    face_dtype = np.dtype([("n", "u1"), ("i", "<u4", 3)])
    faces = np.frombuffer(raw, dtype=face_dtype, count=n_faces, offset=end + vertex.nbytes)["i"]
    normals = vertex[:, 3:6] if "nx" in properties else None
    return vertex[:, :3].astype(np.float64), faces.astype(np.int64), normals


def signed_volume(verts, faces):
    a, b, c = verts[faces[:, 0]], verts[faces[:, 1]], verts[faces[:, 2]]
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6)


def oblique_affine(rng, mirror):
    """A rotation times unequal voxel sizes (a shear when asked), mirrored or not, and a shift."""
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    if (np.linalg.det(q) < 0) != mirror:
        q[:, 0] = -q[:, 0]
    affine = np.eye(4)
    affine[:3, :3] = q @ np.diag(rng.uniform(0.7, 2.5, size=3))
    affine[:3, 3] = rng.uniform(-120, 120, size=3)
    return affine


def ball(shape, centre, radius, rng, dtype=np.float32):
    """A noisy ball: values above 100 inside, in [x, y, z] order as nibabel arrays are."""
    grid = np.indices(shape, dtype=np.float64)
    distance = np.sqrt(sum((g - c) ** 2 for g, c in zip(grid, centre)))
    return (100 + 20 * (radius - distance) + rng.normal(0, 0.5, size=shape)).astype(dtype)


def nifti_variants(tmp_path, rng):
    """NIfTI files (path, array in [x, y, z]) with headers of every kind the affine rules tell apart."""
    nib = pytest.importorskip("nibabel")
    data = ball((23, 19, 17), (11.2, 9.1, 8.3), 6.5, rng)
    files = []
    # (Images made without an affine: nibabel's save keeps the header's own qform and sform then.)
    # Oblique qform (code 1) and a mirrored sform (code 4): the sform wins.
    img = nib.Nifti1Image(data, None)
    img.header.set_qform(oblique_affine(rng, mirror=False), code=1)
    img.header.set_sform(oblique_affine(rng, mirror=True), code=4)
    files.append(("sform.nii.gz", img))
    # A mirrored qform alone (qfac -1 in pixdim[0]).
    img = nib.Nifti1Image(data, None)
    img.header.set_qform(oblique_affine(rng, mirror=True), code=1)
    img.header.set_sform(None)
    files.append(("qform.nii", img))
    # No codes: the Analyze default, with x flipped and the centre at 0.
    img = nib.Nifti1Image(data, None)
    img.header.set_qform(None)
    img.header.set_sform(None)
    img.header.set_zooms((1.5, 2.0, 2.5))
    files.append(("nocodes.nii", img))
    out = []
    for name, image in files:
        nib.save(image, tmp_path / name)
        out.append((tmp_path / name, data))
    # Raw headers nibabel would not write: negative pixdims and qfac 0 (its loader fixes both).
    for name, patch in (("negative.nii", {80: -1.5, 88: -2.5}), ("qfac0.nii", {76: 0.0})):
        raw = bytearray((tmp_path / "qform.nii").read_bytes())
        for offset, value in patch.items():
            raw[offset:offset + 4] = np.float32(value).tobytes()
        (tmp_path / name).write_bytes(bytes(raw))
        out.append((tmp_path / name, data))
    return out


def test_label_outputs_keep_the_nifti_header(tmp_path, rng):
    nib = pytest.importorskip("nibabel")
    inputs = nifti_variants(tmp_path, rng) + [(VOLUMES / "mni152_gm.nii.gz", None),
                                               (VOLUMES / "motor_activation.nii.gz", None)]
    for path, _ in inputs:
        image = nib.load(path)
        data = np.asarray(image.dataobj)
        threshold = float(np.percentile(data, 80))
        for suffix in (".nii.gz", ".nii"):
            out = tmp_path / ("labels-" + path.name.split(".")[0] + suffix)
            run("label", path, "--threshold", repr(threshold), "--out-labels", out, "--backend", "cpu", "--quiet")
            assert spatial_bytes(out) == spatial_bytes(path), path.name
            labels = nib.load(out)
            np.testing.assert_array_equal(labels.affine, image.affine, err_msg=path.name)
            assert labels.header["qform_code"] == image.header["qform_code"]
            assert labels.header["sform_code"] == image.header["sform_code"]
            # The labels: scipy's of the voxels above the threshold (26-connectivity), numbered in
            # raster order of the file (x fastest), so compared on the arrays transposed to [z, y, x].
            expected, count = scipy.ndimage.label(data.T > threshold, structure=np.ones((3, 3, 3)))
            np.testing.assert_array_equal(np.asarray(labels.dataobj).T, expected)


def test_npy_labels_index_as_their_input(tmp_path, rng):
    ct = rng.normal(0, 300, size=(23, 17, 29)).astype(np.int16)  # CT-like levels, negatives included
    image = rng.random((31, 19)) > 0.55
    arrays = {"ct": ct, "ct_fortran": np.asfortranarray(ct), "ct_nibabel": np.asfortranarray(ct.T),
              "image": image.astype(np.uint8), "image_fortran": np.asfortranarray(image.astype(np.uint8))}
    for name, array in arrays.items():
        np.save(tmp_path / f"{name}.npy", array)
        out = tmp_path / f"{name}-labels.npy"
        threshold = 100 if array.dtype == np.int16 else 0
        run("label", tmp_path / f"{name}.npy", "--threshold", threshold, "--connectivity", 6, "--out-labels", out,
            "--backend", "cpu", "--quiet")
        labels = np.load(out)
        assert labels.shape == array.shape, name
        fortran = array.flags.f_contiguous and not array.flags.c_contiguous
        assert labels.flags.f_contiguous == fortran, name
        # Numbered in raster order of memory (the fastest axis first): scipy's on the array as
        # memory orders it, C order for scipy.
        in_memory = array.T if fortran else array
        expected = scipy.ndimage.label(in_memory > threshold)[0]
        np.testing.assert_array_equal(labels, expected.T if fortran else expected, err_msg=name)


def test_nrrd_labels_get_the_equivalent_nifti_affine(tmp_path, rng):
    nib = pytest.importorskip("nibabel")
    data = (rng.random((7, 9, 11)) > 0.6).astype(np.uint8)  # [z, y, x]: x fastest in the file
    directions = oblique_affine(rng, mirror=False)[:3, :3]
    origin = rng.uniform(-50, 50, size=3)
    vector = lambda v: "(" + ",".join(repr(float(x)) for x in v) + ")"  # noqa: E731
    header = ("NRRD0004\ntype: uint8\ndimension: 3\nspace: left-posterior-superior\nsizes: 11 9 7\n"
              f"space directions: {vector(directions[:, 0])} {vector(directions[:, 1])} {vector(directions[:, 2])}\n"
              f"encoding: raw\nspace origin: {vector(origin)}\n\n")
    (tmp_path / "ct.nrrd").write_bytes(header.encode() + data.tobytes())
    run("label", tmp_path / "ct.nrrd", "--out-labels", tmp_path / "labels.nii.gz", "--quiet")
    # LPS to RAS: x and y negated.
    expected = np.eye(4)
    expected[:3, :3] = np.diag([-1, -1, 1]) @ directions
    expected[:3, 3] = np.diag([-1, -1, 1]) @ origin
    labels = nib.load(tmp_path / "labels.nii.gz")
    np.testing.assert_allclose(labels.affine, expected, atol=1e-4)
    np.testing.assert_allclose(labels.header.get_qform(), expected, atol=1e-4)  # orthogonal: a qform too
    assert labels.header["sform_code"] == 1
    np.testing.assert_array_equal(np.asarray(labels.dataobj).T,
                                  scipy.ndimage.label(data, structure=np.ones((3, 3, 3)))[0])


def test_world_meshes_are_the_index_mesh_through_the_affine(tmp_path, rng):
    nib = pytest.importorskip("nibabel")
    from nibabel.affines import apply_affine

    cases = [(path, 100.0) for path, _ in nifti_variants(tmp_path, rng)]
    cases += [(VOLUMES / "motor_activation.nii.gz", 3.0), (VOLUMES / "mni152_gm.nii.gz", 127.5)]
    for path, level in cases:
        image = nib.load(path)
        for name in ("index", "world"):
            run("isosurface", path, "--level", level, "--normals", "--coordinates", name, "--out",
                tmp_path / f"{name}.ply", "--backend", "cpu", "--quiet")
        index_verts, index_faces, _ = read_ply(tmp_path / "index.ply")
        world_verts, world_faces, normals = read_ply(tmp_path / "world.ply")
        assert len(index_verts) > 100
        np.testing.assert_allclose(world_verts, apply_affine(image.affine, index_verts), rtol=1e-6, atol=1e-3,
                                   err_msg=path.name)
        mirrors = np.linalg.det(image.affine[:3, :3]) < 0
        np.testing.assert_array_equal(world_faces, index_faces[:, [0, 2, 1]] if mirrors else index_faces)
        # The normals face the way the triangles wind (outward), whatever the affine.
        a, b, c = (world_verts[world_faces[:, k]] for k in range(3))
        face_normals = np.cross(b - a, c - a)
        agreement = np.einsum("ij,ij->i", face_normals, normals[world_faces[:, 0]])
        assert np.mean(agreement > 0) > 0.97, path.name


def test_marching_cubes_affine_is_apply_affine(rng):
    nib = pytest.importorskip("nibabel")
    from nibabel.affines import apply_affine

    volume = ball((21, 18, 16), (10.2, 8.7, 7.9), 5.5, rng, np.float64)
    for mirror in (False, True):
        affine = oblique_affine(rng, mirror)
        verts, faces, normals, values = winnow.marching_cubes(volume, 100.0)
        moved, moved_faces, moved_normals, moved_values = winnow.marching_cubes(volume, 100.0, affine=affine)
        np.testing.assert_allclose(moved, apply_affine(affine, verts.astype(np.float64)), rtol=1e-6, atol=1e-4)
        assert moved.dtype == np.float32 and moved_normals.dtype == np.float32
        np.testing.assert_array_equal(moved_values, values)
        np.testing.assert_array_equal(moved_faces, faces[:, [0, 2, 1]] if mirror else faces)
        # Normals: unit, perpendicular to the moved surface (tangents moved by the affine), and
        # the closed ball's surface keeps facing out: the same sign of enclosed volume.
        np.testing.assert_allclose(np.linalg.norm(moved_normals, axis=1), 1, atol=1e-5)
        tangents = np.cross(normals, [0.3, -0.5, 0.8])
        usable = np.linalg.norm(tangents, axis=1) > 0.1  # normals not along the fixed vector
        moved_tangents = tangents[usable] @ affine[:3, :3].T
        cosines = np.einsum("ij,ij->i", moved_tangents, moved_normals[usable]) / np.linalg.norm(moved_tangents, axis=1)
        assert np.max(np.abs(cosines)) < 1e-4
        before = signed_volume(verts.astype(np.float64), faces.astype(np.int64))
        after = signed_volume(moved.astype(np.float64), moved_faces.astype(np.int64))
        assert np.sign(before) == np.sign(after)
        np.testing.assert_allclose(abs(after), abs(before) * abs(np.linalg.det(affine[:3, :3])), rtol=1e-4)
    # The bundled motor map with its own (mirrored) affine, as a user would call it.
    image = nib.load(VOLUMES / "motor_activation.nii.gz")
    data = image.get_fdata(dtype=np.float32)
    verts, *_ = winnow.marching_cubes(data, 3.0)
    world, *_ = winnow.marching_cubes(data, 3.0, affine=image.affine)
    np.testing.assert_allclose(world, apply_affine(image.affine, verts.astype(np.float64)), rtol=1e-6, atol=1e-4)


def test_marching_cubes_affine_arguments_are_checked():
    volume = np.zeros((4, 4, 4), np.float32)
    volume[1:3, 1:3, 1:3] = 1
    with pytest.raises(ValueError, match="affine"):
        winnow.marching_cubes(volume, 0.5, spacing=(2, 1, 1), affine=np.eye(4))
    with pytest.raises(ValueError, match="affine: expected a 4x4"):
        winnow.marching_cubes(volume, 0.5, affine=np.eye(3))
    with pytest.raises(ValueError, match="affine: its 3x3 part is singular"):
        winnow.marching_cubes(volume, 0.5, affine=np.diag([1.0, 0.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="affine: expected a last row"):
        winnow.marching_cubes(volume, 0.5, affine=np.ones((4, 4)))
    with pytest.raises(ValueError, match="affine: expected finite"):
        winnow.marching_cubes(volume, 0.5, affine=np.full((4, 4), np.nan))


@pytest.mark.parametrize("dtype", ["uint8", "int16", "uint16", "int32", "float32", "float64"])
def test_label_otsu_is_scikit_images(tmp_path, rng, dtype):
    skimage_filters = pytest.importorskip("skimage.filters")
    shape = (17, 21, 25)  # [z, y, x]
    modes = np.where(rng.random(shape) < 0.3, rng.normal(700, 120, shape), rng.normal(250, 90, shape))
    if dtype == "uint8":
        modes = modes * 0.3
    data = (modes if np.dtype(dtype).kind == "f" else np.clip(np.round(modes), 0, None)).astype(dtype)
    np.save(tmp_path / "v.npy", data)
    summary = run("label", tmp_path / "v.npy", "--otsu", "--connectivity", "6", "--out-labels",
                  tmp_path / "l.npy", "--backend", "cpu").stdout
    threshold = float(re.search(r"threshold (\S+) otsu", summary).group(1))
    expected = skimage_filters.threshold_otsu(data)
    assert threshold == float(expected), (threshold, expected)
    # The labels: scipy's of the voxels above it, 6-connectivity (its default structure).
    labels, count = scipy.ndimage.label(data > expected)
    np.testing.assert_array_equal(np.load(tmp_path / "l.npy"), labels)
    assert f" {count} components" in summary


def small_blob():
    volume = np.zeros((6, 5, 4), np.uint8)
    volume[2:4, 2:4, 1:3] = 9
    return volume


def test_empty_results_warn():
    volume = small_blob()
    with pytest.warns(UserWarning, match=r"empty mesh: no voxel is above level 300 \(values 0..9\)") as caught:
        verts, faces, normals, values = winnow.marching_cubes(volume, 300)
    assert verts.shape == (0, 3) and faces.shape == (0, 3)
    assert caught[0].filename == __file__  # the warning points at the caller
    with pytest.warns(UserWarning, match="no voxel kept") as caught:
        coordinates, kept = winnow.voxels(volume, 9)
    assert coordinates.shape == (0, 3) and caught[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a mesh that is there says nothing
        winnow.marching_cubes(volume, 4.5)
        winnow.voxels(volume, 4.5)


def test_an_empty_mesh_is_written_with_a_warning(tmp_path):
    # Written, exit 0, one warning line whatever --quiet says.
    np.save(tmp_path / "v.npy", small_blob())
    result = run("isosurface", tmp_path / "v.npy", "--level", "300", "--out", tmp_path / "m.ply", "--quiet")
    assert result.stdout == ""
    assert result.stderr.startswith("winnow: warning: empty mesh: no voxel of ") and result.stderr.count("\n") == 1
    assert read_ply(tmp_path / "m.ply")[0].shape == (0, 3)
