// Spearman's rank correlation against values computed by hand, and its matrix over the fixture.
#include <doctest/doctest.h>

#include <cmath>

#include "report/spearman.h"
#include "study_fixture.h"

using namespace ridge::report;

TEST_CASE("average ranks: ties share the mean of the ranks they span") {
    CHECK(average_ranks({30, 10, 20}) == std::vector<double>{3, 1, 2});
    CHECK(average_ranks({10, 20, 20, 30}) == std::vector<double>{1, 2.5, 2.5, 4});
    CHECK(average_ranks({5, 5, 5}) == std::vector<double>{2, 2, 2});
    CHECK(average_ranks({7, 1, 7, 1, 7}) == std::vector<double>{4, 1.5, 4, 1.5, 4});
}

TEST_CASE("spearman against hand computations") {
    SUBCASE("same order, reversed order, any monotone transform") {
        CHECK(spearman({1, 2, 3, 4}, {10, 20, 30, 40}) == doctest::Approx(1));
        CHECK(spearman({1, 2, 3, 4}, {40, 30, 20, 10}) == doctest::Approx(-1));
        CHECK(spearman({1, 2, 3, 4}, {1, 8, 27, 1000}) == doctest::Approx(1));
    }
    SUBCASE("no ties") {
        // x {1,2,3,4,5}, y {2,1,4,3,5}: rank differences {-1,1,-1,1,0}, sum of squares 4,
        // rho = 1 - 6*4 / (5*(25-1)) = 1 - 24/120 = 0.8.
        CHECK(spearman({1, 2, 3, 4, 5}, {2, 1, 4, 3, 5}) == doctest::Approx(0.8));
        // Symmetric in its arguments.
        CHECK(spearman({2, 1, 4, 3, 5}, {1, 2, 3, 4, 5}) == doctest::Approx(0.8));
    }
    SUBCASE("ties: Pearson of the average ranks") {
        // x {1,2,2,3} ranks {1,2.5,2.5,4}; y {1,3,2,4} ranks {1,3,2,4}; both means 2.5.
        // Deviations x {-1.5,0,0,1.5}, y {-1.5,0.5,-0.5,1.5}:
        // sxy = 2.25+0+0+2.25 = 4.5, sxx = 4.5, syy = 2.25+0.25+0.25+2.25 = 5,
        // rho = 4.5 / sqrt(4.5*5) = sqrt(0.9) = 0.948683298.
        // (The no-ties shortcut 1 - 6*sum(d^2)/(n(n^2-1)) would give 1 - 6*0.5/60 = 0.95.)
        CHECK(spearman({1, 2, 2, 3}, {1, 3, 2, 4}) == doctest::Approx(0.948683298));
    }
    SUBCASE("undefined: constant input or fewer than two values give NaN") {
        CHECK(std::isnan(spearman({3, 3, 3}, {1, 2, 3})));
        CHECK(std::isnan(spearman({1, 2, 3}, {0, 0, 0})));
        CHECK(std::isnan(spearman({1}, {2})));
        CHECK(std::isnan(spearman({}, {})));
    }
}

TEST_CASE("the spearman matrix of the fixture, against ranks worked out by hand") {
    // The fixture's five nets in study order: resnet18, mobilenet_v2, squeezenet1_1, alexnet, vgg11.
    // Their values (fixture times: FLOPs and bytes at the fixture's rates; counts at batch 1):
    //   CPU latency s   0.0363   0.0139   0.00903  0.0247   0.161    ranks 4 2 1 3 5
    //   GPU latency s   5.39e-4  7.62e-4  3.42e-4  3.30e-4  1.33e-3  ranks 3 4 2 1 5
    //   FLOPs           3.64G    627M     706M     1.43G    15.2G    ranks 4 1 2 3 5
    //   params          11.7M    3.50M    1.24M    61.1M    133M     ranks 3 2 1 4 5
    //   bytes           117M     173M     61.9M    254M     663M     ranks 2 3 1 4 5
    //   intensity       31.1     3.63     11.4     5.64     23.0     ranks 5 1 3 2 4
    // No ties, so rho = 1 - 6 sum(d^2) / (5 (25 - 1)) = 1 - sum(d^2) / 20 over the rank differences d:
    //   CPU-FLOPs d (0,1,-1,0,0) 2 -> 0.9     CPU-params (1,0,0,-1,0) 2 -> 0.9
    //   CPU-bytes (2,-1,0,-1,0) 6 -> 0.7      CPU-intensity (-1,1,-2,1,1) 8 -> 0.6
    //   FLOPs-params (1,-1,1,-1,0) 4 -> 0.8   FLOPs-bytes (2,-2,1,-1,0) 10 -> 0.5
    //   FLOPs-intensity (-1,0,-1,1,1) 4 -> 0.8
    //   params-bytes (1,-1,0,0,0) 2 -> 0.9    params-intensity (-2,1,-2,2,1) 14 -> 0.3
    //   bytes-intensity (-3,2,-2,2,1) 22 -> -0.1
    //   GPU-CPU (-1,2,1,-2,0) 10 -> 0.5       GPU-FLOPs (-1,3,0,-2,0) 14 -> 0.3
    //   GPU-params (0,2,1,-3,0) 14 -> 0.3     GPU-bytes (1,1,1,-3,0) 12 -> 0.4
    //   GPU-intensity (-2,3,-1,-1,1) 16 -> 0.2
    const std::vector<std::vector<double>> cpu_only = {{1, 0.9, 0.9, 0.7, 0.6},
                                                       {0.9, 1, 0.8, 0.5, 0.8},
                                                       {0.9, 0.8, 1, 0.9, 0.3},
                                                       {0.7, 0.5, 0.9, 1, -0.1},
                                                       {0.6, 0.8, 0.3, -0.1, 1}};
    const std::vector<std::vector<double>> with_gpu = {{1, 0.5, 0.9, 0.9, 0.7, 0.6},
                                                       {0.5, 1, 0.3, 0.3, 0.4, 0.2},
                                                       {0.9, 0.3, 1, 0.8, 0.5, 0.8},
                                                       {0.9, 0.3, 0.8, 1, 0.9, 0.3},
                                                       {0.7, 0.4, 0.5, 0.9, 1, -0.1},
                                                       {0.6, 0.2, 0.8, 0.3, -0.1, 1}};
    for (bool gpu : {true, false}) {
        CAPTURE(gpu);
        Study s = fixture::study(gpu);
        RankMatrix m = spearman_matrix(s);
        const auto& expect = gpu ? with_gpu : cpu_only;
        std::vector<std::string> labels = {"CPU latency (batch 1)", "FLOPs", "params", "bytes", "intensity"};
        if (gpu) labels.insert(labels.begin() + 1, "GPU latency (batch 1)");
        CHECK(m.labels == labels);
        CHECK(m.nets == std::vector<std::string>{"resnet18", "mobilenet_v2", "squeezenet1_1", "alexnet", "vgg11"});
        REQUIRE(m.rho.size() == expect.size());
        for (size_t i = 0; i < expect.size(); ++i) {
            REQUIRE(m.rho[i].size() == expect.size());
            for (size_t j = 0; j < expect.size(); ++j) {
                CAPTURE(m.labels[i]);
                CAPTURE(m.labels[j]);
                CHECK(m.rho[i][j] == doctest::Approx(expect[i][j]).epsilon(1e-12));
            }
        }
        // The values behind the ranks: the analytic ones are the nets' batch-1 counts.
        size_t flops = gpu ? 2 : 1;
        for (size_t n = 0; n < m.nets.size(); ++n) {
            const NetCounts* c = s.counts_of(m.nets[n], 1);
            REQUIRE(c);
            CHECK(m.values[0][n] == s.run_of("cpu", m.nets[n], ridge::Mode::infer, 1)->step.median);
            CHECK(m.values[flops][n] == double(c->a.totals.fwd_flops));
            CHECK(m.values[flops + 1][n] == double(c->a.totals.params));
            CHECK(m.values[flops + 2][n] == double(c->a.totals.fwd_traffic_bytes));
        }
    }
}

TEST_CASE("nets without a measured latency are left out of the matrix") {
    Study s = fixture::study(false);
    std::erase_if(s.runs, [](const Run& r) { return r.net == "alexnet" && r.batch == 1; });
    RankMatrix m = spearman_matrix(s);
    CHECK(m.nets == std::vector<std::string>{"resnet18", "mobilenet_v2", "squeezenet1_1", "vgg11"});
}
