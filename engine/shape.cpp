#include "engine/shape.h"

namespace ridge {

int64_t checked_mul(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) throw CountOverflow("a count exceeds 64 bits");
    return r;
}

int64_t checked_add(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) throw CountOverflow("a count exceeds 64 bits");
    return r;
}

int64_t numel(const Shape& s) {
    int64_t n = 1;
    for (int64_t d : s) n = checked_mul(n, d);
    return n;
}

std::string to_string(const Shape& s) {
    std::string out = "(";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
    return out + ")";
}

int64_t dtype_bytes(DType t) { return t == DType::fp32 ? 4 : 2; }

std::string_view dtype_name(DType t) {
    switch (t) {
        case DType::fp32: return "fp32";
        case DType::fp16: return "fp16";
        case DType::bf16: return "bf16";
    }
    return "?";
}

std::optional<DType> parse_dtype(std::string_view s) {
    for (DType t : {DType::fp32, DType::fp16, DType::bf16})
        if (dtype_name(t) == s) return t;
    return std::nullopt;
}

}  // namespace ridge
