#pragma once
// std::visit over a set of lambdas, one per alternative: overloaded{[](const Conv2d&) {...}, ...}.

namespace ridge {

template <class... F>
struct overloaded : F... {
    using F::operator()...;
};
template <class... F>
overloaded(F...) -> overloaded<F...>;

}  // namespace ridge
