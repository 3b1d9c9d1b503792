#pragma once
// Seam dissimilarities shared by the CPU and CUDA backends (host + device code, no CUDA header).
//
// Every tile side is summarised by a "strip": the two outermost lines of pixels of that side,
// line 0 the outermost, line 1 the next one inward, each K pixels x 3 channels (float, 0..255).
// Left/right strips run top to bottom, top/bottom strips left to right, so pixel k of tile i's
// right strip touches pixel k of tile j's left strip when i is left of j.
//   strip(t, side) = strips + ((t * 4 + side) * 2) * K * 3,  line 1 at + K * 3.
// A measure takes the strip A of the first tile (facing the seam) and B of the second.
//
// - ssd: sum over k of (grey(A0_k) - grey(B0_k))^2, grey = 0.299 R + 0.587 G + 0.114 B (the
//   GPGPU demo's grey-level sum of squared differences; no downscaling, full precision).
// - prediction (Pomeranz, Shemesh, Ben-Shahar, CVPR 2011): each side predicts the first line of
//   the other by linear extrapolation, 2 A0 - A1, error L_p norm with p = 3/10, raised to q = 1/16:
//   ( sum_{k,c} |2A0 - A1 - B0|^p + |2B0 - B1 - A0|^p )^(q/p). The power uses a fast exp2/log2
//   (relative error ~1e-5, the same code on both backends): std::pow would dominate the run time.
// - mgc (Gallagher, CVPR 2012): the gradients A0_k - A1_k (RGB) near A's edge define a Gaussian
//   (mean mu_A, covariance S_A, regularised by Gallagher's nine dummy gradients); the gradients
//   across the seam B0_k - A0_k are scored by their Mahalanobis distance,
//   D(A->B) = sum_k (B0_k - A0_k - mu_A)^T S_A^-1 (B0_k - A0_k - mu_A); MGC = D(A->B) + D(B->A).
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define WINNOW_PUZZLE_HD __host__ __device__
#else
#define WINNOW_PUZZLE_HD
#endif

namespace winnow::detail::puzzle {

enum Side : int { kLeft = 0, kRight = 1, kTop = 2, kBottom = 3 };
inline constexpr int kStatsFloats = 12;  // MGC: mean (3) + inverse covariance (9)

WINNOW_PUZZLE_HD inline float grey(const float* p) { return 0.299f * p[0] + 0.587f * p[1] + 0.114f * p[2]; }

WINNOW_PUZZLE_HD inline float measure_ssd(const float* A, const float* B, int K) {
  float s = 0.f;
  for (int k = 0; k < K; ++k) {
    const float d = grey(A + 3 * k) - grey(B + 3 * k);
    s += d * d;
  }
  return s;
}

WINNOW_PUZZLE_HD inline float bits_to_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
WINNOW_PUZZLE_HD inline std::uint32_t float_to_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
/// log2(x) for finite x > 0 (normal floats), |error| < 2e-5.
WINNOW_PUZZLE_HD inline float fast_log2(float x) {
  const std::uint32_t b = float_to_bits(x);
  const float e = static_cast<float>(static_cast<int>((b >> 23) & 255u) - 127);
  float m = bits_to_float((b & 0x007FFFFFu) | 0x3F800000u);  // [1, 2)
  // log2(m) on [1,2) with t = (m-1)/(m+1): 2/ln2 * (t + t^3/3 + t^5/5 + t^7/7)
  const float t = (m - 1.f) / (m + 1.f), t2 = t * t;
  const float p = t * (2.885390082f + t2 * (0.961796694f + t2 * (0.577078016f + t2 * 0.412198585f)));
  return e + p;
}
/// 2^y for y in about [-126, 127], relative error < 1e-5.
WINNOW_PUZZLE_HD inline float fast_exp2(float y) {
  if (y < -126.f) return 0.f;
  const float fl = floorf(y);
  const float f = y - fl;  // [0, 1)
  // 2^f, minimax-like polynomial of degree 5
  const float p =
      1.f + f * (0.693147182f + f * (0.240226507f + f * (0.0555041087f + f * (0.00961812911f + f * 0.00133335581f))));
  const std::uint32_t e = static_cast<std::uint32_t>(static_cast<int>(fl) + 127) << 23;
  return bits_to_float(e) * p;
}
WINNOW_PUZZLE_HD inline float fast_pow(float x, float p) { return x < 1e-30f ? 0.f : fast_exp2(p * fast_log2(x)); }

inline constexpr float kPredP = 0.3f, kPredQ = 1.f / 16.f;

WINNOW_PUZZLE_HD inline float measure_prediction(const float* A, const float* B, int K) {
  const float* A1 = A + 3 * K;
  const float* B1 = B + 3 * K;
  float s = 0.f;
  for (int i = 0; i < 3 * K; ++i) {
    const float e1 = fabsf(2.f * A[i] - A1[i] - B[i]);
    const float e2 = fabsf(2.f * B[i] - B1[i] - A[i]);
    s += fast_pow(e1, kPredP) + fast_pow(e2, kPredP);
  }
  return fast_pow(s, kPredQ / kPredP);
}

/// Mean and inverse covariance of the gradients line0 - line1 of one strip (Gallagher's dummies).
WINNOW_PUZZLE_HD inline void mgc_stats(const float* A, int K, float* out) {
  const float* A1 = A + 3 * K;
  double mu[3] = {0, 0, 0};
  for (int k = 0; k < K; ++k)
    for (int c = 0; c < 3; ++c) mu[c] += static_cast<double>(A[3 * k + c]) - A1[3 * k + c];
  for (int c = 0; c < 3; ++c) mu[c] /= K;
  double S[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
  for (int k = 0; k < K; ++k) {
    double g[3];
    for (int c = 0; c < 3; ++c) g[c] = static_cast<double>(A[3 * k + c]) - A1[3 * k + c] - mu[c];
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) S[a][b] += g[a] * g[b];
  }
  // Gallagher's nine dummy gradients (0,0,0), +-(1,1,1), +-e_c keep S invertible.
  const double dummies[9][3] = {{0, 0, 0}, {1, 1, 1},  {-1, -1, -1}, {1, 0, 0}, {0, 1, 0},
                                {0, 0, 1}, {-1, 0, 0}, {0, -1, 0},   {0, 0, -1}};
  for (int d = 0; d < 9; ++d) {
    double g[3];
    for (int c = 0; c < 3; ++c) g[c] = dummies[d][c] - mu[c];
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) S[a][b] += g[a] * g[b];
  }
  const double nrm = 1.0 / (K + 9 - 1);
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) S[a][b] *= nrm;
  // inverse of the symmetric 3x3 by cofactors
  const double c00 = S[1][1] * S[2][2] - S[1][2] * S[2][1];
  const double c01 = S[1][2] * S[2][0] - S[1][0] * S[2][2];
  const double c02 = S[1][0] * S[2][1] - S[1][1] * S[2][0];
  const double det = S[0][0] * c00 + S[0][1] * c01 + S[0][2] * c02;
  const double id = 1.0 / det;
  const double inv[9] = {
      c00 * id, (S[0][2] * S[2][1] - S[0][1] * S[2][2]) * id, (S[0][1] * S[1][2] - S[0][2] * S[1][1]) * id,
      c01 * id, (S[0][0] * S[2][2] - S[0][2] * S[2][0]) * id, (S[0][2] * S[1][0] - S[0][0] * S[1][2]) * id,
      c02 * id, (S[0][1] * S[2][0] - S[0][0] * S[2][1]) * id, (S[0][0] * S[1][1] - S[0][1] * S[1][0]) * id};
  for (int c = 0; c < 3; ++c) out[c] = static_cast<float>(mu[c]);
  for (int i = 0; i < 9; ++i) out[3 + i] = static_cast<float>(inv[i]);
}

WINNOW_PUZZLE_HD inline float mgc_one_way(const float* A, const float* B, const float* statsA, int K) {
  const float* mu = statsA;
  const float* Si = statsA + 3;
  float s = 0.f;
  for (int k = 0; k < K; ++k) {
    const float d0 = B[3 * k + 0] - A[3 * k + 0] - mu[0];
    const float d1 = B[3 * k + 1] - A[3 * k + 1] - mu[1];
    const float d2 = B[3 * k + 2] - A[3 * k + 2] - mu[2];
    s += d0 * (Si[0] * d0 + Si[1] * d1 + Si[2] * d2) + d1 * (Si[3] * d0 + Si[4] * d1 + Si[5] * d2) +
         d2 * (Si[6] * d0 + Si[7] * d1 + Si[8] * d2);
  }
  return s;
}

WINNOW_PUZZLE_HD inline float measure_mgc(const float* A, const float* B, const float* statsA, const float* statsB,
                                          int K) {
  return mgc_one_way(A, B, statsA, K) + mgc_one_way(B, A, statsB, K);
}

/// Permutation of 0..n-1 with lexicographic rank `index` (factorial number system).
WINNOW_PUZZLE_HD inline void decode_permutation(std::uint64_t index, int n, int* perm) {
  std::uint64_t fact[10] = {1, 1, 2, 6, 24, 120, 720, 5040, 40320, 362880};
  std::uint32_t used = 0;
  for (int i = 0; i < n; ++i) {
    const std::uint64_t f = fact[n - 1 - i];
    int d = static_cast<int>(index / f);
    index -= static_cast<std::uint64_t>(d) * f;
    // the d-th unused element
    int e = 0;
    for (;; ++e) {
      if (!(used & (1u << e))) {
        if (d == 0) break;
        --d;
      }
    }
    used |= 1u << e;
    perm[i] = e;
  }
}

/// The exhaustive objective: row pairs in raster order, then column pairs in raster order.
WINNOW_PUZZLE_HD inline float permutation_cost(const int* p, int rows, int cols, const float* lr, const float* tb,
                                               int n) {
  float s = 0.f;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c + 1 < cols; ++c) s += lr[p[r * cols + c] * n + p[r * cols + c + 1]];
  for (int r = 0; r + 1 < rows; ++r)
    for (int c = 0; c < cols; ++c) s += tb[p[r * cols + c] * n + p[(r + 1) * cols + c]];
  return s;
}

/// Order-preserving map of a float (no NaN) to uint32, for (cost, index) keys.
WINNOW_PUZZLE_HD inline std::uint32_t orderable(float f) {
  const std::uint32_t u = float_to_bits(f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

}  // namespace winnow::detail::puzzle
