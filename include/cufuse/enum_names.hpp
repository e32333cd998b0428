// include/cufuse/enum_names.hpp: an enum and the names of its enumerators written once, side
// by side, as an X-macro list, so that an enumerator cannot be added without its name (the
// one name table per enum that replaces a switch of `case E::X: return "x";` lines).
//
//   #define CUFUSE_COLORS(X) X(Red, "red") X(Green, "green")
//   enum class Color : uint8_t { CUFUSE_COLORS(CUFUSE_ENUMERATOR) };
//   inline const char* color_name(Color c) { return CUFUSE_ENUM_NAME(CUFUSE_COLORS, c); }
#pragma once

#include <cstddef>

#define CUFUSE_ENUMERATOR(e, name) e,
#define CUFUSE_ENUMERATOR_NAME(e, name) name,
// The name of `value` in LIST ("?" for a value outside the enum).
#define CUFUSE_ENUM_NAME(LIST, value)                                                          \
  ::cufuse::enum_names_detail::lookup(static_cast<std::size_t>(value),                          \
                                      ::cufuse::enum_names_detail::Names{LIST(CUFUSE_ENUMERATOR_NAME)})

namespace cufuse::enum_names_detail {
template <std::size_t N>
struct Names {
  const char* at[N];
};
template <class... S>
Names(S...) -> Names<sizeof...(S)>;
template <std::size_t N>
constexpr const char* lookup(std::size_t i, const Names<N>& names) {
  return i < N ? names.at[i] : "?";
}
}  // namespace cufuse::enum_names_detail
