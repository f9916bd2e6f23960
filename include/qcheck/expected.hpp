// Result type for I/O and parsing: a value or a one-line error message.
//
// Library code never throws for bad input; it returns Expected<T>. Exceptions are reserved for
// the CLI boundary (argument parsing) and for programming errors.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace qcheck {

// Wraps an error so that Expected<std::string> stays unambiguous.
struct Unexpected
{
  std::string message;
};

inline Unexpected
unexpected(std::string message)
{
  return Unexpected{std::move(message)};
}

template<typename T>
class Expected
{
public:
  Expected(T value) : m_state(std::in_place_index<0>, std::move(value)) {}
  Expected(Unexpected error) : m_state(std::in_place_index<1>, std::move(error.message)) {}

  bool has_value() const noexcept { return m_state.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() &
  {
    assert(has_value());
    return std::get<0>(m_state);
  }
  const T& value() const&
  {
    assert(has_value());
    return std::get<0>(m_state);
  }
  T&& value() &&
  {
    assert(has_value());
    return std::get<0>(std::move(m_state));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // The error message; only valid when !has_value().
  const std::string& error() const
  {
    assert(!has_value());
    return std::get<1>(m_state);
  }

private:
  std::variant<T, std::string> m_state;
};

// Expected<void>: success or an error message.
template<>
class Expected<void>
{
public:
  Expected() = default;
  Expected(Unexpected error) : m_error(std::move(error.message)), m_failed(true) {}

  bool has_value() const noexcept { return !m_failed; }
  explicit operator bool() const noexcept { return has_value(); }
  const std::string& error() const
  {
    assert(m_failed);
    return m_error;
  }

private:
  std::string m_error;
  bool m_failed = false;
};

// Checked arithmetic for numbers read from files. Return false on overflow.
inline bool
checked_add(unsigned long long a, unsigned long long b, unsigned long long& out)
{
  return !__builtin_add_overflow(a, b, &out);
}

inline bool
checked_mul(unsigned long long a, unsigned long long b, unsigned long long& out)
{
  return !__builtin_mul_overflow(a, b, &out);
}

} // namespace qcheck
