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

size_t utf8_length(std::string_view s, size_t i) {
    auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned char c = b(i);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return 0;
    for (size_t k = 1; k < n; ++k)
        if ((b(i + k) & 0xC0) != 0x80) return 0;
    if (n == 2 && c < 0xC2) return 0;                      // overlong
    if (n == 3 && c == 0xE0 && b(i + 1) < 0xA0) return 0;  // overlong
    if (n == 3 && c == 0xED && b(i + 1) >= 0xA0) return 0;  // UTF-16 surrogates
    if (n == 4 && ((c == 0xF0 && b(i + 1) < 0x90) || c > 0xF4 || (c == 0xF4 && b(i + 1) >= 0x90))) return 0;
    return n;
}

bool is_control(std::string_view s, size_t i, size_t n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (n == 1) return c < 0x20 || c == 0x7f;
    return n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0;  // U+0080..U+009F
}

}  // namespace ridge
