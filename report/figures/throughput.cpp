#include <algorithm>

#include "report/figures/dat.h"
#include "report/figures/figures.h"

namespace ridge::report {

std::vector<Figure> throughput_figures(const Study& s, const std::string& data_dir) {
    Figure f{"throughput", "Throughput against batch size", "", ""};
    const std::pair<const char*, const char*> devices[] = {{"cpu", "CPU"}, {"cuda", "GPU"}};
    std::string dat, series;
    int n = 0;
    bool gpu = false;
    for (const auto& [device, shown] : devices)
        for (size_t k = 0; k < s.nets.size(); ++k) {
            std::vector<const Run*> runs;
            for (const Run* r : s.runs_of(device, Mode::infer))
                if (r->net == s.nets[k]) runs.push_back(r);
            if (runs.empty()) continue;
            std::sort(runs.begin(), runs.end(), [](const Run* a, const Run* b) { return a->batch < b->batch; });
            // gnuplot `index` blocks are separated by two blank lines.
            if (n) dat += "\n\n";
            dat += "# " + std::string(shown) + " " + s.nets[k] + "\n# batch images_per_s\n";
            for (const Run* r : runs) dat += std::to_string(r->batch) + " " + num(r->images_per_s()) + "\n";
            std::string i = std::to_string(n++);
            series += "net" + i + " = " + std::to_string(k) + "\ngpu" + i + " = " +
                      (std::string(device) == "cuda" ? "1" : "0") + "\n";
            gpu |= std::string(device) == "cuda";
        }
    if (n == 0) {
        f.missing = "no inference runs were measured";
        return {f};
    }
    f.caption = std::string("Images per second of the inference step (batch / median step time) against "
                            "the batch size, one colour per net") +
                (gpu ? "; CPU solid, GPU dashed." : ", on the CPU.");
    std::string gpv = "title = " + gp_quote(gpu ? "Inference throughput, CPU and GPU" : "Inference throughput, CPU") +
                      "\nnseries = " + std::to_string(n) + "\nhasgpu = " + (gpu ? "1" : "0") +
                      "\nnnets = " + std::to_string(s.nets.size()) + "\n" + series;
    for (size_t k = 0; k < s.nets.size(); ++k) gpv += "name" + std::to_string(k) + " = " + gp_quote(s.nets[k]) + "\n";
    write_data(data_dir, f.name, dat, gpv);
    return {f};
}

}  // namespace ridge::report
