// CPU volume labeling for uint8_t voxels: one instantiation of label_volume_impl.hpp (the
// algorithm and its essay are there).
#include "label/cpu/label_volume_impl.hpp"

namespace winnow::detail::cpu {

template std::uint64_t label_volume<std::uint8_t>(const VolumeLabelRequest<std::uint8_t>&,
                                                  std::vector<VolumeComponentSums>*);

}  // namespace winnow::detail::cpu
