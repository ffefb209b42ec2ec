#pragma once
// Every count in the cost model is built as an expression that carries its value, its symbolic
// form and its form with numbers substituted, so `ridge explain` prints exactly the arithmetic the
// model did, never a second copy of it.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/shape.h"

namespace ridge {

struct Ex {
    int64_t v = 0;
    std::string sym;  // "N*K*P*Q"
    std::string num;  // "1*64*56*56"
    int prec = 0;     // 0 atom, 1 product, 2 sum: decides where parentheses go
};

Ex var(std::string name, int64_t value);
Ex lit(int64_t value);
Ex operator*(const Ex& a, const Ex& b);
Ex operator+(const Ex& a, const Ex& b);
Ex operator-(const Ex& a, const Ex& b);

// What one layer costs, before bytes: bytes follow from shapes and the dtype in analysis.
struct Work {
    int64_t params = 0, macs = 0, fwd_flops = 0, dgrad_flops = 0, wgrad_flops = 0;
    std::vector<int> saved_inputs;  // indices of inputs kept for backward
    bool saves_output = false;      // the output is kept for backward
    int64_t saved_extra_bytes = 0;  // statistics or indices kept beside the tensors
    std::vector<std::pair<std::string, Ex>> lines;  // quantity = formula, for explain

    int64_t note(const std::string& what, const Ex& e);  // records a line, returns e.v
};

// Inputs to an op's cost function: shapes are already inferred and checked.
struct Ctx {
    std::vector<Shape> in;
    Shape out;
    std::vector<bool> needs_grad;  // per input: does backward have to produce its gradient?
};

}  // namespace ridge
