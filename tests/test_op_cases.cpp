// The op case table itself (op_cases.h), which test_onednn and test_cudnn run: it names every op
// of the engine's Op variant, every activation function and every op kind a zoo net uses, each in
// a training case that every backend runs; its names are unique; a backend it leaves out is named
// with a reason. An op added to the engine without a case fails here.
#include <doctest/doctest.h>

#include <set>
#include <utility>

#include "engine/op.h"
#include "netdefs/zoo.h"
#include "op_cases.h"

using namespace ridge;
using namespace op_cases;

namespace {

const std::string backends[] = {"onednn", "cudnn"};

// The kind of each alternative of Op, in the variant's order: how a missing one is named.
template <size_t... I>
std::vector<std::string> alternative_kinds(std::index_sequence<I...>) {
    return {op_kind(Op(std::variant_alternative_t<I, Op>{}))...};
}

// Every node of every case that `backend` runs in training, by alternative and by kind.
struct Covered {
    std::set<size_t> alternatives;
    std::set<std::string> kinds;
};

Covered covered_in_training(const std::string& backend) {
    Covered c;
    for (const OpCase& oc : all()) {
        if (!oc.train || oc.refusal(backend)) continue;
        Graph g = oc.graph();
        for (const Node& n : g.nodes()) {
            c.alternatives.insert(n.op.index());
            c.kinds.insert(op_kind(n.op));
        }
    }
    return c;
}

}  // namespace

TEST_CASE("every op of the Op variant has a training case on every backend") {
    const std::vector<std::string> kinds = alternative_kinds(std::make_index_sequence<std::variant_size_v<Op>>());
    for (const std::string& backend : backends) {
        CAPTURE(backend);
        const Covered c = covered_in_training(backend);
        for (size_t i = 0; i < kinds.size(); ++i) {
            INFO("no case of tests/op_cases.cpp has a ", kinds[i], " (alternative ", i, " of Op)");
            CHECK(c.alternatives.count(i) == 1);
        }
    }
}

TEST_CASE("every activation function has a training case on every backend") {
    // fn_name names each function the engine knows and answers "?" past the last.
    std::vector<std::string> fns;
    for (int i = 0; fn_name(Activation::Fn(i)) != "?"; ++i) fns.emplace_back(fn_name(Activation::Fn(i)));
    CHECK(fns.size() >= 7);
    for (const std::string& backend : backends) {
        CAPTURE(backend);
        const Covered c = covered_in_training(backend);
        for (const std::string& fn : fns) {
            INFO("no case of tests/op_cases.cpp has a ", fn);
            CHECK(c.kinds.count(fn) == 1);
        }
    }
}

TEST_CASE("every op kind a zoo net uses has a training case on every backend") {
    std::set<std::string> used;
    for (const ZooEntry& e : zoo()) {
        Graph g = build(e, 1, e.default_res, e.default_res);
        for (const Node& n : g.nodes()) used.insert(op_kind(n.op));
    }
    CHECK(used.count("maxpool") == 1);
    CHECK(used.count("avgpool") == 1);
    for (const std::string& backend : backends) {
        CAPTURE(backend);
        const Covered c = covered_in_training(backend);
        for (const std::string& k : used) {
            INFO("a zoo net uses ", k, ", which no case of tests/op_cases.cpp has");
            CHECK(c.kinds.count(k) == 1);
        }
    }
}

TEST_CASE("cases have unique names and say what they check; a refusal names a backend and a reason") {
    std::set<std::string> names;
    for (const OpCase& c : all()) {
        CAPTURE(c.name);
        CHECK(names.insert(c.name).second);
        CHECK(!c.what.empty());
        CHECK(c.graph().model() == c.name);
        CHECK(!c.graph().nodes().empty());
        for (const Refusal& r : c.refused) {
            CHECK((r.backend == "onednn" || r.backend == "cudnn"));
            CHECK(!r.why.empty());
        }
    }
}
