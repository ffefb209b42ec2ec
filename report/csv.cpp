#include "report/csv.h"

#include "bench/format.h"
#include "bench/profile_cmd.h"

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
    for (const profile::Profile& p : s.profiles) out.push_back({"counts-" + p.device + ".csv", cli::profile_csv(p)});
    return out;
}

}  // namespace ridge::report
