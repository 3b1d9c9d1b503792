# Source this on the GPU machine: unpacks the carried .debs (scripts/fetch-device-deps.sh) into
# .deps/root and points CMake and the loader at it.
_winnow_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -d "$_winnow_root/.deps/debs" ] && [ ! -d "$_winnow_root/.deps/root" ]; then
  for f in "$_winnow_root"/.deps/debs/*.deb; do dpkg -x "$f" "$_winnow_root/.deps/root"; done
fi
if [ -d "$_winnow_root/.deps/root" ]; then
  export CMAKE_PREFIX_PATH="$_winnow_root/.deps/root/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export LD_LIBRARY_PATH="$_winnow_root/.deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
unset _winnow_root
