#pragma once
// A minimal JSON reader for tests: enough to prove ridge's output parses and to read its numbers.
// Numbers keep their text, so 64-bit counts compare exactly.
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace testjson {

struct Value {
    enum class Kind { null, boolean, number, string, array, object } kind = Kind::null;
    std::string text;  // number or string
    bool b = false;
    std::vector<Value> items;
    std::vector<std::pair<std::string, Value>> fields;

    const Value& operator[](const std::string& key) const {
        for (const auto& [k, v] : fields)
            if (k == key) return v;
        throw std::runtime_error("no key " + key);
    }
    bool has(const std::string& key) const {
        for (const auto& [k, v] : fields)
            if (k == key) return true;
        return false;
    }
    long long i64() const { return std::stoll(text); }
    double num() const { return std::stod(text); }
};

class Parser {
public:
    explicit Parser(const std::string& s) : s_(s) {}
    Value parse() {
        Value v = value();
        ws();
        if (i_ != s_.size()) fail("trailing characters");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& why) { throw std::runtime_error("json: " + why + " at " + std::to_string(i_)); }
    void ws() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
    }
    char peek() {
        ws();
        if (i_ >= s_.size()) fail("unexpected end");
        return s_[i_];
    }
    void expect(char c) {
        if (peek() != c) fail(std::string("expected ") + c);
        ++i_;
    }
    std::string str() {
        expect('"');
        std::string out;
        while (i_ < s_.size() && s_[i_] != '"') {
            if (s_[i_] == '\\') {
                ++i_;
                if (i_ >= s_.size()) fail("bad escape");
                char e = s_[i_];
                if (e == 'n') out += '\n';
                else if (e == 'u') i_ += 4, out += '?';
                else out += e;
            } else {
                out += s_[i_];
            }
            ++i_;
        }
        if (i_ >= s_.size()) fail("unterminated string");
        ++i_;
        return out;
    }
    Value value() {
        Value v;
        char c = peek();
        if (c == '{') {
            v.kind = Value::Kind::object;
            ++i_;
            if (peek() == '}') return ++i_, v;
            while (true) {
                std::string k = str();
                expect(':');
                v.fields.emplace_back(k, value());
                if (peek() == ',') { ++i_; continue; }
                expect('}');
                return v;
            }
        }
        if (c == '[') {
            v.kind = Value::Kind::array;
            ++i_;
            if (peek() == ']') return ++i_, v;
            while (true) {
                v.items.push_back(value());
                if (peek() == ',') { ++i_; continue; }
                expect(']');
                return v;
            }
        }
        if (c == '"') {
            v.kind = Value::Kind::string;
            v.text = str();
            return v;
        }
        if (s_.compare(i_, 4, "true") == 0) return i_ += 4, v.kind = Value::Kind::boolean, v.b = true, v;
        if (s_.compare(i_, 5, "false") == 0) return i_ += 5, v.kind = Value::Kind::boolean, v;
        if (s_.compare(i_, 4, "null") == 0) return i_ += 4, v;
        size_t start = i_;
        while (i_ < s_.size() && std::string("+-0123456789.eE").find(s_[i_]) != std::string::npos) ++i_;
        if (start == i_) fail("unexpected character");
        v.kind = Value::Kind::number;
        v.text = s_.substr(start, i_ - start);
        return v;
    }
    const std::string& s_;
    size_t i_ = 0;
};

inline Value parse(const std::string& s) { return Parser(s).parse(); }

}  // namespace testjson
