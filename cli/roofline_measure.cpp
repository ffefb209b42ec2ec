#include "cli/roofline_common.h"

#include <algorithm>
#include <ctime>
#include <iostream>

#include "bench/format.h"
#include "roofline/probes/cpu/probes.h"
#include "roofline/probes/cuda/probes.h"
#include "roofline/roofline.h"

namespace ridge::cli::roofline_sub {

using bench::check_output, bench::fixed, bench::Json, bench::UsageError, bench::write_output;

using namespace ridge::roofline;

const Command measure_cmd{
    "roofline measure", "[options]",
    "Measures this machine's ceilings with hand-written probes.\n"
    "cpu: the all-core clock (a chain of dependent adds) beside the clock /proc/cpuinfo reports,\n"
    "  fp32 FMA throughput on every core beside the theoretical peak at both clocks and the\n"
    "  datasheet peak (at the model's maximum boost clock from roofline/cpu_clocks.csv; where the\n"
    "  CPU hides its model, at the reported clock: a lower bound), STREAM copy/scale/add/triad\n"
    "  (arrays 4x the last-level cache) beside glibc memcpy on the same buffers, and a read sweep\n"
    "  over working sets whose plateaus are the L1/L2/L3/DRAM ceilings.\n"
    "  Takes about 15 s (--quick: 2 to 10 s, less accurate), longer where the cache is large.\n"
    "cuda: fp32/fp16/bf16 FMA and tensor-core peaks, an intensity sweep, DRAM and L2 bandwidth,\n"
    "  beside the ceilings the device properties imply. Without a CUDA device it prints one line\n"
    "  and exits 3.",
    0,
    {{"--device", "D", "cpu (default) or cuda"},
     {"--format", "F", "table (default) or json"},
     {"--threads", "N", "cpu: threads, one per core (default: every physical core)"},
     {"--quick", "", "short runs (what `place --chip this` uses)"},
     out_opt}};

namespace {

std::string today() {
    std::time_t t = std::time(nullptr);
    char buf[16];
    std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
    return buf;
}

std::string cpu_table(const probe::CpuCeilings& m, const std::optional<DatasheetClock>& sheet) {
    const probe::CpuInfo& c = m.cpu;
    std::string s = cat("CPU: ", c.model_name, " (", c.vendor, " family ", c.family, " model ", c.model, "), ",
                        c.core_cpus.size(), " cores, ", c.logical_cpus, " logical CPUs; ",
                        c.avx512f ? "AVX-512" : c.avx2 ? "AVX2" : "no AVX2", c.fma ? "+FMA" : "", "\n");
    std::string caches;
    for (const probe::CacheLevel& l : c.caches)
        caches += cat(caches.empty() ? "" : ", ", "L", l.level, " ", bytes_text(l.bytes),
                      l.shared_by > 1 ? cat(" (shared by ", l.shared_by, ")") : std::string());
    if (m.load_average)
        s += cat("load average ", fixed(*m.load_average, 2),
                 " before the probes (other work on these cores lowers the bandwidths;\n",
                 "each figure is the best of many short runs)\n");
    s += cat("caches: ", caches.empty() ? std::string("not reported") : cat(caches, "; from ", c.caches_from), "\n");
    s += cat("FMA units: ", m.units.rule, " = ", num(m.units.fp32_flops_per_cycle()), " fp32 FLOP/cycle/core\n");
    double reported = c.reported_mhz ? *c.reported_mhz / 1e3 : 0;
    s += cat("clock: ", c.reported_mhz ? cat(fixed(*c.reported_mhz, 0), " MHz reported (/proc/cpuinfo), ") : "",
             fixed(m.measured_clock_ghz * 1e3, 0), " MHz measured (dependent adds, all cores at once)\n\n");
    double theo = m.theoretical_gflops(m.measured_clock_ghz);
    auto row = [](const std::string& label, double gflops, const std::string& note) {
        return cat(label, std::string(label.size() < 37 ? 37 - label.size() : 1, ' '), num(gflops), " GFLOP/s  (", note, ")\n");
    };
    s += row(cat("fp32 FMA, ", m.fma.isa, ", ", m.threads, m.threads == 1 ? " thread" : " threads"), m.fma.gflops,
             "each core's best rate over its own CPU time");
    s += row("  all threads, wall-clock time", m.fma.gflops_wall, "lower while other processes share the cores");
    s += row("  theoretical at the measured clock", theo, cat(fixed(100 * m.fma.gflops / theo, 1), "% reached"));
    if (reported > 0) {
        double theo_r = m.theoretical_gflops(reported);
        s += row("  theoretical at the reported clock", theo_r,
                 cat(fixed(100 * m.fma.gflops / theo_r, 1), "% reached",
                     m.fma.gflops > theo_r ? ": the reported clock is too low" : ""));
    }
    if (sheet) {
        double theo_d = m.theoretical_gflops(sheet->ghz);
        s += row(sheet->lower_bound ? "  datasheet (a lower bound)" : "  datasheet", theo_d,
                 cat(fixed(100 * m.fma.gflops / theo_d, 1), "% reached"));
        s += cat("    at ", sheet->why, sheet->row ? cat(" (", sheet->row->source, ")") : std::string(), "\n");
    }
    const probe::StreamResult& st = m.stream;
    s += cat("\nSTREAM, ", st.threads, " threads, 3 arrays of ", bytes_text(st.array_bytes),
             st.nontemporal ? ", non-temporal stores" : ", cached stores", "\n",
             "  (GB/s = 1e9 B/s; bytes counted as STREAM does, the write-allocate read not counted)\n");
    s += cat("  copy ", num(st.copy), "   scale ", num(st.scale), "   add ", num(st.add), "   triad ", num(st.triad),
             " GB/s\n");
    s += cat("  memcpy (glibc, same buffers) ", num(st.memcpy), " GB/s   triad / memcpy ",
             fixed(100 * st.triad / st.memcpy, 1), "%\n");
    s += cat("  triad with cached stores ", num(st.triad_cached_stores), " GB/s (pays the write-allocate read)\n");
    s += cat("\nread sweep, ", m.threads, " threads, ", m.sweep.size(), " working sets from ",
             bytes_text(m.sweep.empty() ? 0 : m.sweep.front().bytes), " to ",
             bytes_text(m.sweep.empty() ? 0 : m.sweep.back().bytes), "; plateaus by cache size:\n");
    for (const probe::Plateau& p : m.levels)
        s += cat("  ", p.level, std::string(6 - std::min<size_t>(5, p.level.size()), ' '), bytes_text(p.from_bytes), " - ",
                 bytes_text(p.to_bytes), ": ", num(p.gbs), " GB/s (upper quartile of ", p.points, ")\n");
    return s;
}

std::string cpu_json(const probe::CpuCeilings& m, const std::optional<DatasheetClock>& sheet) {
    const probe::CpuInfo& c = m.cpu;
    Json j;
    j.begin_object().field("device", "cpu").field("date", today()).field("cpu", c.model_name).field("vendor", c.vendor);
    j.field("family", c.family).field("model", c.model).field("cores", int64_t(c.core_cpus.size()));
    j.field("logical_cpus", c.logical_cpus).field("threads", m.threads).field("isa", m.fma.isa);
    j.field("fma_units", m.units.units).field("fma_bits", m.units.bits).field("fma_rule", m.units.rule);
    j.field("fp32_flops_per_cycle_per_core", m.units.fp32_flops_per_cycle());
    if (c.reported_mhz) j.field("reported_clock_mhz", *c.reported_mhz);
    j.field("measured_clock_mhz", m.measured_clock_ghz * 1e3);
    if (m.load_average) j.field("load_average", *m.load_average);
    j.field("fp32_gflops", m.fma.gflops).field("fp32_gflops_wall_clock", m.fma.gflops_wall);
    j.field("fp32_theoretical_gflops", m.theoretical_gflops(m.measured_clock_ghz));
    if (c.reported_mhz) j.field("fp32_theoretical_reported_clock_gflops", m.theoretical_gflops(*c.reported_mhz / 1e3));
    if (sheet) {
        j.field("fp32_datasheet_gflops", m.theoretical_gflops(sheet->ghz)).field("datasheet_clock_mhz", sheet->ghz * 1e3);
        j.boolean("datasheet_lower_bound", sheet->lower_bound).field("datasheet_clock", sheet->why);
    }
    j.field("triad_gbs", m.stream.triad).field("memcpy_gbs", m.stream.memcpy);
    j.begin_object("stream").field("array_bytes", m.stream.array_bytes).field("threads", m.stream.threads);
    j.field("nontemporal_stores", m.stream.nontemporal ? "yes" : "no");
    j.field("copy_gbs", m.stream.copy).field("scale_gbs", m.stream.scale).field("add_gbs", m.stream.add);
    j.field("triad_gbs", m.stream.triad).field("triad_cached_stores_gbs", m.stream.triad_cached_stores);
    j.field("memcpy_gbs", m.stream.memcpy).end_object();
    j.field("caches_from", c.caches_from);
    j.begin_array("caches");
    for (const probe::CacheLevel& l : c.caches)
        j.begin_object().field("level", l.level).field("type", l.type).field("bytes", l.bytes).field("shared_by", l.shared_by).end_object();
    j.end_array();
    j.begin_array("plateaus");
    for (const probe::Plateau& p : m.levels)
        j.begin_object().field("level", p.level).field("from_bytes", p.from_bytes).field("to_bytes", p.to_bytes)
            .field("points", p.points).field("gbs", p.gbs).end_object();
    j.end_array();
    j.begin_array("sweep");
    for (const probe::SweepPoint& p : m.sweep)
        j.begin_object().field("bytes", p.bytes).field("gbs", p.gbs).field("gbs_wall_clock", p.gbs_wall).end_object();
    j.end_array().end_object();
    return j.str();
}

std::string gpu_table(const probe::gpu::GpuCeilings& g) {
    const auto& d = g.dev;
    std::string s = cat("GPU: ", d.name, " (sm_", d.cc_major, d.cc_minor, "), ", d.sms, " SMs x ", d.fp32_lanes_per_sm,
                        " fp32 lanes, L2 ", bytes_text(d.l2_bytes), ", ", bytes_text(d.mem_bytes), "\n");
    s += cat("clock: ", fixed(d.clock_mhz, 0), " MHz (driver peak), ", fixed(g.measured_clock_mhz, 0),
             " MHz measured during the fp32 kernel\n\n");
    double theo = g.fp32_theoretical_gflops(g.measured_clock_mhz), sheet = g.fp32_theoretical_gflops(d.clock_mhz);
    s += cat("fp32 FMA            ", num(g.fp32_gflops), " GFLOP/s   ", fixed(100 * g.fp32_gflops / theo, 1),
             "% of ", num(theo), " at the measured clock, ", fixed(100 * g.fp32_gflops / sheet, 1), "% of ", num(sheet),
             " at the driver's\n");
    s += cat("fp16x2 FMA          ", num(g.fp16x2_gflops), " GFLOP/s\n");
    s += cat("bf16x2 FMA          ", num(g.bf16x2_gflops), " GFLOP/s\n");
    s += cat("tensor mma.sync fp16 (fp32 accumulate) ", num(g.tensor_fp16_gflops), " GFLOP/s\n\n");
    double dram = std::max(g.dram_copy_gbs, g.dram_read_gbs), sheet_bw = g.dram_datasheet_gbs();
    s += cat("DRAM copy ", num(g.dram_copy_gbs), " GB/s, read ", num(g.dram_read_gbs), " GB/s (", bytes_text(g.dram_buffer_bytes),
             "); best ", fixed(100 * dram / sheet_bw, 1), "% of ", num(sheet_bw), " GB/s (2 x memory clock x bus width)\n");
    s += cat("L2 read ", num(g.l2_read_gbs), " GB/s (", bytes_text(g.l2_buffer_bytes), " read repeatedly)\n\n");
    s += "intensity sweep (FLOP/B, GFLOP/s):\n";
    std::string prev;
    for (const auto& p : g.sweep) {
        if (p.precision != prev) s += cat(prev.empty() ? "" : "\n", "  ", p.precision, ":");
        prev = p.precision;
        s += cat(" ", num(p.flop_per_byte), "->", num(p.gflops));
    }
    return s + "\n";
}

std::string gpu_json(const probe::gpu::GpuCeilings& g) {
    const auto& d = g.dev;
    Json j;
    j.begin_object().field("device", "cuda").field("date", today()).field("gpu", d.name);
    j.field("compute_capability", cat(d.cc_major, ".", d.cc_minor)).field("sms", d.sms);
    j.field("fp32_lanes_per_sm", d.fp32_lanes_per_sm).field("driver_clock_mhz", d.clock_mhz);
    j.field("measured_clock_mhz", g.measured_clock_mhz);
    j.field("fp32_gflops", g.fp32_gflops);
    j.field("fp32_theoretical_gflops", g.fp32_theoretical_gflops(g.measured_clock_mhz));
    j.field("fp32_datasheet_gflops", g.fp32_theoretical_gflops(d.clock_mhz));
    j.field("fp16x2_gflops", g.fp16x2_gflops).field("bf16x2_gflops", g.bf16x2_gflops);
    j.field("tensor_fp16_gflops", g.tensor_fp16_gflops);
    j.field("dram_copy_gbs", g.dram_copy_gbs).field("dram_read_gbs", g.dram_read_gbs);
    j.field("dram_datasheet_gbs", g.dram_datasheet_gbs()).field("l2_read_gbs", g.l2_read_gbs);
    j.field("dram_buffer_bytes", g.dram_buffer_bytes).field("l2_buffer_bytes", g.l2_buffer_bytes);
    j.begin_array("sweep");
    for (const auto& p : g.sweep)
        j.begin_object().field("precision", p.precision).field("ops_per_element", p.ops_per_element)
            .field("flop_per_byte", p.flop_per_byte).field("gflops", p.gflops).field("gbs", p.gbs).end_object();
    j.end_array().end_object();
    return j.str();
}

}  // namespace

int run_measure(const Args& a) {
    std::string device = a.choice("--device", "cpu", {"cpu", "cuda"});
    std::string fmt = a.choice("--format", "table", {"table", "json"});
    int threads = int(a.positive("--threads", 0, 4096));
    bool quick = a.has("--quick");
    check_output(a.get("--out", ""));
    std::string out;
    if (device == "cuda") {
        if (a.has("--threads")) throw UsageError("ridge roofline measure: --threads applies to --device cpu only");
        if (std::string why = probe::gpu::unavailable_reason(); !why.empty()) {
            std::cerr << "ridge roofline measure: " << why << "\n";
            return exit_no_device;
        }
        probe::gpu::GpuCeilings g;
        try {
            g = probe::gpu::measure(quick);
        } catch (const std::exception& e) {
            std::cerr << "ridge roofline measure: " << e.what() << "\n";
            return 1;
        }
        out = fmt == "json" ? gpu_json(g) : gpu_table(g);
    } else {
        std::vector<CpuClock> clocks = load_clocks(a);
        probe::CpuCeilings m = probe::measure_cpu({quick, threads});
        std::optional<double> reported;
        if (m.cpu.reported_mhz) reported = *m.cpu.reported_mhz / 1e3;
        std::optional<DatasheetClock> sheet = datasheet_clock(clocks, m.cpu.model_name, reported);
        out = fmt == "json" ? cpu_json(m, sheet) : cpu_table(m, sheet);
    }
    write_output(a.get("--out", ""), out);
    return 0;
}

}  // namespace ridge::cli::roofline_sub
