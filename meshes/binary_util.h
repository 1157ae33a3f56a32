#pragma once
// Byte-level helpers shared by the binary readers/writers (VTK XML/legacy, STL, PLY, MSH).
#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace eb::mesh {

inline bool host_is_little_endian() {
  const uint16_t one = 1;
  unsigned char b;
  std::memcpy(&b, &one, 1);
  return b == 1;
}

// Reads a value of type T stored at p in the given byte order.
template <typename T>
T load(const char* p, bool little_endian) {
  char buf[sizeof(T)];
  std::memcpy(buf, p, sizeof(T));
  if (little_endian != host_is_little_endian())
    for (size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(buf[i], buf[sizeof(T) - 1 - i]);
  T v;
  std::memcpy(&v, buf, sizeof(T));
  return v;
}

template <typename T>
void store(std::ostream& out, T v, bool little_endian) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  if (little_endian != host_is_little_endian())
    for (size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(buf[i], buf[sizeof(T) - 1 - i]);
  out.write(buf, sizeof(T));
}

// Scalar type names as VTK XML spells them; size 0 for an unknown name.
size_t vtk_type_size(std::string_view type);
// Converts `count` values of VTK XML type `type` at p to double.
void convert_to_double(std::string_view type, const char* p, size_t count, bool little_endian, double* out);

// Decodes one or more concatenated base64 streams (each may end in "=" padding).
std::string base64_decode(std::string_view text);
// zlib inflate of `in` into exactly `out_size` bytes; false on corrupt data.
bool zlib_inflate(const char* in, size_t in_size, char* out, size_t out_size);

// Shortest text that reads back as the same double.
std::string format_double(double v);

}  // namespace eb::mesh
