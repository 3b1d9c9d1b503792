#!/usr/bin/env bash
# Builds the Python package into a virtual environment under the build folder and runs its
# pytest suite (tests/python).
#   scripts/python-test.sh BUILD [--offline]
# The venv is BUILD/python-venv; CMake's build folder BUILD/python-build is kept between runs,
# so a second run rebuilds only what changed. Test and build dependencies come from PyPI (numpy,
# scipy, scikit-image, connected-components-3d, nibabel, trimesh, pytest, ruff, nanobind,
# scikit-build-core); tests that need nibabel or trimesh skip where they are missing (an
# --offline host without them), and so does the lint step (`ruff check`) without ruff.
# --offline (a GPU host without network): the venv sees the system's site packages, which must
# hold those (cupy and torch too, for the device tests), and nothing is downloaded.
# CMAKE_ARGS passes CMake settings through (e.g. CMAKE_ARGS=-DCMAKE_CUDA_ARCHITECTURES=90).
set -euo pipefail
# A module whose optional dependency is missing (winnow.dask without dask) is left out of the
# docstring examples; its tests skip.
export PYTEST_ADDOPTS="--doctest-ignore-import-errors ${PYTEST_ADDOPTS:-}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(realpath -m "${1:-build}")"
offline="${2:-}"
venv="$build/python-venv"
python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  if [ "$offline" = --offline ]; then
    "$python" -m venv --system-site-packages "$venv"
    # When python3 is itself a virtual environment (the GPU host's is), --system-site-packages
    # reaches only the base interpreter's packages: a .pth file adds the parent's.
    parent_site=$("$python" -c 'import site; print("\n".join(site.getsitepackages()))')
    child_site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    printf '%s\n' "$parent_site" > "$child_site/parent-site-packages.pth"
  else
    "$python" -m venv "$venv"
  fi
fi
if [ "$offline" != --offline ]; then
  "$venv/bin/python" -m pip install -q --disable-pip-version-check nanobind scikit-build-core numpy scipy \
    scikit-image connected-components-3d nibabel trimesh pytest ruff
fi
if [ "$offline" != --offline ]; then  # winnow.dask's: the dask extra (pyproject.toml)
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "dask[array]" distributed zarr
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps \
  --config-settings=build-dir="$build/python-build" --config-settings=build.tool-args="-j${JOBS:-$(nproc)}" "$root"
cd "$root"
# The lint rules of pyproject.toml over the package, its tests and the Python benchmarks.
if "$venv/bin/python" -m ruff --version > /dev/null 2>&1; then
  "$venv/bin/python" -m ruff check --quiet .
else
  echo "ruff is not installed: lint step skipped" >&2
fi
# The command line of the same build, for the tests that run it (they skip without it).
if [ -x "$build/apps/winnow/winnow" ]; then export WINNOW_CLI="$build/apps/winnow/winnow"; fi
# The suite, and the examples in the docstrings of the installed package.
"$venv/bin/python" -m pytest -q tests/python --doctest-modules --pyargs winnow
