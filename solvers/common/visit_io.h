#pragma once
// Strict reading and writing of structs that name their keys once, in a visit() function:
//   template <class V> void visit(V& v, MyOptions& o) { v("cycles", o.cycles); ... }
// The scenario (solvers/common/scenario.cpp) and the method-owned sections
// (solvers/common/method_options.h) are read and written with these, so the reader, the writer
// and the documentation walk the same lists. visit() is found by argument-dependent lookup, so
// it lives in the namespace of the struct it describes.
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "meshes/errors.h"
#include "meshes/mesh.h"

namespace eb {

namespace visit_io_detail {
template <class T> struct IsVector : std::false_type {};
template <class T> struct IsVector<std::vector<T>> : std::true_type {};
template <class T> struct IsOptional : std::false_type {};
template <class T> struct IsOptional<std::optional<T>> : std::true_type {};

inline std::string join_key(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

inline const char* json_type_name(const nlohmann::json& j) {
  if (j.is_boolean()) return "a boolean";
  if (j.is_number_integer()) return "an integer";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_array()) return "an array";
  if (j.is_object()) return "a table";
  return "null";
}
}  // namespace visit_io_detail

// Fills a struct from a JSON object, remembering which keys were consumed; finish() throws
// InputError naming the dotted key of anything left over. Messages start with `origin` (the
// file or scenario they come from).
class StrictReader {
 public:
  StrictReader(const nlohmann::json& obj, std::string path, const std::string& origin)
      : obj_(obj), path_(std::move(path)), origin_(origin) {}

  template <class T> void operator()(const char* key, T& value) {
    seen_.insert(key);
    auto it = obj_.find(key);
    if (it == obj_.end()) return;
    read(*it, value, visit_io_detail::join_key(path_, key));
  }

  // Keys of the object that no visited field consumed.
  std::vector<std::string> unknown_keys() const {
    std::vector<std::string> out;
    for (auto it = obj_.begin(); it != obj_.end(); ++it)
      if (!seen_.count(it.key())) out.push_back(it.key());
    return out;
  }

  void finish() const {
    const auto unknown = unknown_keys();
    if (!unknown.empty()) throw InputError(unknown_key_message(unknown.front()));
  }

  std::string unknown_key_message(const std::string& key) const {
    std::ostringstream known;
    for (const auto& k : seen_) known << (known.tellp() ? ", " : "") << k;
    return origin_ + ": unknown key '" + visit_io_detail::join_key(path_, key) + "' (valid keys here: " +
           (seen_.empty() ? std::string("none") : known.str()) + ")";
  }

  template <class T> void read(const nlohmann::json& j, T& value, const std::string& key) const {
    using namespace visit_io_detail;
    if constexpr (std::is_same_v<T, bool>) {
      if (!j.is_boolean()) fail(key, "a boolean (true/false)", j);
      value = j.get<bool>();
    } else if constexpr (std::is_same_v<T, int>) {
      if (!j.is_number_integer()) fail(key, "an integer", j);
      const auto v = j.get<int64_t>();
      if (v < INT32_MIN || v > INT32_MAX) throw InputError(origin_ + ": key '" + key + "' is out of range");
      value = int(v);
    } else if constexpr (std::is_same_v<T, double>) {
      if (!j.is_number()) fail(key, "a number", j);
      value = j.get<double>();
      if (!std::isfinite(value)) throw InputError(origin_ + ": key '" + key + "' must be finite");
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!j.is_string()) fail(key, "a string", j);
      value = j.get<std::string>();
    } else if constexpr (std::is_same_v<T, mesh::Vec3>) {
      if (!j.is_array() || j.size() != 3) fail(key, "an array of 3 numbers", j);
      for (int d = 0; d < 3; ++d) read(j[d], value[d], key + "[" + std::to_string(d) + "]");
    } else if constexpr (IsOptional<T>::value) {
      typename T::value_type inner{};
      read(j, inner, key);
      value = inner;
    } else if constexpr (IsVector<T>::value) {
      if (!j.is_array()) fail(key, "an array", j);
      value.clear();
      for (size_t i = 0; i < j.size(); ++i) {
        typename T::value_type item{};
        read(j[i], item, key + "." + std::to_string(i));
        value.push_back(std::move(item));
      }
    } else {
      if (!j.is_object()) fail(key, "a table", j);
      StrictReader sub(j, key, origin_);
      visit(sub, value);
      sub.finish();
    }
  }

 private:
  [[noreturn]] void fail(const std::string& key, const char* expected, const nlohmann::json& got) const {
    throw InputError(origin_ + ": key '" + key + "' must be " + expected + ", got " +
                     visit_io_detail::json_type_name(got) + " (" +
                         got.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + ")");
  }
  const nlohmann::json& obj_;
  std::string path_;
  const std::string& origin_;
  std::set<std::string> seen_;
};

// Writes every field of a struct (unset optionals and unbounded box corners left out).
class FieldWriter {
 public:
  explicit FieldWriter(nlohmann::json& out) : out_(out) { out_ = nlohmann::json::object(); }
  template <class T> void operator()(const char* key, T& value) {
    using namespace visit_io_detail;
    if constexpr (IsOptional<T>::value) {
      if (value) out_[key] = write(*value);
    } else if constexpr (std::is_same_v<T, mesh::Vec3>) {
      // Unbounded box corners are the defaults; leaving them out keeps shown files readable.
      if (!(std::abs(value[0]) >= 1e299 && std::abs(value[1]) >= 1e299 && std::abs(value[2]) >= 1e299))
        out_[key] = write(value);
    } else {
      out_[key] = write(value);
    }
  }
  template <class T> static nlohmann::json write(T& value) {
    using namespace visit_io_detail;
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int> || std::is_same_v<T, double> ||
                  std::is_same_v<T, std::string>) {
      return value;
    } else if constexpr (std::is_same_v<T, mesh::Vec3>) {
      return nlohmann::json::array({value[0], value[1], value[2]});
    } else if constexpr (IsVector<T>::value) {
      nlohmann::json a = nlohmann::json::array();
      for (auto& item : value) a.push_back(write(item));
      return a;
    } else {
      nlohmann::json o;
      FieldWriter w(o);
      visit(w, value);
      return o;
    }
  }

 private:
  nlohmann::json& out_;
};

}  // namespace eb
