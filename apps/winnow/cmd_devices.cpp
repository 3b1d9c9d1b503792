// `winnow devices`: what backends this build and machine offer.
#include <cstdio>
#include <memory>

#include "commands.hpp"

namespace winnow::cli {

void register_devices(CLI::App& app) {
  auto common = std::make_shared<CommonOptions>();
  auto* cmd = app.add_subcommand("devices", "list the available backends and CUDA devices");
  add_common_options(cmd, *common);
  cmd->callback([common] {
    // --backend cpu or cuda lists that backend alone; cuda where there is none is an error.
    const Backend only = common->backend.empty() ? Backend::automatic : parse_backend(common->backend);
    if (only == Backend::cuda) resolve_backend(Backend::cuda);
    if (only != Backend::cuda) std::printf("cpu: available\n");
    if (only == Backend::cpu) return;
    if (!cuda_compiled_in()) {
      std::printf("cuda: not compiled in\n");
      return;
    }
    const auto devs = cuda_devices();
    if (devs.empty()) {
      std::printf("cuda: compiled in, no device answers\n");
      return;
    }
    for (const auto& d : devs) {
      std::printf("cuda:%d: %s, %.1f GiB, compute capability %d.%d, %d multiprocessors\n", d.index, d.name.c_str(),
                  d.total_memory_bytes / 1073741824.0, d.compute_major, d.compute_minor, d.multiprocessors);
    }
  });
}

}  // namespace winnow::cli
