// A probe of the oneDNN executor alone: median inference latency or training step of one zoo net,
// for comparing designs while the `ridge bench` command is written. Not a test.
//   onednn_probe NET BATCH RES [infer|train] [fused|unfused] [REPEATS] [THREADS]
// Prints one CSV line: net,batch,res,mode,fusion,threads,median_ms,min_ms,max_ms,planned_mib
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/backend/onednn/onednn.h"
#include "netdefs/zoo.h"

using namespace ridge;

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: onednn_probe NET BATCH RES [infer|train] [fused|unfused] [REPEATS] [THREADS]\n");
        return 2;
    }
    const ZooEntry* e = find_net(argv[1]);
    if (!e) {
        std::fprintf(stderr, "onednn_probe: no net %s\n", argv[1]);
        return 2;
    }
    int64_t N = std::stoll(argv[2]), res = std::stoll(argv[3]);
    std::string mode = argc > 4 ? argv[4] : "infer", fusion = argc > 5 ? argv[5] : "fused";
    int repeats = argc > 6 ? std::stoi(argv[6]) : 20;
    int threads = argc > 7 ? std::stoi(argv[7]) : 0;
    try {
        Graph g = build(*e, N, res, res);
        ExecOptions o{mode == "train" ? Mode::train : Mode::infer, fusion == "fused", threads};
        auto ex = make_onednn_executor(g, o);
        ex->prepare();
        ex->load(init_weights(g, 1));
        const Shape& ys = g.tensor(g.output()).shape;
        ex->set_input(random_input(g.input_shape(), 2), random_labels(N, numel(ys) / N, 3));
        auto step = [&] {
            ex->forward();
            if (o.mode == Mode::train) ex->backward(), ex->update(1e-3f);
        };
        for (int i = 0; i < 3; ++i) step();
        std::vector<double> ms;
        for (int i = 0; i < repeats; ++i) {
            auto t0 = std::chrono::steady_clock::now();
            step();
            ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(ms.begin(), ms.end());
        std::printf("%s,%lld,%lld,%s,%s,%d,%.3f,%.3f,%.3f,%.1f\n", e->name.data(), (long long)N, (long long)res,
                    mode.c_str(), fusion.c_str(), threads, ms[ms.size() / 2], ms.front(), ms.back(),
                    double(ex->planned_bytes()) / (1 << 20));
    } catch (const std::exception& err) {
        std::fprintf(stderr, "onednn_probe: %s\n", err.what());
        return 1;
    }
}
