// Temporary development driver (replaced by the full CLI): ridge [NET [N H W]]
#include <cstdio>
#include <cstdlib>
#include "engine/analysis.h"
#include "netdefs/zoo.h"
int main(int argc, char** argv) {
    using namespace ridge;
    for (const auto& e : zoo()) {
        if (argc > 1 && e.name != argv[1]) continue;
        int64_t N = argc > 4 ? std::atol(argv[2]) : 1, H = argc > 4 ? std::atol(argv[3]) : e.default_res,
                W = argc > 4 ? std::atol(argv[4]) : e.default_res;
        try {
            auto a = analyze(build(e, N, H, W), DType::fp32);
            std::printf("%s,%ld,%ld,%ld,%ld,%ld\n", std::string(e.name).c_str(), N, H, W, a.totals.params, a.totals.macs);
        } catch (const std::exception& ex) { std::printf("%s\n", ex.what()); }
    }
}
