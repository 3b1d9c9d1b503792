// Spatial headers: the index-to-world affine of a NIfTI-1 or NRRD header (SpatialHeader::affine),
// and what a file written from one format's header carries in the other's fields
// (nifti_fields_for, nrrd_fields_for).
//
// NIfTI's affine follows nibabel (nifti1.py, get_best_affine after the fixes its loader applies,
// Nifti1Header.check_fix), since nibabel's `img.affine` is what the neuroimaging tools built on
// Python take as the truth: codes outside 0..5 read as 0; the sform when its code is not 0; else
// the qform: the rotation of the unit quaternion (w from b, c, d, in extended precision, 0 when
// 1 - b^2 - c^2 - d^2 is within 3 float epsilons of 0) times diag(|pixdim[1]|, |pixdim[2]|,
// qfac |pixdim[3]|), qfac = pixdim[0] when it is -1 or 1, else 1, a zero pixdim read as 1, plus
// the qoffsets; else the Analyze default: diag(-|pixdim[1]|, |pixdim[2]|, |pixdim[3]|) with the
// volume's centre voxel ((dim - 1) / 2) at the origin. (nibabel refuses a quaternion whose
// b^2 + c^2 + d^2 exceeds 1; here w is then 0 and the rotation normalised.)
//
// NRRD's affine is origin + index times the space directions, in the file's space, then turned to
// RAS+ by the signs of its axes (LPS: x and y negated; LAS: x). Spaces without an anatomical
// meaning (scanner-xyz, 3D-right-handed, 3D-left-handed, or only a space dimension) are taken as
// they are. Without directions the spacings scale the axes and the origin is 0.
//
// NRRD -> NIfTI (a file written from an NRRD input): the sform is the RAS+ affine (code 1,
// scanner-based anatomical, for the anatomical and scanner spaces; 2, aligned, for the others);
// pixdim[1..3] are the lengths of the directions; the qform holds the same transform when the
// directions are orthogonal (to 1e-6): the rotation's quaternion as nifti1_io's
// nifti_mat44_to_quatern computes it, qfac -1 for a left-handed frame; otherwise the qform code is
// 0. xyzt_units says mm, microns or metres when every space unit says so.
// NIfTI -> NRRD: the right-anterior-superior space with the NIfTI affine's columns as directions
// and its translation as origin, when a qform or sform code is set; otherwise spacings only.
#include <algorithm>
#include <array>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <string>

#include "io/volume_detail.hpp"

namespace winnow::io {
namespace {

using Matrix = std::array<double, 16>;  // row-major 4 x 4

Matrix identity() { return {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}; }

bool known_xform_code(int code) { return code >= 1 && code <= 5; }

Matrix nifti_affine(const SpatialHeader::Nifti& h) {
  Matrix a = identity();
  if (known_xform_code(h.sform_code)) {
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 4; ++c) a[4 * r + c] = static_cast<double>(h.srow[r][c]);
    return a;
  }
  // pixdim[1..3] as nibabel's loader fixes them: zero -> 1, negative -> its magnitude (float).
  std::array<float, 3> zooms{};
  for (int i = 0; i < 3; ++i) zooms[i] = h.pixdim[i + 1] == 0.0f ? 1.0f : std::fabs(h.pixdim[i + 1]);
  if (known_xform_code(h.qform_code)) {
    const long double b = h.quatern_b, c = h.quatern_c, d = h.quatern_d;
    const long double w2 = 1.0L - (b * b + c * c + d * d);
    const long double threshold = static_cast<long double>(FLT_EPSILON) * 3;
    const long double w = (std::fabs(w2) < threshold || w2 < 0) ? 0.0L : std::sqrt(w2);
    long double rotation[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    const long double nq = w * w + b * b + c * c + d * d;
    if (nq >= static_cast<long double>(DBL_EPSILON)) {  // quat2mat
      const long double s = 2.0L / nq;
      const long double X = b * s, Y = c * s, Z = d * s;
      const long double wX = w * X, wY = w * Y, wZ = w * Z, xX = b * X, xY = b * Y, xZ = b * Z;
      const long double yY = c * Y, yZ = c * Z, zZ = d * Z;
      const long double r[9] = {1.0L - (yY + zZ), xY - wZ, xZ + wY, xY + wZ,         1.0L - (xX + zZ),
                                yZ - wX,          xZ - wY, yZ + wX, 1.0L - (xX + yY)};
      std::copy(r, r + 9, rotation);
    }
    const float qfac = h.pixdim[0] == -1.0f || h.pixdim[0] == 1.0f ? h.pixdim[0] : 1.0f;
    std::array<float, 3> vox = zooms;
    vox[2] *= qfac;
    for (int r = 0; r < 3; ++r)
      for (int c2 = 0; c2 < 3; ++c2) a[4 * r + c2] = static_cast<double>(rotation[3 * r + c2] * vox[c2]);
    a[3] = h.qoffset_x, a[7] = h.qoffset_y, a[11] = h.qoffset_z;
    return a;
  }
  // The Analyze default (shape_zoom_affine with x flipped): the axes beyond dim[0] have size and
  // zoom 1.
  const int ndim = std::clamp<int>(h.dim[0], 1, 3);
  for (int i = 0; i < 3; ++i) {
    const double shape = i < ndim ? static_cast<double>(h.dim[i + 1]) : 1.0;
    double zoom = i < ndim ? static_cast<double>(zooms[i]) : 1.0;
    if (i == 0) zoom = -zoom;
    a[4 * i + i] = zoom;
    a[4 * i + 3] = -((shape - 1) / 2.0) * zoom;
  }
  return a;
}

std::string canonical_space(const std::string& space) {
  std::string s;
  for (char ch : space)
    if (ch != ' ' && ch != '\t') s += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// The signs that turn the space's axes into RAS+ ones.
std::array<double, 3> ras_signs(const std::string& space) {
  const std::string s = canonical_space(space);
  if (s == "left-posterior-superior" || s == "lps" || s == "left-posterior-superior-time" || s == "lpst")
    return {-1, -1, 1};
  if (s == "left-anterior-superior" || s == "las" || s == "left-anterior-superior-time" || s == "last")
    return {-1, 1, 1};
  return {1, 1, 1};
}

bool anatomical_or_scanner(const std::string& space) {
  const std::string s = canonical_space(space);
  for (const char* name : {"right-anterior-superior", "ras", "left-anterior-superior", "las", "left-posterior-superior",
                           "lps", "right-anterior-superior-time", "rast", "left-anterior-superior-time", "last",
                           "left-posterior-superior-time", "lpst", "scanner-xyz", "scanner-xyz-time"})
    if (s == name) return true;
  return false;
}

Matrix nrrd_affine(const SpatialHeader::Nrrd& h) {
  Matrix a = identity();
  const std::array<double, 3> sign = ras_signs(h.space);
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c)
      a[4 * r + c] = h.has_directions ? sign[r] * h.directions[c][r] : (r == c ? h.spacings[c] : 0.0);
    a[4 * r + 3] = h.has_origin ? sign[r] * h.origin[r] : 0.0;
  }
  return a;
}

// nifti1_io's nifti_mat44_to_quatern for an orthonormal, right-handed `r` (row-major 3 x 3): the
// quaternion (a, b, c, d) with a >= 0; returns b, c, d.
std::array<double, 3> quaternion_of(const double r[9]) {
  const double r11 = r[0], r12 = r[1], r13 = r[2], r21 = r[3], r22 = r[4], r23 = r[5], r31 = r[6], r32 = r[7],
               r33 = r[8];
  double a = r11 + r22 + r33 + 1.0, b, c, d;
  if (a > 0.5) {
    a = 0.5 * std::sqrt(a);
    b = 0.25 * (r32 - r23) / a;
    c = 0.25 * (r13 - r31) / a;
    d = 0.25 * (r21 - r12) / a;
  } else {
    const double xd = 1.0 + r11 - (r22 + r33), yd = 1.0 + r22 - (r11 + r33), zd = 1.0 + r33 - (r11 + r22);
    if (xd > 1.0) {
      b = 0.5 * std::sqrt(xd);
      c = 0.25 * (r12 + r21) / b;
      d = 0.25 * (r13 + r31) / b;
      a = 0.25 * (r32 - r23) / b;
    } else if (yd > 1.0) {
      c = 0.5 * std::sqrt(yd);
      b = 0.25 * (r12 + r21) / c;
      d = 0.25 * (r23 + r32) / c;
      a = 0.25 * (r13 - r31) / c;
    } else {
      d = 0.5 * std::sqrt(zd);
      b = 0.25 * (r13 + r31) / d;
      c = 0.25 * (r23 + r32) / d;
      a = 0.25 * (r21 - r12) / d;
    }
    if (a < 0.0) b = -b, c = -c, d = -d;
  }
  return {b, c, d};
}

// NIFTI_UNITS_METER 1, _MM 2, _MICRON 3 when every unit of an NRRD "space units" value names the
// same one of them; 0 (unknown) otherwise.
std::uint8_t nifti_units_of(const std::string& units) {
  std::string words;
  for (char ch : units) words += ch == '"' ? ' ' : ch;
  std::uint8_t code = 0;
  std::size_t count = 0, at = 0;
  while ((at = words.find_first_not_of(" \t", at)) != std::string::npos) {
    const std::size_t end = std::min(words.find_first_of(" \t", at), words.size());
    const std::string unit = words.substr(at, end - at);
    const bool micron = unit == "um" || unit == "micron" || unit == "microns";
    const std::uint8_t c = unit == "mm" ? 2 : unit == "m" ? 1 : micron ? 3 : 0;
    if (c == 0 || (count > 0 && c != code)) return 0;
    code = c;
    ++count;
    at = end;
  }
  return count == 3 ? code : 0;
}

std::string nrrd_units_of(std::uint8_t xyzt_units) {
  switch (xyzt_units & 7) {
    case 1: return "\"m\" \"m\" \"m\"";
    case 2: return "\"mm\" \"mm\" \"mm\"";
    case 3: return "\"microns\" \"microns\" \"microns\"";
    default: return "";
  }
}

}  // namespace

std::array<double, 16> SpatialHeader::affine() const {
  switch (source) {
    case Source::nifti: return nifti_affine(nifti);
    case Source::nrrd: return nrrd_affine(nrrd);
    case Source::none: break;
  }
  return identity();
}

namespace detail {

SpatialHeader::Nifti nifti_fields_for(const SpatialHeader& like, const ErasedView& v) {
  SpatialHeader::Nifti n;
  if (like.source == SpatialHeader::Source::nifti) {
    n = like.nifti;
  } else if (like.source == SpatialHeader::Source::nrrd && like.nrrd.has_directions) {
    const Matrix a = nrrd_affine(like.nrrd);
    n.sform_code = anatomical_or_scanner(like.nrrd.space) ? 1 : 2;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 4; ++c) n.srow[r][c] = static_cast<float>(a[4 * r + c]);
    double rotation[9];
    double length[3];
    for (int c = 0; c < 3; ++c) {
      length[c] = std::sqrt(a[c] * a[c] + a[4 + c] * a[4 + c] + a[8 + c] * a[8 + c]);
      for (int r = 0; r < 3; ++r) rotation[3 * r + c] = length[c] > 0 ? a[4 * r + c] / length[c] : 0.0;
      n.pixdim[c + 1] = static_cast<float>(length[c]);
    }
    const double det = rotation[0] * (rotation[4] * rotation[8] - rotation[5] * rotation[7]) -
                       rotation[1] * (rotation[3] * rotation[8] - rotation[5] * rotation[6]) +
                       rotation[2] * (rotation[3] * rotation[7] - rotation[4] * rotation[6]);
    n.pixdim[0] = det < 0 ? -1.0f : 1.0f;
    if (det < 0)  // qfac -1 flips the third axis: the quaternion describes the right-handed rest
      for (int r = 0; r < 3; ++r) rotation[3 * r + 2] = -rotation[3 * r + 2];
    bool orthonormal = length[0] > 0 && length[1] > 0 && length[2] > 0;
    for (int i = 0; i < 3 && orthonormal; ++i)
      for (int j = 0; j < 3; ++j) {
        double dot = 0;
        for (int r = 0; r < 3; ++r) dot += rotation[3 * r + i] * rotation[3 * r + j];
        if (std::fabs(dot - (i == j ? 1.0 : 0.0)) > 1e-6) orthonormal = false;
      }
    if (orthonormal) {
      const auto [b, c, d] = quaternion_of(rotation);
      n.qform_code = n.sform_code;
      n.quatern_b = static_cast<float>(b), n.quatern_c = static_cast<float>(c), n.quatern_d = static_cast<float>(d);
      n.qoffset_x = static_cast<float>(a[3]), n.qoffset_y = static_cast<float>(a[7]);
      n.qoffset_z = static_cast<float>(a[11]);
    }
    n.xyzt_units = nifti_units_of(like.nrrd.space_units);
  } else {
    const bool nrrd = like.source == SpatialHeader::Source::nrrd;
    n.pixdim = {1.0f, static_cast<float>(nrrd ? like.nrrd.spacings[0] : v.sx),
                static_cast<float>(nrrd ? like.nrrd.spacings[1] : v.sy),
                static_cast<float>(nrrd ? like.nrrd.spacings[2] : v.sz)};
  }
  n.dim = {
      3, static_cast<std::int16_t>(v.nx), static_cast<std::int16_t>(v.ny), static_cast<std::int16_t>(v.nz), 1, 1, 1, 1};
  return n;
}

SpatialHeader::Nrrd nrrd_fields_for(const SpatialHeader& like, const ErasedView& v) {
  if (like.source == SpatialHeader::Source::nrrd) return like.nrrd;
  SpatialHeader::Nrrd n;
  n.spacings = {v.sx, v.sy, v.sz};
  if (like.source == SpatialHeader::Source::nifti &&
      (known_xform_code(like.nifti.sform_code) || known_xform_code(like.nifti.qform_code))) {
    const Matrix a = nifti_affine(like.nifti);
    n.space = "right-anterior-superior";
    n.has_directions = n.has_origin = true;
    for (int c = 0; c < 3; ++c)
      for (int r = 0; r < 3; ++r) n.directions[c][r] = a[4 * r + c];
    n.origin = {a[3], a[7], a[11]};
    n.space_units = nrrd_units_of(like.nifti.xyzt_units);
  }
  return n;
}

}  // namespace detail
}  // namespace winnow::io
