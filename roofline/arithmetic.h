#pragma once
// The arithmetic stored beside a derived number in the chip database, so a reader (and a test)
// can redo it: numbers joined by + - * / and parentheses, each number optionally followed by its
// unit in brackets, which only documents it:
//     2 [stacks] * 8 [channels] * 16 [B per transfer] * 2 [GT/s]
// Evaluating it is plain double arithmetic, left to right within a precedence level.
#include <string>
#include <string_view>

namespace ridge::roofline {

struct ArithmeticResult {
    double value = 0;
    std::string error;  // empty when the text is well-formed; else what is wrong and where
    bool ok() const { return error.empty(); }
};

ArithmeticResult evaluate_arithmetic(std::string_view text);

}  // namespace ridge::roofline
