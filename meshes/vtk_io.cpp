// Our own VTK XML writer (appended raw binary, optionally zlib-compressed in independent
// blocks) and reader. It is used on every build: VTK is absent on the GPU machines, and the
// python3-vtk9 test checks that VTK itself reads what we write.
#include "meshes/vtk_io.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include <zlib.h>

#include "meshes/atomic_file.h"
#include "meshes/binary_util.h"
#include "meshes/errors.h"
#include "meshes/formats.h"

namespace eb::mesh {
namespace {

constexpr size_t kBlockSize = size_t(1) << 18;
// Deflate never compresses better than 1032:1, so a compressed array cannot hold more bytes
// than that many times its own size; larger announced sizes are refused before allocating.
constexpr uint64_t kMaxInflateRatio = 1032;

// A frame outside the .pvd's folder brings folder names, which may hold any character, into
// the file attribute.
std::string xml_attribute(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

struct ArrayView {
  std::string name;     // empty: no Name attribute
  std::string type;     // VTK XML scalar type
  int components = 1;
  std::string bytes;    // encoded block (header + data) for the appended section
};

// Encodes raw bytes as one appended-data block with UInt64 headers.
std::string encode_block(const char* data, size_t size, bool compress) {
  std::ostringstream out;
  if (!compress) {
    store<uint64_t>(out, size, true);
    out.write(data, std::streamsize(size));
    return out.str();
  }
  const size_t nblocks = std::max<size_t>(1, (size + kBlockSize - 1) / kBlockSize);
  std::vector<std::string> blocks(nblocks);
  // Blocks are independent zlib streams, so they compress in parallel.
#pragma omp parallel for schedule(dynamic)
  for (long b = 0; b < long(nblocks); ++b) {
    const size_t begin = size_t(b) * kBlockSize, len = std::min(kBlockSize, size - std::min(size, begin));
    uLongf cap = compressBound(uLong(len));
    std::string buf(cap, '\0');
    // Level 1: the files are written every frame and are read back far less often.
    compress2(reinterpret_cast<Bytef*>(buf.data()), &cap, reinterpret_cast<const Bytef*>(data + begin), uLong(len), 1);
    buf.resize(cap);
    blocks[size_t(b)] = std::move(buf);
  }
  const size_t last = size == 0 ? 0 : size - (nblocks - 1) * kBlockSize;
  store<uint64_t>(out, nblocks, true);
  store<uint64_t>(out, kBlockSize, true);
  store<uint64_t>(out, last, true);
  for (const auto& b : blocks) store<uint64_t>(out, b.size(), true);
  for (const auto& b : blocks) out.write(b.data(), std::streamsize(b.size()));
  return out.str();
}

template <typename T>
ArrayView make_array(std::string name, const char* type, int components, const std::vector<T>& v, bool compress) {
  return {std::move(name), type, components,
          encode_block(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T), compress)};
}

ArrayView field_array(const Field& f, size_t count, const char* where, bool compress) {
  if (f.components < 1 || f.values.size() != size_t(f.components) * count)
    throw InputError(std::string("field '") + f.name + "' (" + where + " data) has " + std::to_string(f.values.size()) +
                     " values; expected " + std::to_string(f.components) + " x " + std::to_string(count));
  if (f.name == field::kMaterialId) {
    std::vector<int32_t> ids(f.values.size());
    std::transform(f.values.begin(), f.values.end(), ids.begin(), [](double x) { return int32_t(std::lround(x)); });
    return make_array(f.name, "Int32", 1, ids, compress);
  }
  return make_array(f.name, "Float64", f.components, f.values, compress);
}

void write_array_tags(std::ostream& out, const std::vector<ArrayView>& arrays, size_t& offset, const char* indent) {
  for (const auto& a : arrays) {
    out << indent << "<DataArray type=\"" << a.type << "\"";
    if (!a.name.empty()) out << " Name=\"" << a.name << "\"";
    if (a.components != 1) out << " NumberOfComponents=\"" << a.components << "\"";
    out << " format=\"appended\" offset=\"" << offset << "\"/>\n";
    offset += a.bytes.size();
  }
}

struct XmlPiece {
  const char* dataset;  // UnstructuredGrid | PolyData
  std::string piece_attributes;
  std::vector<ArrayView> point_data, cell_data, points, cells;
  const char* cells_tag;  // Cells | Polys
};

void write_xml(const std::filesystem::path& path, const XmlPiece& p, bool compress) {
  if (!host_is_little_endian()) throw RuntimeFailure("VTK writer assumes a little-endian host");
  AtomicFile file(path);
  auto& out = file.stream();
  out << "<?xml version=\"1.0\"?>\n<VTKFile type=\"" << p.dataset
      << "\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\"";
  if (compress) out << " compressor=\"vtkZLibDataCompressor\"";
  out << ">\n  <" << p.dataset << ">\n    <Piece " << p.piece_attributes << ">\n";
  size_t offset = 0;
  out << "      <PointData>\n";
  write_array_tags(out, p.point_data, offset, "        ");
  out << "      </PointData>\n      <CellData>\n";
  write_array_tags(out, p.cell_data, offset, "        ");
  out << "      </CellData>\n      <Points>\n";
  write_array_tags(out, p.points, offset, "        ");
  out << "      </Points>\n      <" << p.cells_tag << ">\n";
  write_array_tags(out, p.cells, offset, "        ");
  out << "      </" << p.cells_tag << ">\n    </Piece>\n  </" << p.dataset << ">\n"
      << "  <AppendedData encoding=\"raw\">\n   _";
  for (const auto* group : {&p.point_data, &p.cell_data, &p.points, &p.cells})
    for (const auto& a : *group) out.write(a.bytes.data(), std::streamsize(a.bytes.size()));
  out << "\n  </AppendedData>\n</VTKFile>\n";
  file.commit();
}

std::vector<double> flatten(const std::vector<Vec3>& points) {
  std::vector<double> xyz(points.size() * 3);
  for (size_t i = 0; i < points.size(); ++i)
    for (size_t d = 0; d < 3; ++d) xyz[3 * i + d] = points[i][d];
  return xyz;
}

void check_connectivity(const std::vector<int32_t>& conn, size_t npoints, const std::filesystem::path& path) {
  for (size_t i = 0; i < conn.size(); ++i)
    if (conn[i] < 0 || size_t(conn[i]) >= npoints)
      throw InputError(path.string() + ": cannot write, connectivity entry " + std::to_string(i) + " = " +
                       std::to_string(conn[i]) + " is out of range for " + std::to_string(npoints) + " points");
}

int nodes_per_cell(CellType t) { return t == CellType::Triangle ? 3 : t == CellType::Tetra ? 4 : 8; }

// Writes cells given by (types, offsets, connectivity); used by both the single-type public API
// and mixed MeshFile output.
void write_unstructured(const std::filesystem::path& path, const std::vector<Vec3>& points,
                        const std::vector<uint8_t>& types, const std::vector<int64_t>& offsets,
                        const std::vector<int32_t>& conn, const std::vector<Field>& point_data,
                        const std::vector<Field>& cell_data, bool compress) {
  check_connectivity(conn, points.size(), path);
  XmlPiece p{"UnstructuredGrid",
             "NumberOfPoints=\"" + std::to_string(points.size()) + "\" NumberOfCells=\"" + std::to_string(types.size()) + "\"",
             {}, {}, {}, {}, "Cells"};
  for (const auto& f : point_data) p.point_data.push_back(field_array(f, points.size(), "point", compress));
  for (const auto& f : cell_data) p.cell_data.push_back(field_array(f, types.size(), "cell", compress));
  p.points.push_back(make_array("Points", "Float64", 3, flatten(points), compress));
  p.cells.push_back(make_array("connectivity", "Int32", 1, conn, compress));
  p.cells.push_back(make_array("offsets", "Int64", 1, offsets, compress));
  p.cells.push_back(make_array("types", "UInt8", 1, types, compress));
  write_xml(path, p, compress);
}

void write_polydata(const std::filesystem::path& path, const std::vector<Vec3>& points,
                    const std::vector<std::array<int32_t, 3>>& tris, const std::vector<Field>& point_data,
                    bool compress) {
  std::vector<int32_t> conn;
  conn.reserve(tris.size() * 3);
  for (const auto& t : tris) conn.insert(conn.end(), t.begin(), t.end());
  check_connectivity(conn, points.size(), path);
  std::vector<int64_t> offsets(tris.size());
  for (size_t i = 0; i < tris.size(); ++i) offsets[i] = int64_t(3 * (i + 1));
  XmlPiece p{"PolyData",
             "NumberOfPoints=\"" + std::to_string(points.size()) +
                 "\" NumberOfVerts=\"0\" NumberOfLines=\"0\" NumberOfStrips=\"0\" NumberOfPolys=\"" +
                 std::to_string(tris.size()) + "\"",
             {}, {}, {}, {}, "Polys"};
  for (const auto& f : point_data) p.point_data.push_back(field_array(f, points.size(), "point", compress));
  p.points.push_back(make_array("Points", "Float64", 3, flatten(points), compress));
  p.cells.push_back(make_array("connectivity", "Int32", 1, conn, compress));
  p.cells.push_back(make_array("offsets", "Int64", 1, offsets, compress));
  write_xml(path, p, compress);
}

// ---------------------------------------------------------------- reader

struct XmlTag {
  std::string name;
  std::map<std::string, std::string> attrs;
  bool closing = false, self_closing = false;
  size_t end = 0;  // position after '>'
};

// Parses the tag starting at data[pos] == '<'.
bool parse_tag(const std::string& data, size_t pos, XmlTag& tag) {
  const size_t close = data.find('>', pos);
  if (close == std::string::npos) return false;
  std::string_view s(data.data() + pos + 1, close - pos - 1);
  tag = XmlTag{};
  tag.end = close + 1;
  if (!s.empty() && s.front() == '/') {
    tag.closing = true;
    s.remove_prefix(1);
  }
  if (!s.empty() && s.back() == '/') {
    tag.self_closing = true;
    s.remove_suffix(1);
  }
  size_t i = 0;
  while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  tag.name = std::string(s.substr(0, i));
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    const size_t eq = s.find('=', i);
    if (eq == std::string_view::npos) break;
    std::string key(s.substr(i, eq - i));
    while (!key.empty() && std::isspace(static_cast<unsigned char>(key.back()))) key.pop_back();
    const size_t q1 = s.find_first_of("\"'", eq);
    if (q1 == std::string_view::npos) return false;
    const size_t q2 = s.find(s[q1], q1 + 1);
    if (q2 == std::string_view::npos) return false;
    tag.attrs[key] = std::string(s.substr(q1 + 1, q2 - q1 - 1));
    i = q2 + 1;
  }
  return true;
}

struct XmlArray {
  std::map<std::string, std::string> attrs;
  std::string section;  // Points, Cells, Polys, CellData, PointData, ...
  size_t text_begin = 0, text_end = 0;
  size_t line = 0;
};

class VtkXmlReader {
 public:
  explicit VtkXmlReader(TextReader& in) : in_(in), data_(in.data()) {}

  MeshFile read() {
    scan();
    MeshFile m;
    const XmlArray* pts = find("Points", "");
    if (!pts) in_.fail("no <Points> array (not a VTK XML UnstructuredGrid/PolyData file, or truncated)");
    const auto xyz = values(*pts, npoints_ * 3);
    m.nodes.resize(npoints_);
    for (size_t i = 0; i < npoints_; ++i) m.nodes[i] = {xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]};
    const std::string cells_section = polydata_ ? "Polys" : "Cells";
    const XmlArray* conn_a = find(cells_section, "connectivity");
    const XmlArray* off_a = find(cells_section, "offsets");
    if (!conn_a || !off_a) in_.fail("missing connectivity/offsets arrays in <" + cells_section + ">");
    const auto offsets = integers(*off_a, ncells_);
    if (ncells_ && offsets.back() < 0) in_.fail_at(off_a->line, "offsets array ends in a negative offset");
    const size_t nconn = ncells_ ? size_t(offsets.back()) : 0;
    const auto conn = integers(*conn_a, nconn);
    std::vector<int64_t> types(ncells_, 5);
    if (!polydata_) {
      const XmlArray* types_a = find("Cells", "types");
      if (!types_a) in_.fail("missing types array in <Cells>");
      types = integers(*types_a, ncells_, INT32_MIN, INT32_MAX);
    }
    std::vector<int64_t> material;
    for (const char* region : formats::kRegionArrayNames)
      if (const XmlArray* mat = material.empty() ? find("CellData", region) : nullptr)
        material = integers(*mat, ncells_, INT32_MIN, INT32_MAX);
    std::vector<int64_t> ids;
    size_t begin = 0;
    for (size_t c = 0; c < ncells_; ++c) {
      const size_t end = offsets[c] < 0 ? 0 : size_t(offsets[c]);
      if (offsets[c] < 0 || end < begin || end > nconn) in_.fail_at(off_a->line, "offsets array is not increasing at cell " + std::to_string(c + 1));
      ids.assign(conn.begin() + long(begin), conn.begin() + long(end));
      for (auto v : ids)
        if (v < 0 || size_t(v) >= npoints_)
          in_.fail_at(conn_a->line, "cell " + std::to_string(c + 1) + " refers to point " + std::to_string(v) +
                                        ", out of range 0.." + std::to_string(npoints_ ? npoints_ - 1 : 0));
      formats::add_vtk_cell(m, int(types[c]), ids.data(), ids.size(), material.empty() ? 0 : int32_t(material[c]), in_);
      begin = end;
    }
    return m;
  }

 private:
  void scan() {
    size_t pos = 0;
    std::vector<std::string> stack;
    bool have_file = false;
    while (true) {
      pos = data_.find('<', pos);
      if (pos == std::string::npos) break;
      if (data_.compare(pos, 2, "<?") == 0 || data_.compare(pos, 4, "<!--") == 0) {
        pos = data_.find('>', pos);
        if (pos == std::string::npos) break;
        continue;
      }
      XmlTag tag;
      in_.seek(pos);
      if (!parse_tag(data_, pos, tag)) in_.fail("unterminated XML tag (truncated file?)");
      pos = tag.end;
      if (tag.closing) {
        if (!stack.empty()) stack.pop_back();
        continue;
      }
      if (tag.name == "VTKFile") {
        have_file = true;
        const auto type = tag.attrs["type"];
        if (type != "UnstructuredGrid" && type != "PolyData")
          in_.fail("VTK XML type '" + type + "' is not supported (UnstructuredGrid or PolyData)");
        polydata_ = type == "PolyData";
        little_ = tag.attrs["byte_order"] != "BigEndian";
        header_ = tag.attrs.count("header_type") ? tag.attrs["header_type"] : "UInt32";
        if (header_ != "UInt32" && header_ != "UInt64") in_.fail("unsupported header_type " + header_);
        compressed_ = !tag.attrs["compressor"].empty();
        if (compressed_ && tag.attrs["compressor"] != "vtkZLibDataCompressor")
          in_.fail("compressor " + tag.attrs["compressor"] + " (zlib only) is " + formats::kNotInBuiltinReader);
      } else if (tag.name == "Piece") {
        if (npieces_++) in_.fail("files with more than one <Piece> are not supported");
        npoints_ = size_t(number(tag, "NumberOfPoints"));
        ncells_ = size_t(number(tag, polydata_ ? "NumberOfPolys" : "NumberOfCells"));
        // Each point or cell takes at least one byte, compressed or not.
        const uint64_t most = uint64_t(data_.size()) * kMaxInflateRatio;
        if (npoints_ > most || ncells_ > most)
          in_.fail("<Piece> announces " + std::to_string(npoints_) + " points and " + std::to_string(ncells_) +
                   " cells, more than a file of " + std::to_string(data_.size()) + " bytes can hold");
        if (polydata_ && (number(tag, "NumberOfStrips") > 0))
          in_.fail("triangle strips in .vtp are not supported");
      } else if (tag.name == "DataArray") {
        XmlArray a;
        a.attrs = tag.attrs;
        a.section = stack.empty() ? "" : stack.back();
        a.line = in_.line();
        if (!tag.self_closing) {
          const size_t close = data_.find("</DataArray>", pos);
          if (close == std::string::npos) in_.fail("<DataArray> without </DataArray> (truncated file?)");
          a.text_begin = pos;
          a.text_end = close;
          pos = close + 12;
        }
        arrays_.push_back(std::move(a));
        continue;
      } else if (tag.name == "AppendedData") {
        const size_t us = data_.find('_', pos);
        if (us == std::string::npos) in_.fail("<AppendedData> without the '_' marker (truncated file?)");
        appended_ = us + 1;
        appended_base64_ = tag.attrs["encoding"] == "base64";
        break;  // binary data follows; nothing after it matters
      }
      if (!tag.self_closing) stack.push_back(tag.name);
    }
    if (!have_file) in_.fail("not a VTK XML file (no <VTKFile> element)");
    if (!npieces_) in_.fail("no <Piece> element (empty or truncated file)");
  }

  int64_t number(XmlTag& tag, const char* key) {
    int64_t v = 0;
    const auto it = tag.attrs.find(key);
    if (it == tag.attrs.end()) return 0;
    if (!parse_integer(it->second, v) || v < 0) in_.fail(std::string("bad ") + key + " '" + it->second + "'");
    return v;
  }

  const XmlArray* find(const std::string& section, const std::string& name) const {
    for (const auto& a : arrays_) {
      if (a.section != section) continue;
      const auto it = a.attrs.find("Name");
      if (name.empty() || (it != a.attrs.end() && it->second == name)) return &a;
    }
    return nullptr;
  }

  std::string header_bytes_decode(const char* p, size_t avail, size_t& used, size_t count, const XmlArray& a) {
    // Decodes the block structure at p (raw bytes) into `count` payload bytes.
    const size_t hs = header_ == "UInt64" ? 8 : 4;
    auto word = [&](size_t i) -> uint64_t {
      if ((i + 1) * hs > avail) in_.fail_at(a.line, "data of array '" + name_of(a) + "' is truncated");
      return hs == 8 ? load<uint64_t>(p + i * hs, little_) : load<uint32_t>(p + i * hs, little_);
    };
    std::string out;
    if (!compressed_) {
      const uint64_t n = word(0);
      if (n != count || hs + n > avail)
        in_.fail_at(a.line, "array '" + name_of(a) + "' holds " + std::to_string(n) + " bytes, expected " + std::to_string(count));
      out.assign(p + hs, n);
      used = hs + n;
      return out;
    }
    const uint64_t nb = word(0), bs = word(1), last = word(2);
    // The header's sizes come from the file: checked one by one so that no product wraps
    // around to the expected total while a block points outside the buffer.
    if (nb > avail / hs || (nb > 0 && bs == 0) || last > bs)
      in_.fail_at(a.line, "compressed array '" + name_of(a) + "' has a corrupt block header");
    const uint64_t full = nb == 0 ? 0 : nb - 1;
    if (full > 0 && bs > count / full)
      in_.fail_at(a.line, "compressed array '" + name_of(a) + "' holds more than the expected " + std::to_string(count) + " bytes");
    const uint64_t total = nb == 0 ? 0 : full * bs + (last ? last : bs);
    if (total != count)
      in_.fail_at(a.line, "array '" + name_of(a) + "' holds " + std::to_string(total) + " bytes, expected " + std::to_string(count));
    out.resize(count);
    size_t cpos = (3 + nb) * hs;
    for (uint64_t b = 0; b < nb; ++b) {
      const uint64_t cs = word(3 + b);
      const size_t len = (b + 1 == nb && last) ? last : bs;
      if (cs > avail - std::min<uint64_t>(cpos, avail) || !zlib_inflate(p + cpos, cs, out.data() + b * bs, len))
        in_.fail_at(a.line, "compressed data of array '" + name_of(a) + "' is corrupt or truncated");
      cpos += cs;
    }
    used = cpos;
    return out;
  }

  static std::string name_of(const XmlArray& a) {
    const auto it = a.attrs.find("Name");
    return it == a.attrs.end() ? a.section : it->second;  // <Points> has one unnamed array
  }

  // Refuses an array of `count` values that `bytes` bytes of the file cannot hold (`ratio`:
  // at most 1032 for zlib-compressed data) before anything is allocated for it.
  void check_fits(const XmlArray& a, size_t count, size_t bytes_each, uint64_t bytes, uint64_t ratio) {
    if (bytes_each && count > bytes / bytes_each * ratio + ratio)
      in_.fail_at(a.line, "array '" + name_of(a) + "' should hold " + std::to_string(count) + " values, more than its " +
                              std::to_string(bytes) + " bytes in the file can (truncated file or corrupt header?)");
  }

  // An integer array: offsets, connectivity, cell types, regions (in [lo, hi]).
  std::vector<int64_t> integers(const XmlArray& a, size_t count, int64_t lo = INT64_MIN, int64_t hi = INT64_MAX) {
    const auto v = values(a, count);
    std::vector<int64_t> out(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      if (!exact_integer(v[i], out[i]) || out[i] < lo || out[i] > hi)
        in_.fail_at(a.line, "array '" + name_of(a) + "' holds " + format_double(v[i]) + " at entry " + std::to_string(i) +
                                ", not an integer in range");
    return out;
  }

  std::vector<double> values(const XmlArray& a, size_t count) {
    const auto type_it = a.attrs.find("type");
    const std::string type = type_it == a.attrs.end() ? "" : type_it->second;
    const size_t ts = vtk_type_size(type);
    if (!ts) in_.fail_at(a.line, "array '" + name_of(a) + "' has unsupported type '" + type + "'");
    std::vector<double> v;
    const auto fmt_it = a.attrs.find("format");
    const std::string format = fmt_it == a.attrs.end() ? "ascii" : fmt_it->second;
    const uint64_t ratio = compressed_ ? kMaxInflateRatio : 1;
    if (format == "ascii") {
      check_fits(a, count, 1, a.text_end - a.text_begin, 1);
      v.resize(count);
      TextReader text(in_.name(), data_.substr(a.text_begin, a.text_end - a.text_begin));
      text.seek(0);
      for (size_t i = 0; i < count; ++i) {
        const auto t = text.try_token();
        if (t.empty()) in_.fail_at(a.line, "array '" + name_of(a) + "' has " + std::to_string(i) + " values, expected " + std::to_string(count));
        if (!parse_real(t, v[i])) in_.fail_at(a.line + text.line() - 1, "malformed number '" + std::string(t) + "' in array '" + name_of(a) + "'");
        if (!std::isfinite(v[i])) in_.fail_at(a.line + text.line() - 1, "non-finite value '" + std::string(t) + "' in array '" + name_of(a) + "'");
      }
    } else if (format == "binary") {
      const std::string raw = base64_decode(std::string_view(data_).substr(a.text_begin, a.text_end - a.text_begin));
      check_fits(a, count, ts, raw.size(), ratio);
      v.resize(count);
      size_t used = 0;
      const auto bytes = header_bytes_decode(raw.data(), raw.size(), used, count * ts, a);
      convert_to_double(type, bytes.data(), count, little_, v.data());
    } else if (format == "appended") {
      if (!appended_) in_.fail_at(a.line, "array '" + name_of(a) + "' is appended but the file has no <AppendedData>");
      int64_t off = 0;
      const auto off_it = a.attrs.find("offset");
      if (off_it == a.attrs.end() || !parse_integer(off_it->second, off) || off < 0)
        in_.fail_at(a.line, "array '" + name_of(a) + "' has no valid offset");
      if (appended_base64_) in_.fail_at(a.line, std::string("base64-encoded appended data is ") + formats::kNotInBuiltinReader);
      const size_t start = uint64_t(off) > data_.size() ? data_.size() + 1 : appended_ + size_t(off);
      if (start > data_.size()) in_.fail_at(a.line, "array '" + name_of(a) + "' starts past the end of the file (truncated)");
      check_fits(a, count, ts, data_.size() - start, ratio);
      v.resize(count);
      size_t used = 0;
      const auto bytes = header_bytes_decode(data_.data() + start, data_.size() - start, used, count * ts, a);
      convert_to_double(type, bytes.data(), count, little_, v.data());
    } else {
      in_.fail_at(a.line, "unknown DataArray format '" + format + "'");
    }
    for (size_t i = 0; i < count; ++i)
      if (!std::isfinite(v[i])) in_.fail_at(a.line, "array '" + name_of(a) + "' holds a non-finite value at entry " + std::to_string(i));
    return v;
  }

  TextReader& in_;
  const std::string& data_;
  bool polydata_ = false, little_ = true, compressed_ = false, appended_base64_ = false;
  std::string header_ = "UInt32";
  size_t npoints_ = 0, ncells_ = 0, npieces_ = 0, appended_ = 0;
  std::vector<XmlArray> arrays_;
};

}  // namespace

void write_vtu(const std::filesystem::path& path, const std::vector<Vec3>& points, CellType type,
               const std::vector<int32_t>& connectivity, const std::vector<Field>& point_data,
               const std::vector<Field>& cell_data, const VtuOptions& options) {
  const size_t npc = size_t(nodes_per_cell(type));
  if (connectivity.size() % npc)
    throw InputError(path.string() + ": connectivity length " + std::to_string(connectivity.size()) +
                     " is not a multiple of " + std::to_string(npc));
  const size_t ncells = connectivity.size() / npc;
  std::vector<uint8_t> types(ncells, uint8_t(type));
  std::vector<int64_t> offsets(ncells);
  for (size_t i = 0; i < ncells; ++i) offsets[i] = int64_t(npc * (i + 1));
  write_unstructured(path, points, types, offsets, connectivity, point_data, cell_data, options.compress);
}

void write_vtp(const std::filesystem::path& path, const std::vector<Vec3>& points,
               const std::vector<std::array<int32_t, 3>>& triangles, const std::vector<Field>& point_data,
               const VtuOptions& options) {
  write_polydata(path, points, triangles, point_data, options.compress);
}

PvdWriter::PvdWriter(std::filesystem::path pvd_path) : path_(std::move(pvd_path)) {}

void PvdWriter::add(double time, const std::filesystem::path& file) {
  namespace fs = std::filesystem;
  const fs::path folder = path_.parent_path().empty() ? fs::path(".") : path_.parent_path();
  const fs::path frame = file.is_absolute() ? file : folder / file;
  // Checked here because a .pvd entry that points nowhere is only noticed when ParaView opens it.
  if (!fs::is_regular_file(frame))
    throw InputError(path_.string() + ": time-series frame " + frame.string() + " does not exist (a relative frame "
                     "path is taken relative to the .pvd's folder)");
  // Canonical on both sides: `..` after a symlinked folder leads where the OS goes, not where
  // lexical normalization would.
  entries_.emplace_back(time, fs::canonical(frame).lexically_relative(fs::canonical(folder)).generic_string());
}

void PvdWriter::write() const {
  write_atomically(path_, [&](std::ostream& out) {
    out << "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
        << "  <Collection>\n";
    for (const auto& [t, f] : entries_)
      out << "    <DataSet timestep=\"" << format_double(t) << "\" group=\"\" part=\"0\" file=\"" << xml_attribute(f)
          << "\"/>\n";
    out << "  </Collection>\n</VTKFile>\n";
  });
}

namespace formats {

bool add_vtk_cell(MeshFile& m, int vtk_type, const int64_t* ids, size_t n, int32_t material, const TextReader& where) {
  auto need = [&](size_t k, const char* what) {
    if (n != k) where.fail(std::string(what) + " cell with " + std::to_string(n) + " nodes (expected " + std::to_string(k) + ")");
  };
  switch (vtk_type) {
    case 10:
      need(4, "tetrahedron");
      m.tets.push_back({int32_t(ids[0]), int32_t(ids[1]), int32_t(ids[2]), int32_t(ids[3])});
      m.tet_material.push_back(material);
      return true;
    case 12: {
      need(8, "hexahedron");
      std::array<int32_t, 8> h{};
      for (size_t i = 0; i < 8; ++i) h[i] = int32_t(ids[i]);
      m.hexes.push_back(h);
      m.hex_material.push_back(material);
      return true;
    }
    case 5:
      need(3, "triangle");
      m.tris.push_back({int32_t(ids[0]), int32_t(ids[1]), int32_t(ids[2])});
      return true;
    case 1: case 2: case 3: case 4: case 7: case 8: case 9:
      return false;  // vertices, lines and quads: annotation or boundary entities
    default:
      where.fail("cell type " + std::to_string(vtk_type) +
                 " is not supported (only tetrahedra (10), hexahedra (12) and triangles (5))");
  }
}

MeshFile read_vtk_xml(TextReader& in) { return VtkXmlReader(in).read(); }

namespace {
void collect_cells(const MeshFile& m, std::vector<uint8_t>& types, std::vector<int64_t>& offsets,
                   std::vector<int32_t>& conn, std::vector<double>& material) {
  auto add = [&](const int32_t* ids, size_t n, CellType t, int32_t mat) {
    conn.insert(conn.end(), ids, ids + n);
    types.push_back(uint8_t(t));
    offsets.push_back(int64_t(conn.size()));
    material.push_back(mat);
  };
  for (size_t i = 0; i < m.tets.size(); ++i)
    add(m.tets[i].data(), 4, CellType::Tetra, m.tet_material.empty() ? 0 : m.tet_material[i]);
  for (size_t i = 0; i < m.hexes.size(); ++i)
    add(m.hexes[i].data(), 8, CellType::Hexahedron, m.hex_material.empty() ? 0 : m.hex_material[i]);
  for (const auto& t : m.tris) add(t.data(), 3, CellType::Triangle, 0);
}
}  // namespace

void write_vtu_mesh(const std::filesystem::path& path, const MeshFile& m, bool compress) {
  std::vector<uint8_t> types;
  std::vector<int64_t> offsets;
  std::vector<int32_t> conn;
  std::vector<double> material;
  collect_cells(m, types, offsets, conn, material);
  write_unstructured(path, m.nodes, types, offsets, conn, {}, {Field{field::kMaterialId, 1, material}}, compress);
}

void write_vtp_mesh(const std::filesystem::path& path, const MeshFile& m, bool compress) {
  write_polydata(path, m.nodes, m.tris, {}, compress);
}

}  // namespace formats
}  // namespace eb::mesh
