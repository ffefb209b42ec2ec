#include "bench/ledger_schema.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>

#include "bench/usage_error.h"
#include "engine/shape.h"
#include "bench/format.h"
#include "bench/ledger.h"

namespace ridge::bench {

const std::vector<LedgerColumn>& ledger_columns() {
    // Order: what ran and where, its configuration, its figures, then the environment. README
    // "The ledger" has a line per column; test_ledger checks that it does.
    static const std::vector<LedgerColumn> columns = {
        {"kind", ""},
        {"label", ""},
        {"run", ""},
        {"runs", ""},
        {"started", "UTC"},
        {"date", "UTC"},
        {"git", ""},
        {"host", ""},
        {"device", ""},
        {"backend", ""},
        {"precision", ""},
        {"cuda_graph", ""},
        {"winograd", ""},
        {"net", ""},
        {"mode", ""},
        {"batch", "images"},
        {"height", "px"},
        {"width", "px"},
        {"threads", ""},
        {"workers", ""},
        {"warmup_iters", "steps"},
        {"iters", "steps"},
        {"seed", ""},
        {"data", ""},
        {"classes", ""},
        {"train_images", "images"},
        {"lr", ""},
        {"momentum", ""},
        {"weight_decay", ""},
        {"elapsed_s", "s"},
        {"images_per_s", "images/s"},
        {"step_median_ms", "ms"},
        {"step_min_ms", "ms"},
        {"step_iqr_ms", "ms"},
        {"bwd_fwd_time", ""},
        {"update_ms", "ms"},
        {"data_wait_share", ""},
        {"first_loss", ""},
        {"last_loss", ""},
        {"tail_loss", ""},
        {"val_images", "images"},
        {"val_top1", ""},
        {"undecodable", "files"},
        {"wall_s", "s"},
        {"user_s", "s"},
        {"sys_s", "s"},
        {"peak_rss_bytes", "B"},
        {"peak_device_bytes", "B"},
        {"planned_bytes", "B"},
        {"predicted_train_bytes", "B"},
        {"flops_per_step", "FLOP"},
        {"bytes_per_step", "B"},
        {"gflops", "GFLOP/s"},
        {"roof_peak_gflops", "GFLOP/s"},
        {"roof_bandwidth_gbs", "GB/s"},
        {"roof_datasheet_peak_gflops", "GFLOP/s"},
        {"roof_datasheet_bandwidth_gbs", "GB/s"},
        {"roof_gflops", "GFLOP/s"},
        {"roof_fraction", ""},
        {"os", ""},
        {"kernel", ""},
        {"cpu", ""},
        {"isa", ""},
        {"onednn_isa", ""},
        {"cores", ""},
        {"clock_mhz", "MHz"},
        {"clock_max_mhz", "MHz"},
        {"memory_bytes", "B"},
        {"compiler", ""},
        {"onednn", ""},
        {"runtime_env", ""},
        {"gpu", ""},
        {"gpu_sms", ""},
        {"gpu_clock_mhz", "MHz"},
        {"gpu_memory_clock_mhz", "MHz"},
        {"gpu_memory_bytes", "B"},
        {"driver", ""},
        {"cuda", ""},
        {"cudnn", ""},
        {"cublas", ""},
        {"command", ""},
    };
    return columns;
}

std::string ledger_header() {
    std::string h;
    for (const LedgerColumn& c : ledger_columns()) h += cat(h.empty() ? "" : ",", c.name);
    return h;
}

int ledger_column(std::string_view name) {
    static const std::map<std::string, int, std::less<>> index = [] {
        std::map<std::string, int, std::less<>> m;
        for (size_t i = 0; i < ledger_columns().size(); ++i) m.emplace(std::string(ledger_columns()[i].name), int(i));
        return m;
    }();
    auto it = index.find(name);
    return it == index.end() ? -1 : it->second;
}

namespace {

size_t require_column(std::string_view name) {
    int c = ledger_column(name);
    if (c < 0) throw std::logic_error(cat("the ledger schema has no column '", name, "'"));
    return size_t(c);
}

// The headers ridge wrote before the one schema, and how their columns are named in it. A column
// not renamed keeps its name.
struct OldFormat {
    LedgerFormat format;
    std::string_view header;
    std::vector<std::pair<std::string_view, std::string_view>> renamed;
    std::string_view kind;       // every row's kind, where the format had no kind column
    std::string_view precision;  // filled when the format had no precision column
    std::string_view mode;       // filled when the format had no mode column
};

const std::vector<OldFormat>& old_formats() {
    static const std::vector<OldFormat> formats = {
        {LedgerFormat::bench_cpu_v1,
         "date,git,model,device,backend,mode,batch,height,width,threads,warmup,repeat,median_ms,min_ms,iqr_ms,"
         "images_per_s,gflops,bwd_fwd_time,update_ms,cpu,cores,clock_mhz,compiler,onednn",
         {{"model", "net"}, {"warmup", "warmup_iters"}, {"repeat", "iters"}, {"median_ms", "step_median_ms"},
          {"min_ms", "step_min_ms"}, {"iqr_ms", "step_iqr_ms"}},
         "bench", "fp32", ""},
        // The GPU ledger's clock and memory columns are the GPU's.
        {LedgerFormat::bench_cuda_v1,
         "date,git,model,device,backend,mode,precision,cuda_graph,batch,height,width,warmup,repeat,median_ms,min_ms,"
         "iqr_ms,images_per_s,gflops,bwd_fwd_time,update_ms,gpu,sms,clock_mhz,memory_clock_mhz,memory_bytes,driver,"
         "cuda,cudnn,cublas,cpu,compiler",
         {{"model", "net"}, {"warmup", "warmup_iters"}, {"repeat", "iters"}, {"median_ms", "step_median_ms"},
          {"min_ms", "step_min_ms"}, {"iqr_ms", "step_iqr_ms"}, {"sms", "gpu_sms"}, {"clock_mhz", "gpu_clock_mhz"},
          {"memory_clock_mhz", "gpu_memory_clock_mhz"}, {"memory_bytes", "gpu_memory_bytes"}},
         "bench", "", ""},
        {LedgerFormat::train_v1,
         "label,run,runs,started,date,git,host,device,backend,net,batch,height,width,precision,iters,warmup_iters,"
         "workers,threads,data,classes,train_images,lr,momentum,weight_decay,seed,elapsed_s,images_per_s,"
         "step_median_ms,step_iqr_ms,step_min_ms,data_wait_share,first_loss,last_loss,val_images,val_top1,"
         "undecodable,wall_s,user_s,sys_s,peak_rss_bytes,peak_device_bytes,planned_bytes,predicted_train_bytes,"
         "train_flops_per_step,train_bytes_per_step,gflops,roof_peak_gflops,roof_bandwidth_gbs,roof_gflops,"
         "roof_fraction,os,kernel,cpu,isa,onednn_isa,cores,clock_mhz,clock_max_mhz,memory_bytes,compiler,onednn,gpu,"
         "gpu_memory_bytes,driver,cuda,cudnn,cublas,command",
         {{"train_flops_per_step", "flops_per_step"}, {"train_bytes_per_step", "bytes_per_step"}},
         "train", "", "train"},
        {LedgerFormat::train_v2,
         "label,run,runs,started,date,git,host,device,backend,net,batch,height,width,precision,iters,warmup_iters,"
         "workers,threads,data,classes,train_images,lr,momentum,weight_decay,seed,elapsed_s,images_per_s,"
         "step_median_ms,step_iqr_ms,step_min_ms,data_wait_share,first_loss,last_loss,val_images,val_top1,"
         "undecodable,wall_s,user_s,sys_s,peak_rss_bytes,peak_device_bytes,planned_bytes,predicted_train_bytes,"
         "train_flops_per_step,train_bytes_per_step,gflops,roof_peak_gflops,roof_bandwidth_gbs,roof_gflops,"
         "roof_fraction,os,kernel,cpu,isa,onednn_isa,cores,clock_mhz,clock_max_mhz,memory_bytes,compiler,onednn,"
         "runtime_env,gpu,gpu_memory_bytes,driver,cuda,cudnn,cublas,command",
         {{"train_flops_per_step", "flops_per_step"}, {"train_bytes_per_step", "bytes_per_step"}},
         "train", "", "train"},
        // The one schema before the winograd and tail_loss columns.
        {LedgerFormat::schema_v1,
         "kind,label,run,runs,started,date,git,host,device,backend,precision,cuda_graph,net,mode,batch,height,"
         "width,threads,workers,warmup_iters,iters,seed,data,classes,train_images,lr,momentum,weight_decay,"
         "elapsed_s,images_per_s,step_median_ms,step_min_ms,step_iqr_ms,bwd_fwd_time,update_ms,"
         "data_wait_share,first_loss,last_loss,val_images,val_top1,undecodable,wall_s,user_s,sys_s,"
         "peak_rss_bytes,peak_device_bytes,planned_bytes,predicted_train_bytes,flops_per_step,bytes_per_step,"
         "gflops,roof_peak_gflops,roof_bandwidth_gbs,roof_datasheet_peak_gflops,roof_datasheet_bandwidth_gbs,"
         "roof_gflops,roof_fraction,os,kernel,cpu,isa,onednn_isa,cores,clock_mhz,clock_max_mhz,memory_bytes,"
         "compiler,onednn,runtime_env,gpu,gpu_sms,gpu_clock_mhz,gpu_memory_clock_mhz,gpu_memory_bytes,driver,"
         "cuda,cudnn,cublas,command",
         {}, "", "", ""},
    };
    return formats;
}

const OldFormat* old_format(LedgerFormat f) {
    for (const OldFormat& o : old_formats())
        if (o.format == f) return &o;
    return nullptr;
}

std::string first_line(std::string_view text) {
    std::string line(text.substr(0, text.find('\n')));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return line;
}

// Closes the descriptor (and so releases its flock) however the caller leaves.
struct Fd {
    int fd;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

}  // namespace

LedgerRow::LedgerRow() : cells_(ledger_columns().size()) {}

LedgerRow& LedgerRow::set(std::string_view column, std::string value) {
    cells_[require_column(column)] = std::move(value);
    return *this;
}

const std::string& LedgerRow::get(std::string_view column) const { return cells_[require_column(column)]; }

std::string LedgerRow::csv() const {
    std::string row;
    for (size_t i = 0; i < cells_.size(); ++i) row += (i ? "," : "") + csv_cell(cells_[i]);
    return row;
}

std::string ledger_num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

void set_environment(LedgerRow& row, const Env& e, const std::string& host) {
    auto n = [](auto v) { return std::to_string(v); };
    row.set("git", e.git)
        .set("host", host)
        .set("threads", n(e.threads))
        .set("os", e.os)
        .set("kernel", e.kernel)
        .set("cpu", e.cpu)
        .set("isa", e.isa)
        .set("onednn_isa", e.onednn_isa)
        .set("cores", n(e.cores))
        .set("clock_mhz", ledger_num(e.clock_mhz))
        .set("clock_max_mhz", ledger_num(e.clock_max_mhz))
        .set("memory_bytes", n(e.memory_bytes))
        .set("compiler", e.compiler)
        .set("onednn", e.onednn)
        .set("runtime_env", e.runtime_env);
    if (!e.gpu) return;
    row.set("gpu", e.gpu_name)
        .set("gpu_sms", n(e.gpu_sms))
        .set("gpu_clock_mhz", ledger_num(e.gpu_clock_mhz))
        .set("gpu_memory_clock_mhz", ledger_num(e.gpu_mem_clock_mhz))
        .set("gpu_memory_bytes", n(e.gpu_mem_bytes))
        .set("driver", e.driver)
        .set("cuda", e.cuda_runtime)
        .set("cudnn", e.cudnn)
        .set("cublas", e.cublas);
}

const std::string& LedgerRecord::get(std::string_view column) const { return cells.at(require_column(column)); }

std::optional<LedgerFormat> ledger_format(std::string_view header_line) {
    if (header_line == ledger_header()) return LedgerFormat::current;
    for (const OldFormat& o : old_formats())
        if (header_line == o.header) return o.format;
    return std::nullopt;
}

std::string_view format_name(LedgerFormat f) {
    switch (f) {
        case LedgerFormat::current: return "ridge's ledger";
        case LedgerFormat::bench_cpu_v1: return "an older ridge bench CPU ledger (before the one schema)";
        case LedgerFormat::bench_cuda_v1: return "an older ridge bench GPU ledger (before the one schema)";
        case LedgerFormat::train_v1: return "an older ridge train ledger (without runtime_env)";
        case LedgerFormat::train_v2: return "an older ridge train ledger (before the one schema)";
        case LedgerFormat::schema_v1: return "ridge's ledger before its winograd and tail_loss columns";
    }
    return "";
}

std::string other_columns_message(const std::string& path, std::string_view header_line) {
    std::optional<LedgerFormat> f = ledger_format(header_line);
    if (f && *f != LedgerFormat::current)
        return cat("ridge: the ledger '", path, "' is ", format_name(*f),
                   "; this ridge appends only in the one schema: move it aside (ridge compare still reads it) or "
                   "write to another file");
    return cat("ridge: the ledger '", path,
               "' has other columns than this version of ridge writes; move it aside or write to another file");
}

std::vector<std::vector<std::string>> parse_csv(const std::string& text, std::vector<int>* lines) {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> row;
    std::string cell;
    bool quoted = false, any = false;
    int line = 1, row_line = 1;
    for (size_t i = 0; i < text.size(); ++i) {
        char ch = text[i];
        if (ch == '\n') ++line;
        if (quoted) {
            if (ch == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                cell += '"';
                ++i;
            } else if (ch == '"') {
                quoted = false;
            } else {
                cell += ch;
            }
            continue;
        }
        if (ch == '"') {
            quoted = any = true;
        } else if (ch == ',') {
            row.push_back(std::move(cell));
            cell.clear();
            any = true;
        } else if (ch == '\n') {
            row.push_back(std::move(cell));
            cell.clear();
            rows.push_back(std::move(row));
            if (lines) lines->push_back(row_line);
            row.clear();
            row_line = line;
            any = false;
        } else if (ch != '\r') {
            cell += ch;
            any = true;
        }
    }
    if (any || !cell.empty() || !row.empty()) {
        row.push_back(std::move(cell));
        rows.push_back(std::move(row));
        if (lines) lines->push_back(row_line);
    }
    return rows;
}

LedgerFile parse_ledger(const std::string& text, const std::string& path) {
    LedgerFile out;
    if (text.empty()) throw UsageError(cat("ridge: '", path, "' is empty, not a ledger"));
    std::string head = first_line(text);
    std::optional<LedgerFormat> f = ledger_format(head);
    if (!f)
        throw UsageError(cat("ridge: '", path,
                             "' is a ledger of an unknown schema: its first line is none of the headers ridge writes "
                             "or wrote (bench, report, train)"));
    out.format = *f;
    std::vector<int> lines;
    std::vector<std::vector<std::string>> all = parse_csv(text, &lines);
    const std::vector<std::string>& names = all[0];
    // Where each of the file's columns lands in the schema.
    std::vector<int> target(names.size(), -1);
    const OldFormat* old = old_format(*f);
    for (size_t i = 0; i < names.size(); ++i) {
        std::string_view name = names[i];
        if (old)
            for (const auto& [from, to] : old->renamed)
                if (from == name) name = to;
        target[i] = ledger_column(name);
    }
    for (size_t r = 1; r < all.size(); ++r) {
        if (all[r].size() != names.size()) {
            ++out.torn_rows;
            continue;
        }
        LedgerRecord rec;
        rec.cells.resize(ledger_columns().size());
        rec.line = lines[r];
        for (size_t i = 0; i < names.size(); ++i)
            if (target[i] >= 0) rec.cells[size_t(target[i])] = std::move(all[r][i]);
        if (old) {
            if (!old->kind.empty()) rec.cells[require_column("kind")] = std::string(old->kind);
            if (!old->precision.empty()) rec.cells[require_column("precision")] = std::string(old->precision);
            if (!old->mode.empty()) rec.cells[require_column("mode")] = std::string(old->mode);
        }
        out.rows.push_back(std::move(rec));
    }
    return out;
}

LedgerFile read_ledger_file(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) throw UsageError(cat("ridge: cannot read '", path, "': ", std::strerror(errno)));
    Fd guard{fd};
    while (::flock(fd, LOCK_SH) != 0)
        if (errno != EINTR) throw UsageError(cat("ridge: cannot lock '", path, "': ", std::strerror(errno)));
    std::string text;
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw UsageError(cat("ridge: cannot read '", path, "': ", std::strerror(errno)));
        if (n == 0) break;
        text.append(buf, size_t(n));
    }
    return parse_ledger(text, path);
}

}  // namespace ridge::bench
