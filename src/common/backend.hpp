#pragma once
// Backend choice helpers for the capabilities' front ends (the public part is winnow/backend.hpp).
#include "winnow/backend.hpp"

namespace winnow::detail {

/// The request after the WINNOW_BACKEND environment variable: `automatic` stays automatic only
/// when neither the caller nor the environment named a backend. Front ends that choose by the
/// size of the job apply their rule only then.
Backend requested_backend(Backend requested);

}  // namespace winnow::detail
