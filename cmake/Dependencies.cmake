# Third-party libraries, all from Debian packages (see scripts/install-deps.sh).
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(hwy REQUIRED)
find_package(PNG REQUIRED)
find_package(JPEG REQUIRED)
find_package(ZLIB REQUIRED)  # gzip-compressed volumes (.nii.gz, NRRD gzip encoding)
# TIFF and FITS are on by default (make demo/test install them); a build host without them
# still builds, and reading such a file then says the support is not compiled in.
find_package(TIFF)
find_package(Threads REQUIRED)

# cfitsio: Debian ships a pkg-config file only; find it directly so a relocated prefix works.
find_path(WINNOW_CFITSIO_INCLUDE_DIR fitsio.h)
find_library(WINNOW_CFITSIO_LIBRARY NAMES libcfitsio.so cfitsio)
set(WINNOW_HAVE_FITS OFF)
if(WINNOW_CFITSIO_INCLUDE_DIR AND WINNOW_CFITSIO_LIBRARY)
  set(WINNOW_HAVE_FITS ON)
  add_library(winnow::cfitsio UNKNOWN IMPORTED)
  set_target_properties(winnow::cfitsio PROPERTIES
    IMPORTED_LOCATION "${WINNOW_CFITSIO_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${WINNOW_CFITSIO_INCLUDE_DIR}")
endif()
set(WINNOW_HAVE_TIFF ${TIFF_FOUND})
message(STATUS "winnow: TIFF ${WINNOW_HAVE_TIFF}, FITS ${WINNOW_HAVE_FITS}")

if(WINNOW_BUILD_APPS OR WINNOW_BUILD_TESTS)
  find_package(CLI11 REQUIRED)
  find_package(nlohmann_json 3 REQUIRED)
endif()
if(WINNOW_BUILD_TESTS)
  find_package(GTest REQUIRED)
  # OpenCV is a test/benchmark-only reference (labeling); optional so GPU hosts without it still build.
  # Only libopencv-core-dev and libopencv-imgproc-dev are needed (the full libopencv-dev, which
  # ships OpenCVConfig.cmake, pulls in a GUI stack); find them directly when no config exists.
  find_package(OpenCV QUIET COMPONENTS core imgproc)
  if(NOT OpenCV_FOUND)
    find_path(WINNOW_OPENCV_INCLUDE_DIR opencv2/imgproc.hpp PATH_SUFFIXES opencv4)
    find_library(WINNOW_OPENCV_CORE opencv_core)
    find_library(WINNOW_OPENCV_IMGPROC opencv_imgproc)
    if(WINNOW_OPENCV_INCLUDE_DIR AND WINNOW_OPENCV_CORE AND WINNOW_OPENCV_IMGPROC)
      set(OpenCV_FOUND TRUE)
      set(OpenCV_INCLUDE_DIRS ${WINNOW_OPENCV_INCLUDE_DIR})
      set(OpenCV_LIBS ${WINNOW_OPENCV_IMGPROC} ${WINNOW_OPENCV_CORE})
    endif()
  endif()
  message(STATUS "winnow: OpenCV reference for tests ${OpenCV_FOUND}")
endif()
if(WINNOW_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
