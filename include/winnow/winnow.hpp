#pragma once
/// @file winnow.hpp
/// Everything in one include.
#include "winnow/backend.hpp"
#include "winnow/compact.hpp"
#include "winnow/error.hpp"
#include "winnow/histopyramid.hpp"
#include "winnow/image.hpp"
#include "winnow/image_compact.hpp"
#include "winnow/io.hpp"
#include "winnow/label.hpp"
#include "winnow/label_statistics.hpp"
#include "winnow/mesh_io.hpp"
#include "winnow/progress.hpp"
#include "winnow/puzzle.hpp"
#include "winnow/volume.hpp"
#include "winnow/volume_io.hpp"
#include "winnow/voxels.hpp"
