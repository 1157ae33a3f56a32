#include "meshes/binary_util.h"

#include <array>
#include <charconv>

#include <zlib.h>

namespace eb::mesh {

size_t vtk_type_size(std::string_view t) {
  if (t == "Float64" || t == "Int64" || t == "UInt64") return 8;
  if (t == "Float32" || t == "Int32" || t == "UInt32") return 4;
  if (t == "Int16" || t == "UInt16") return 2;
  if (t == "Int8" || t == "UInt8" || t == "Char" || t == "UChar") return 1;
  return 0;
}

void convert_to_double(std::string_view t, const char* p, size_t count, bool le, double* out) {
  const size_t s = vtk_type_size(t);
  for (size_t i = 0; i < count; ++i, p += s) {
    if (t == "Float64") out[i] = load<double>(p, le);
    else if (t == "Float32") out[i] = load<float>(p, le);
    else if (t == "Int64") out[i] = double(load<int64_t>(p, le));
    else if (t == "UInt64") out[i] = double(load<uint64_t>(p, le));
    else if (t == "Int32") out[i] = load<int32_t>(p, le);
    else if (t == "UInt32") out[i] = load<uint32_t>(p, le);
    else if (t == "Int16") out[i] = load<int16_t>(p, le);
    else if (t == "UInt16") out[i] = load<uint16_t>(p, le);
    else if (t == "Int8" || t == "Char") out[i] = load<int8_t>(p, le);
    else out[i] = load<uint8_t>(p, le);
  }
}

std::string base64_decode(std::string_view text) {
  static const auto table = [] {
    std::array<int8_t, 256> t{};
    t.fill(-1);
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i) t[size_t(uint8_t(alphabet[i]))] = int8_t(i);
    return t;
  }();
  std::string out;
  out.reserve(text.size() / 4 * 3);
  uint32_t acc = 0;
  int bits = 0;
  size_t i = 0;
  for (; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '=') {
      // Padding ends one base64 stream; VTK encodes a block header and its data separately.
      acc = 0;
      bits = 0;
      continue;
    }
    const int v = table[c];
    if (v < 0) continue;  // whitespace
    acc = (acc << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(char((acc >> bits) & 0xff));
    }
  }
  return out;
}

bool zlib_inflate(const char* in, size_t in_size, char* out, size_t out_size) {
  uLongf dest = uLongf(out_size);
  const int rc = uncompress(reinterpret_cast<Bytef*>(out), &dest, reinterpret_cast<const Bytef*>(in), uLong(in_size));
  return rc == Z_OK && dest == out_size;
}

std::string format_double(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace eb::mesh
