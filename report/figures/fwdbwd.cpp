#include <limits>

#include "report/figures/dat.h"
#include "report/figures/figures.h"

namespace ridge::report {

std::vector<Figure> fwdbwd_figures(const Study& s, const std::string& data_dir) {
    Figure f{"fwdbwd", "Backward against forward: measured time and analytic FLOPs", "", ""};
    const double nan = std::numeric_limits<double>::quiet_NaN();
    auto measured = [&](const Run* r) { return r ? r->bwd.median / r->fwd.median : nan; };
    std::string rows;
    bool cpu = false, gpu = false;
    int n = 0;
    for (const std::string& net : s.nets) {
        const Run* c = s.run_of("cpu", net, Mode::train, s.train_batch);
        const Run* g = s.run_of("cuda", net, Mode::train, s.train_batch);
        if (!c && !g) continue;
        const Totals& t = (c ? c : g)->a.totals;
        rows += net + " " + num(double(t.bwd_flops()) / double(t.fwd_flops)) + " " + num(measured(c)) + " " +
                num(measured(g)) + "\n";
        cpu |= c != nullptr;
        gpu |= g != nullptr;
        ++n;
    }
    if (n == 0) {
        f.missing = "no training step was measured";
        return {f};
    }
    std::string devices = cpu && gpu ? "CPU and GPU" : cpu ? "CPU" : "GPU";
    f.caption = "Per net, the training step's backward time over its forward time (medians, batch " +
                std::to_string(s.train_batch) + ", " + devices +
                ") beside the analytic ratio of backward FLOPs (data and weight gradients) to forward FLOPs. "
                "The dashed line is the rule of thumb of 2.";
    std::string dat = "# backward / forward of the training step at batch " + std::to_string(s.train_batch) +
                      " (NaN: not measured on that device)\n"
                      "# net analytic_flops_ratio cpu_time_ratio gpu_time_ratio\n" +
                      rows;
    std::string gpv = "title = " + gp_quote("Backward / forward, training step at batch " +
                                            std::to_string(s.train_batch)) +
                      "\nnnets = " + std::to_string(n) + "\nhascpu = " + (cpu ? "1" : "0") +
                      "\nhasgpu = " + (gpu ? "1" : "0") + "\n";
    write_data(data_dir, f.name, dat, gpv);
    return {f};
}

}  // namespace ridge::report
