#include "bench/kernels/options.h"

#include <omp.h>

#include "bench/usage_error.h"

namespace ridge::kbench {

namespace {

int64_t parse_int(const std::string& flag, const std::string& v, int64_t lo, int64_t hi) {
    size_t end = 0;
    long long x = 0;
    try {
        x = std::stoll(v, &end);
    } catch (const std::exception&) {
        end = 0;
    }
    if (v.empty() || end != v.size() || !(v[0] == '-' || (v[0] >= '0' && v[0] <= '9')))
        throw bench::UsageError(flag + " takes a whole number, not '" + v + "'");
    if (x < lo || x > hi)
        throw bench::UsageError(flag + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                              ", not " + v);
    return x;
}

}  // namespace

std::string usage() {
    return R"(usage: ridge-kernels [KERNEL...] [options]
Runs each hand-written kernel on its own: the reference kernel, the fast kernel, a check that they
agree, then timings of both. No KERNEL: every CPU kernel; 'all': every kernel, CUDA ones too.

  --list                 the kernels, what each computes and its default shape
  --n N --c C --h H --w W  the activation's shape (default: each kernel's, a zoo size)
  --k K                  the outputs of linear-row (its inputs: --c; --n, --h and --w leave it
                         alone)
  --rows N               the rows of linear-row, 1 to 64 (default 1: a classifier at batch 1)
  --r R --s S --stride U --pad P  the filter of the convolution kernels
  --layout L             nchw, nhwc, nChw8c or nChw16c, where the kernel takes several
  --isa I                all (default: the dispatched build and each single-ISA build this CPU runs),
                         dispatch, x86-64-v4, x86-64-v3 or x86-64
  --threads T            threads for the CPU kernels (default: OpenMP's)
  --warmup W             untimed calls first (default 3)
  --repeats R            timed calls of the fast kernel (default 20)
  --ref-repeats R        timed calls of the reference (default 3; 0: run once for the check only)
  --no-flush             keep the caches warm between repeats (default: flush them)
  --csv                  one CSV row per kernel and variant instead of the table
  --help                 this text
Exit: 0 all checks passed, 1 a check failed or a kernel could not run, 2 a usage error.
)";
}

Options parse_options(const std::vector<std::string>& args) {
    Options o;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&]() -> const std::string& {
            if (i + 1 >= args.size()) throw bench::UsageError(a + " needs a value");
            return args[++i];
        };
        constexpr int64_t big = 1'000'000;
        if (a == "--help" || a == "-h") o.help = true;
        else if (a == "--list") o.list = true;
        else if (a == "--csv") o.csv = true;
        else if (a == "--no-flush") o.timing.flush = false;
        else if (a == "--n") o.N = parse_int(a, value(), 1, big);
        else if (a == "--c") o.C = parse_int(a, value(), 1, big);
        else if (a == "--h") o.H = parse_int(a, value(), 1, big);
        else if (a == "--w") o.W = parse_int(a, value(), 1, big);
        else if (a == "--k") o.K = parse_int(a, value(), 1, big);
        else if (a == "--rows") o.rows = parse_int(a, value(), 1, simd::max_panel_rows);
        else if (a == "--r") o.R = parse_int(a, value(), 1, 11);
        else if (a == "--s") o.S = parse_int(a, value(), 1, 11);
        else if (a == "--stride") o.stride = parse_int(a, value(), 1, 16);
        else if (a == "--pad") o.pad = parse_int(a, value(), 0, 10);
        else if (a == "--layout") o.layout = value();
        else if (a == "--isa") o.isa = value();
        else if (a == "--threads") o.threads = int(parse_int(a, value(), 1, 1024));
        else if (a == "--warmup") o.timing.warmup = int(parse_int(a, value(), 0, 100000));
        else if (a == "--repeats") o.timing.repeats = int(parse_int(a, value(), 1, 100000));
        else if (a == "--ref-repeats") o.ref_repeats = int(parse_int(a, value(), 0, 100000));
        else if (!a.empty() && a[0] == '-') throw bench::UsageError("unknown option '" + a + "' (see --help)");
        else if (a == "all") {
            for (const Kernel& k : kernels()) o.kernels.push_back(&k);
        } else if (const Kernel* k = find_kernel(a)) {
            o.kernels.push_back(k);
        } else {
            throw bench::UsageError("unknown kernel '" + a + "' (--list names them)");
        }
    }
    if (o.help || o.list) return o;
    if (o.kernels.empty())
        for (const Kernel& k : kernels())
            if (!k.cuda) o.kernels.push_back(&k);
    if (o.threads == 0) o.threads = omp_get_max_threads();
    o.timing.threads = o.threads;
    selected_variants(o);  // an unknown or unsupported --isa fails here, before any work
    bool filter = false, layouts = false, outputs = false, maps = false;
    for (const Kernel* k : o.kernels) {
        filter = filter || k->filter;
        outputs = outputs || k->outputs;
        maps = maps || !k->outputs;
        layouts = layouts || !k->layouts.empty();
    }
    if (!filter && (o.R || o.S || o.stride || o.pad))
        throw bench::UsageError("--r, --s, --stride and --pad apply to a convolution kernel, and none is selected");
    if (!outputs && (o.K || o.rows))
        throw bench::UsageError(std::string(o.K ? "--k" : "--rows") + " applies to linear-row, which is not selected");
    if (!maps && (o.N || o.H || o.W))
        throw bench::UsageError("--n, --h and --w do not apply to linear-row (its rows: --rows)");
    if (!layouts && o.layout) throw bench::UsageError("--layout applies to none of the selected kernels");
    for (const Kernel* k : o.kernels) validate(*k, problem_for(*k, o));
    return o;
}

Problem problem_for(const Kernel& k, const Options& o) {
    Problem p = k.defaults;
    p.C = o.C.value_or(p.C);
    if (!k.outputs) p.N = o.N.value_or(p.N), p.H = o.H.value_or(p.H), p.W = o.W.value_or(p.W);
    if (k.filter) {
        p.R = o.R.value_or(p.R), p.S = o.S.value_or(p.S);
        p.stride = o.stride.value_or(p.stride), p.pad = o.pad.value_or(p.pad);
    }
    if (!k.layouts.empty() && o.layout) p.layout = *o.layout;
    if (k.outputs) p.K = o.K.value_or(p.K), p.N = o.rows.value_or(p.N);
    return p;
}

std::vector<SimdVariant> selected_variants(const Options& o) {
    std::vector<SimdVariant> out;
    bool known = o.isa == "all";
    for (const SimdVariant& v : simd_variants()) {
        if (o.isa == "all") {
            if (v.supported) out.push_back(v);
        } else if (v.isa == o.isa) {
            known = true;
            if (!v.supported) throw bench::UsageError("--isa " + o.isa + ": this CPU does not support it");
            out.push_back(v);
        }
    }
    if (!known) throw bench::UsageError("--isa takes all, dispatch, x86-64-v4, x86-64-v3 or x86-64, not '" + o.isa + "'");
    return out;
}

}  // namespace ridge::kbench
