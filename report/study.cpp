#include "report/study.h"

namespace ridge::report {

int64_t Run::flops() const {
    const Totals& t = a.totals;
    return mode == Mode::train ? t.fwd_flops + t.bwd_flops() : t.fwd_flops;
}

int64_t Run::bytes() const {
    const Totals& t = a.totals;
    return mode == Mode::train ? t.fwd_traffic_bytes + t.bwd_traffic_bytes : t.fwd_traffic_bytes;
}

const Ceilings* Study::ceilings_of(std::string_view device) const {
    for (const Ceilings& c : ceilings)
        if (c.device == device) return &c;
    return nullptr;
}

const NetCounts* Study::counts_of(std::string_view net, int64_t batch) const {
    for (const NetCounts& c : counts)
        if (c.net == net && c.batch == batch) return &c;
    return nullptr;
}

const Run* Study::run_of(std::string_view device, std::string_view net, Mode mode, int64_t batch) const {
    for (const Run& r : runs)
        if (r.device == device && r.net == net && r.mode == mode && r.batch == batch) return &r;
    return nullptr;
}

std::vector<const Run*> Study::runs_of(std::string_view device, Mode mode) const {
    std::vector<const Run*> out;
    for (const Run& r : runs)
        if (r.device == device && r.mode == mode) out.push_back(&r);
    return out;
}

const Run* Study::layer_run() const {
    for (const Run& r : runs)
        if (r.net == layer_net && !r.layers.empty()) return &r;
    return nullptr;
}

}  // namespace ridge::report
