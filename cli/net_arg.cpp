#include "cli/net_arg.h"

namespace ridge::cli {

using bench::UsageError;

const ZooEntry& net_named(std::string_view command, const std::string& name) {
    if (const ZooEntry* e = find_net(name)) return *e;
    std::vector<std::string_view> names;
    for (const ZooEntry& e : zoo()) names.push_back(e.name);
    throw UsageError(cat("ridge ", command, ": unknown net '", name, "'; closest: ", closest(name, names),
                         " (ridge list shows all)"));
}

const ZooEntry& net_arg(const Args& a) { return net_named(a.cmd->name, a.pos[0]); }

Graph build_for(const Args& a, const ZooEntry& e, int64_t N) {
    auto [H, W] = a.has("--res") ? a.resolution(max_res) : std::pair<int64_t, int64_t>{e.default_res, e.default_res};
    try {
        return build(e, N, H, W);
    } catch (const BuildError& err) {
        int64_t m = min_resolution(e);
        if (H < m || W < m)
            throw UsageError(cat("ridge ", a.cmd->name, ": ", H, "x", W, " is below ", e.name,
                                 "'s minimum resolution of ", m, "x", m));
        throw UsageError(cat("ridge ", a.cmd->name, ": ", err.what()));
    }
}

}  // namespace ridge::cli
