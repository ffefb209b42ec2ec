// ref_dump: one training step of a zoo net through the reference executor, written out so that
// bench/torch_reference.py can rebuild the same graph in PyTorch, run it on the same weights and
// input, and compare the output, the loss and every gradient.
//
//   ref_dump NET N H W DIR
//
// DIR/graph.json   the layers: name, kind, input and output tensor ids and shapes, op fields, and
//                  each parameter's name, shape and whether it is learned; the loss
// DIR/weights.bin  every parameter tensor, layer by layer in op_params() order (fp32)
// DIR/input.bin    the input (fp32); DIR/labels.bin the labels (int32)
// DIR/output.bin   the graph's output after the training forward (fp32)
// DIR/grads.bin    the gradient of every learned tensor, in the order of weights.bin (fp32)
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "engine/backend/executor.h"
#include "engine/overloaded.h"
#include "netdefs/zoo.h"

using namespace ridge;

namespace {

std::string list(const std::vector<int64_t>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
    return s + "]";
}
std::string list(const std::vector<int>& v) { return list(std::vector<int64_t>(v.begin(), v.end())); }
std::string hw(const Hw& x) { return list(std::vector<int64_t>{x.h, x.w}); }
std::string pad(const Padding& p) { return list(std::vector<int64_t>{p.top, p.bottom, p.left, p.right}); }
std::string b(bool v) { return v ? "true" : "false"; }

// The op's own fields as JSON members, each preceded by a comma.
std::string fields(const Op& op) {
    return std::visit(
        overloaded{
            [](const Conv2d& c) {
                return cat(",\"K\":", c.K, ",\"kernel\":", hw(c.kernel), ",\"stride\":", hw(c.stride),
                           ",\"pad\":", pad(c.pad), ",\"dilation\":", hw(c.dilation), ",\"groups\":", c.G,
                           ",\"bias\":", b(c.bias));
            },
            [](const Linear& l) { return cat(",\"K\":", l.K, ",\"bias\":", b(l.bias)); },
            [](const Matmul& m) { return cat(",\"transpose_b\":", b(m.transpose_b)); },
            [](const LayerNorm& n) { return cat(",\"dim\":", n.dim); },
            [](const Pool2d& p) {
                return cat(",\"kernel\":", hw(p.kernel), ",\"stride\":", hw(p.stride), ",\"pad\":", pad(p.pad),
                           ",\"ceil_mode\":", b(p.ceil_mode), ",\"count_include_pad\":", b(p.count_include_pad));
            },
            [](const AdaptiveAvgPool2d& p) { return cat(",\"out\":", hw(p.out)); },
            [](const Scale& s) {
                std::ostringstream os;
                os.precision(17);
                os << ",\"s\":" << s.s;
                return os.str();
            },
            [](const LayerScale& s) { return cat(",\"dim\":", s.dim); },
            [](const Softmax& s) { return cat(",\"dim\":", s.dim); },
            [](const Concat& c) { return cat(",\"dim\":", c.dim); },
            [](const ChannelShuffle& c) { return cat(",\"groups\":", c.G); },
            [](const Flatten& f) { return cat(",\"start\":", f.start, ",\"end\":", f.end); },
            [](const Permute& p) { return cat(",\"order\":", list(p.order)); },
            [](const Slice& s) { return cat(",\"dim\":", s.dim, ",\"start\":", s.start, ",\"length\":", s.length); },
            [](const Select& s) { return cat(",\"dim\":", s.dim, ",\"index\":", s.index); },
            [](const auto&) { return std::string(); }},
        op);
}

void write(const std::string& path, const void* p, size_t bytes) {
    std::ofstream f(path, std::ios::binary);
    f.write(static_cast<const char*>(p), std::streamsize(bytes));
    if (!f) throw std::runtime_error("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 6) {
        std::cerr << "usage: ref_dump NET N H W DIR  (DIR must exist)\n";
        return 2;
    }
    try {
        const ZooEntry* e = find_net(argv[1]);
        if (!e) throw std::invalid_argument(cat("unknown net '", argv[1], "'"));
        const std::string dir = argv[5];
        Graph g = build(*e, std::stoll(argv[2]), std::stoll(argv[3]), std::stoll(argv[4]));
        const Weights w = init_weights(g, 1);
        const HostTensor x = random_input(g.input_shape(), 2);
        const Shape out = g.tensor(g.output()).shape;
        const std::vector<int32_t> labels = random_labels(out[0], numel(out) / out[0], 3);

        auto ex = make_executor("reference", g, {.mode = Mode::train});
        ex->load(w);
        ex->set_input(x, labels);
        ex->forward();
        const float loss = ex->backward();

        std::ostringstream js;
        js.precision(9);
        js << "{\"model\":\"" << g.model() << "\",\"loss\":";
        if (std::isfinite(loss)) js << loss;
        else js << "null";  // JSON has no NaN: a diverged step's loss
        js << ",\"input_shape\":" << list(g.input_shape()) << ",\"output\":" << g.output() << ",\"nodes\":[\n";
        std::vector<float> weights, grads;
        const Weights dw = ex->gradients();
        for (size_t i = 0; i < g.nodes().size(); ++i) {
            const Node& n = g.nodes()[i];
            js << (i ? ",\n" : "") << "{\"name\":\"" << n.name << "\",\"kind\":\"" << op_kind(n.op)
               << "\",\"inputs\":" << list(n.inputs) << ",\"output\":" << n.output
               << ",\"shape\":" << list(g.tensor(n.output).shape) << fields(n.op) << ",\"params\":[";
            const std::vector<ParamSpec> specs = g.params(n);
            for (size_t j = 0; j < specs.size(); ++j) {
                js << (j ? "," : "") << "{\"name\":\"" << specs[j].name << "\",\"shape\":" << list(specs[j].shape)
                   << ",\"learned\":" << b(specs[j].learned) << "}";
                weights.insert(weights.end(), w[i][j].v.begin(), w[i][j].v.end());
                if (specs[j].learned) grads.insert(grads.end(), dw[i][j].v.begin(), dw[i][j].v.end());
            }
            js << "]}";
        }
        js << "\n]}\n";
        std::ofstream(dir + "/graph.json") << js.str();
        write(dir + "/weights.bin", weights.data(), weights.size() * 4);
        write(dir + "/grads.bin", grads.data(), grads.size() * 4);
        write(dir + "/input.bin", x.data(), size_t(x.size()) * 4);
        write(dir + "/labels.bin", labels.data(), labels.size() * 4);
        const HostTensor y = ex->output();
        write(dir + "/output.bin", y.data(), size_t(y.size()) * 4);
        std::cout << g.model() << ": loss " << loss << ", " << weights.size() << " weights, " << grads.size()
                  << " gradients written to " << dir << "\n";
    } catch (const std::exception& err) {
        std::cerr << "ref_dump: " << err.what() << "\n";
        return 1;
    }
    return 0;
}
