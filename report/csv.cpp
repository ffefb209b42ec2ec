#include "report/csv.h"

#include "bench/format.h"
#include "bench/ledger_schema.h"
#include "profile/render.h"
#include "roofline/roofline.h"

namespace ridge::report {


std::string runs_csv(const Study& s) {
    std::string out =
        "device,backend,net,mode,batch,median_ms,min_ms,iqr_ms,fwd_ms,bwd_ms,images_per_s,flops,bytes,gflops_per_s\n";
    for (const Run& r : s.runs) {
        bool train = r.mode == Mode::train;
        out += cat(r.device, ",", r.backend, ",", r.net, ",", train ? "train" : "infer", ",", r.batch, ",",
                   r.step.median * 1e3, ",", r.step.min * 1e3, ",", r.step.iqr() * 1e3, ",",
                   train ? cat(r.fwd.median * 1e3) : "", ",", train ? cat(r.bwd.median * 1e3) : "", ",",
                   r.images_per_s(), ",", r.flops(), ",", r.bytes(), ",", r.achieved_flops() / 1e9, "\n");
    }
    return out;
}

std::string ledger_csv(const Study& s, const std::string& command) {
    using bench::ledger_num;
    std::string out = bench::ledger_header() + "\n";
    for (const Run& r : s.runs) {
        bool gpu = r.device == "cuda";
        bench::Env env = s.env;
        env.gpu = env.gpu && gpu;  // a CPU row carries no GPU
        bench::LedgerRow row;
        bench::set_environment(row, env, s.host);
        row.set("kind", "bench")
            .set("date", s.env.date)
            .set("device", r.device)
            .set("backend", r.backend)
            .set("winograd", r.backend == "onednn" ? "1" : "")
            .set("precision", "fp32")
            .set("cuda_graph", gpu ? "0" : "")
            .set("net", r.net)
            .set("mode", r.mode == Mode::train ? "train" : "infer")
            .set("batch", std::to_string(r.batch))
            .set("height", std::to_string(r.a.input[2]))
            .set("width", std::to_string(r.a.input[3]))
            .set("threads", gpu ? "" : std::to_string(s.env.threads))
            .set("warmup_iters", std::to_string(s.warmup))
            .set("iters", std::to_string(s.repeat))
            .set("images_per_s", ledger_num(r.images_per_s()))
            .set("step_median_ms", ledger_num(r.step.median * 1e3))
            .set("step_min_ms", ledger_num(r.step.min * 1e3))
            .set("step_iqr_ms", ledger_num(r.step.iqr() * 1e3))
            .set("bwd_fwd_time", r.mode == Mode::train ? ledger_num(r.bwd.median / r.fwd.median) : "")
            .set("flops_per_step", std::to_string(r.flops()))
            .set("bytes_per_step", std::to_string(r.bytes()))
            .set("gflops", ledger_num(r.achieved_flops() / 1e9))
            .set("command", command);
        if (const Ceilings* c = s.ceilings_of(r.device)) {
            double intensity = double(r.flops()) / double(r.bytes());
            double roof = roofline::attainable(c->peak_flops, c->bytes_per_s, intensity);
            row.set("roof_peak_gflops", ledger_num(c->peak_flops / 1e9))
                .set("roof_bandwidth_gbs", ledger_num(c->bytes_per_s / 1e9))
                .set("roof_gflops", ledger_num(roof / 1e9))
                .set("roof_fraction", ledger_num(r.achieved_flops() / roof));
            if (c->datasheet_peak_flops) row.set("roof_datasheet_peak_gflops", ledger_num(*c->datasheet_peak_flops / 1e9));
            if (c->datasheet_bytes_per_s) row.set("roof_datasheet_bandwidth_gbs", ledger_num(*c->datasheet_bytes_per_s / 1e9));
        }
        out += row.csv() + "\n";
    }
    return out;
}

std::string layers_csv(const Study& s) {
    std::string out = "device,net,mode,batch,layer,type,fwd_ms,dgrad_ms,wgrad_ms,fwd_flops,dgrad_flops,wgrad_flops,"
                      "fwd_bytes,bwd_bytes\n";
    const Run* r = s.layer_run();
    if (!r) return out;
    for (size_t i = 0; i < r->layers.size() && i < r->a.layers.size(); ++i) {
        const LayerCost& l = r->a.layers[i];
        const LayerResult& t = r->layers[i];
        out += cat(r->device, ",", r->net, ",", r->mode == Mode::train ? "train" : "infer", ",", r->batch, ",", l.name,
                   ",", category_name(l.category), ",", t.fwd.median * 1e3, ",", t.dgrad.median * 1e3, ",",
                   t.wgrad.median * 1e3, ",", l.c.fwd_flops, ",", l.c.dgrad_flops, ",", l.c.wgrad_flops, ",",
                   l.c.fwd_traffic_bytes, ",", l.c.bwd_traffic_bytes, "\n");
    }
    return out;
}

std::vector<std::pair<std::string, std::string>> counts_csvs(const Study& s) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const profile::Profile& p : s.profiles) out.push_back({"counts-" + p.device + ".csv", profile::render_csv(p)});
    return out;
}

}  // namespace ridge::report
