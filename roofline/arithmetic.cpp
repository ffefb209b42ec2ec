#include "roofline/arithmetic.h"

#include <cctype>
#include <charconv>
#include <cmath>

namespace ridge::roofline {

namespace {

// Recursive descent over expr := term (('+'|'-') term)*, term := factor (('*'|'/') factor)*,
// factor := number [unit]? | '(' expr ')'. Errors carry the 1-based column.
struct Parser {
    std::string_view s;
    size_t i = 0;
    std::string error;

    void skip() {
        while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    }
    bool fail(const std::string& what) {
        if (error.empty()) error = what + " at column " + std::to_string(i + 1);
        return false;
    }
    bool expr(double& v) {
        if (!term(v)) return false;
        for (skip(); i < s.size() && (s[i] == '+' || s[i] == '-'); skip()) {
            char op = s[i++];
            double r = 0;
            if (!term(r)) return false;
            v = op == '+' ? v + r : v - r;
        }
        return true;
    }
    bool term(double& v) {
        if (!factor(v)) return false;
        for (skip(); i < s.size() && (s[i] == '*' || s[i] == '/'); skip()) {
            char op = s[i++];
            double r = 0;
            if (!factor(r)) return false;
            if (op == '/' && r == 0) return fail("division by zero");
            v = op == '*' ? v * r : v / r;
        }
        return true;
    }
    bool factor(double& v) {
        skip();
        if (i < s.size() && s[i] == '(') {
            ++i;
            if (!expr(v)) return false;
            skip();
            if (i >= s.size() || s[i] != ')') return fail("expected ')'");
            ++i;
            return true;
        }
        auto [end, ec] = std::from_chars(s.data() + i, s.data() + s.size(), v);
        if (ec != std::errc() || !std::isfinite(v)) return fail("expected a number");
        i = size_t(end - s.data());
        skip();
        if (i < s.size() && s[i] == '[') {
            size_t close = s.find(']', i);
            if (close == std::string_view::npos) return fail("unterminated '['");
            i = close + 1;
        }
        return true;
    }
};

}  // namespace

ArithmeticResult evaluate_arithmetic(std::string_view text) {
    Parser p{text, 0, {}};
    ArithmeticResult r;
    p.skip();
    if (p.i == text.size()) {
        r.error = "is empty";
        return r;
    }
    if (p.expr(r.value)) {
        p.skip();
        if (p.i != text.size()) {
            // One byte of a multi-byte character quoted alone would make the message invalid UTF-8
            // (the fuzz test found it); anything but printable ASCII is named by its code.
            unsigned char c = static_cast<unsigned char>(text[p.i]);
            static const char* hex = "0123456789abcdef";
            p.fail(c >= 0x20 && c < 0x7f ? std::string("unexpected '") + char(c) + "'"
                                         : std::string("unexpected byte 0x") + hex[c >> 4] + hex[c & 15]);
        }
    }
    r.error = p.error;
    return r;
}

}  // namespace ridge::roofline
