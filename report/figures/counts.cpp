#include "report/figures/dat.h"
#include "report/figures/figures.h"

namespace ridge::report {

// Per device whose counters were read: per layer type, the model's FLOPs, the FLOPs expected of
// what ran and the counted ones; bytes too where DRAM was counted (a GPU). No figure at all
// where nothing was counted, so a study without counters reads as before.
std::vector<Figure> counts_figures(const Study& s, const std::string& data_dir) {
    std::vector<Figure> out;
    for (const profile::Profile& p : s.profiles) {
        Figure f{"counts-" + p.device,
                 cat("Counted against analytic FLOPs per layer type, ", p.model, " on ", p.device == "cpu" ? "the CPU" : "the GPU"),
                 "", ""};
        bool bytes = p.total.measured && (p.total.measured->dram_read >= 0 || p.total.measured->dram_write >= 0);
        // Zero is not on a log axis: written as NaN, which gnuplot leaves out.
        auto pos = [](int64_t v) { return v > 0 ? num(double(v)) : std::string("NaN"); };
        std::string rows;
        int n = 0;
        for (const profile::Total& t : p.by_type) {
            int64_t counted = t.measured ? t.measured->flops : 0;
            if (counted <= profile::range_noise * t.rows) counted = 0;  // bookkeeping, not the layers' arithmetic
            if (t.analytic_flops == 0 && counted == 0) continue;
            int64_t dram = !t.measured ? -1
                                       : std::max<int64_t>(t.measured->dram_read, 0) + std::max<int64_t>(t.measured->dram_write, 0);
            rows += cat(t.kind, " ", pos(t.analytic_flops), " ", pos(t.expected_flops), " ", pos(counted), " ",
                        pos(t.analytic_bytes), " ", bytes ? pos(dram) : std::string("NaN"), "\n");
            ++n;
        }
        std::string what = cat(p.model, " ", p.mode == Mode::train ? "training step" : "inference", ", batch ", p.batch);
        f.caption = cat("Per layer type of ", what, " on ", p.device, ": the model's FLOPs, the FLOPs expected of the "
                        "implementations that ran (a direct convolution skips the taps on zero padding) and the FLOPs "
                        "the hardware counted (", p.source, "), each summed over the type's layers and phases; log "
                        "scale, a missing bar is zero. ",
                        bytes ? "Below, the model's minimum bytes beside the DRAM bytes counted. " : "",
                        "The table above gives each layer's reason where counted and analytic differ by more than 5 %.");
        std::string dat = cat("# ", what, " on ", p.device, ", counters: ", p.source,
                              "\n# per layer type, summed over its rows (NaN: zero or not counted)\n"
                              "# type analytic_flops expected_flops counted_flops analytic_bytes dram_bytes\n",
                              rows);
        std::string gpv = cat("title = ", gp_quote(cat("Counted and analytic FLOPs by layer type: ", what, ", ", p.device)),
                              "\nntypes = ", n, "\nhasbytes = ", bytes ? 1 : 0, "\n");
        write_data(data_dir, f.name, dat, gpv);
        out.push_back(f);
    }
    return out;
}

}  // namespace ridge::report
