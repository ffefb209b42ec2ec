// The zoo against torchvision: parameter counts and MACs of conv, linear and attention matmuls
// must equal what torchvision's own modules do, at every batch/resolution pair of the table.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "engine/analysis.h"
#include "netdefs/zoo.h"

using namespace ridge;

namespace {
struct Row {
    std::string net;
    int64_t batch, height, width, params, macs;
};

// tests/data/torchvision_reference.csv: produced by `bench/torch_count.py --reference` with
// Debian's torch 1.13 / torchvision 0.14 (forward hooks on the real modules); see its header line.
std::vector<Row> reference() {
    std::ifstream f(RIDGE_TEST_DATA "/torchvision_reference.csv");
    REQUIRE_MESSAGE(f.good(), "cannot open torchvision_reference.csv");
    std::vector<Row> rows;
    std::string line;
    while (std::getline(f, line)) {
        if (line.empty() || line[0] == '#' || line.starts_with("net,")) continue;
        std::istringstream in(line);
        Row r;
        char comma;
        std::getline(in, r.net, ',');
        in >> r.batch >> comma >> r.height >> comma >> r.width >> comma >> r.params >> comma >> r.macs;
        REQUIRE_MESSAGE(!in.fail(), "malformed reference line: " << line);
        rows.push_back(r);
    }
    return rows;
}
}  // namespace

TEST_CASE("every zoo net matches torchvision's params and MACs at every reference shape") {
    std::vector<Row> rows = reference();
    // 31 nets at batch 1 and 2 at their default resolution (62 rows), and the 30 that accept
    // another size (all but ViT) at batch 1 of 160x160 and batch 3 of 193x257 (60 rows): a file cut
    // short or a line the parser skipped shows here.
    CHECK(rows.size() == 122);
    std::map<std::string, int> seen;
    for (const Row& r : rows) {
        const ZooEntry* e = find_net(r.net);
        REQUIRE_MESSAGE(e, "reference net " << r.net << " is not in the zoo");
        CAPTURE(r.net);
        CAPTURE(r.batch);
        CAPTURE(r.height);
        CAPTURE(r.width);
        Analysis a = analyze(build(*e, r.batch, r.height, r.width), DType::fp32);
        CHECK(a.totals.params == r.params);
        CHECK(a.totals.macs == r.macs);
        ++seen[r.net];
    }
    // Every net of the zoo is covered, at several shapes where its architecture allows.
    for (const ZooEntry& e : zoo()) {
        CAPTURE(e.name);
        CHECK(seen[std::string(e.name)] >= 2);
    }
}

// tests/data/torchvision_min_resolution.csv: the smallest square input torchvision's module runs
// on, by `bench/torch_count.py --min-res` (trying every side from 1 up). A check of the shape rules
// at their edges: ceil_mode pooling, padding, kernels meeting small maps. ViT is absent: torchvision
// accepts 224x224 alone.
TEST_CASE("each net's smallest input equals torchvision's") {
    std::ifstream f(RIDGE_TEST_DATA "/torchvision_min_resolution.csv");
    REQUIRE(f.good());
    std::string line;
    int rows = 0;
    while (std::getline(f, line)) {
        if (line.empty() || line[0] == '#' || line.starts_with("net,")) continue;
        std::string net = line.substr(0, line.find(','));
        int64_t side = std::stoll(line.substr(line.find(',') + 1));
        const ZooEntry* e = find_net(net);
        REQUIRE_MESSAGE(e, net);
        CAPTURE(net);
        CHECK(min_resolution(*e) == side);
        ++rows;
    }
    CHECK(rows == 30);
}

TEST_CASE("the zoo has the 31 nets of the issue, each building at its default resolution") {
    CHECK(zoo().size() == 31);
    for (const ZooEntry& e : zoo()) {
        CAPTURE(e.name);
        Graph g = build(e, 1, e.default_res, e.default_res);
        CHECK(g.tensor(g.output()).shape == Shape{1, 1000});
    }
}

// torchvision's modules built with num_classes=4 (python3-torchvision 0.14:
// sum(p.numel() for p in getattr(torchvision.models, name)(num_classes=4).parameters())).
TEST_CASE("a classifier for another number of classes, as torchvision's num_classes") {
    const std::pair<const char*, int64_t> nets[] = {{"resnet18", 11178564},
                                                    {"mobilenet_v2", 2228996},
                                                    {"squeezenet1_0", 737476},
                                                    {"vit_b_16", 85801732},
                                                    {"densenet121", 6957956}};
    for (auto [name, params] : nets) {
        CAPTURE(name);
        const ZooEntry& e = *find_net(name);
        Graph g = build(e, 2, e.default_res, e.default_res, 4);
        CHECK(g.tensor(g.output()).shape == Shape{2, 4});
        CHECK(analyze(g, DType::fp32).totals.params == params);
    }
}
