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

TEST_CASE("the spearman matrix of the fixture") {
    for (bool gpu : {true, false}) {
        CAPTURE(gpu);
        Study s = fixture::study(gpu);
        RankMatrix m = spearman_matrix(s);
        size_t q = gpu ? 6 : 5;
        REQUIRE(m.labels.size() == q);
        CHECK(m.labels[0] == "CPU latency (batch 1)");
        CHECK((m.labels[1] == "GPU latency (batch 1)") == gpu);
        CHECK(m.nets.size() == 5);
        REQUIRE(m.rho.size() == q);
        for (size_t i = 0; i < q; ++i) {
            REQUIRE(m.rho[i].size() == q);
            REQUIRE(m.values[i].size() == m.nets.size());
            CHECK(m.rho[i][i] == doctest::Approx(1));
            for (size_t j = 0; j < q; ++j) {
                CHECK(m.rho[i][j] == m.rho[j][i]);
                CHECK(std::abs(m.rho[i][j]) <= 1 + 1e-12);
                CHECK(m.rho[i][j] == doctest::Approx(spearman(m.values[i], m.values[j])));
            }
        }
        // FLOPs and params of the five nets, checked independently of the matrix's own values.
        size_t flops = gpu ? 2 : 1;
        CHECK(m.labels[flops] == "FLOPs");
        for (size_t n = 0; n < m.nets.size(); ++n) {
            const NetCounts* c = s.counts_of(m.nets[n], 1);
            REQUIRE(c);
            CHECK(m.values[flops][n] == double(c->a.totals.fwd_flops));
            CHECK(m.values[flops + 1][n] == double(c->a.totals.params));
        }
    }
}

TEST_CASE("nets without a measured latency are left out of the matrix") {
    Study s = fixture::study(false);
    std::erase_if(s.runs, [](const Run& r) { return r.net == "alexnet" && r.batch == 1; });
    RankMatrix m = spearman_matrix(s);
    CHECK(m.nets == std::vector<std::string>{"resnet18", "mobilenet_v2", "squeezenet1_1", "vgg11"});
}
