// A value or the reason there is none. C++20 has no std::expected; hostile
// input is an ordinary outcome here, so errors travel as values, never as
// exceptions.
#pragma once

#include <utility>
#include <variant>

namespace oomlens::analyzer::snapshot {

template <typename T, typename E>
class Expected {
 public:
  Expected(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Expected(E error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit by design

  bool has_value() const { return state_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  // Precondition for the value accessors: has_value(); for error(): !has_value().
  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const E& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, E> state_;
};

}  // namespace oomlens::analyzer::snapshot
