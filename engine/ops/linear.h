#pragma once
// Fully connected layer over the last dimension of any rank.
// x (M..., C)  w (K, C)  b (K)  y (M..., K);  M is the product of the leading dimensions.
#include "engine/formula.h"

namespace ridge {

struct Linear {
    int64_t K;  // output features
    bool bias = true;
    int64_t C = 0;  // input features the weights expect; 0 takes them from the input
};

Shape shape(const Linear& op, const std::vector<Shape>& in);
Work work(const Linear& op, const Ctx& c);

}  // namespace ridge
