#include <cstdio>
#include "engine/analysis.h"
#include "netdefs/zoo.h"
int main(int argc, char** argv) {
    using namespace ridge;
    for (const auto& e : zoo()) {
        if (argc > 1 && e.name != argv[1]) continue;
        try {
            auto a = analyze(build(e, 1, e.default_res, e.default_res), DType::fp32);
            std::printf("%s %ld %ld\n", std::string(e.name).c_str(), a.totals.params, a.totals.macs);
        } catch (const std::exception& ex) { std::printf("%s\n", ex.what()); }
    }
}
