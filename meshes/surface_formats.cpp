// Triangle surface formats: Wavefront OBJ, OFF, STL (ASCII and binary), PLY (ASCII and binary).
// Polygons with more than three corners are split into a triangle fan.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "meshes/binary_util.h"
#include "meshes/errors.h"
#include "meshes/formats.h"

namespace eb::mesh::formats {
namespace {

Vec3 parse_point(const TextReader& in, const std::string_view* tok, size_t line) {
  Vec3 p{};
  for (size_t d = 0; d < 3; ++d) {
    if (!parse_real(tok[d], p[d])) in.fail_at(line, "malformed vertex coordinate '" + std::string(tok[d]) + "'");
    if (!std::isfinite(p[d])) in.fail_at(line, "non-finite vertex coordinate '" + std::string(tok[d]) + "'");
  }
  return p;
}

void add_polygon(MeshFile& m, const std::vector<int32_t>& corners, const TextReader& in) {
  if (corners.size() < 3) in.fail("face with " + std::to_string(corners.size()) + " corners (at least 3 needed)");
  for (size_t k = 1; k + 1 < corners.size(); ++k) m.tris.push_back({corners[0], corners[k], corners[k + 1]});
}

int32_t checked_index(int64_t v, size_t num_nodes, const TextReader& in, const char* what) {
  if (v < 0 || size_t(v) >= num_nodes)
    in.fail(std::string(what) + " index " + std::to_string(v) + " is out of range (" + std::to_string(num_nodes) +
            " vertices)");
  return int32_t(v);
}

}  // namespace

MeshFile read_obj(TextReader& in) {
  MeshFile m;
  std::string_view line;
  std::string_view tok[64];
  std::vector<int32_t> corners;
  struct PendingFace {
    size_t line;
    std::vector<int64_t> ids;
  };
  std::vector<PendingFace> faces;  // resolved after all vertices: OBJ allows forward references
  while (in.next_line(line)) {
    const size_t n = split_tokens(line, tok, 64);
    if (n == 0 || tok[0][0] == '#') continue;
    if (tok[0] == "v") {
      if (n < 4) in.fail_at(in.last_line(), "vertex needs 3 coordinates");
      m.nodes.push_back(parse_point(in, tok + 1, in.last_line()));
    } else if (tok[0] == "f") {
      if (n == 64) in.fail_at(in.last_line(), "face with more than 63 corners");
      PendingFace f{in.last_line(), {}};
      for (size_t k = 1; k < n; ++k) {
        int64_t v = 0;
        const auto slash = tok[k].find('/');
        if (!parse_integer(tok[k].substr(0, slash), v) || v == 0)
          in.fail_at(f.line, "malformed face corner '" + std::string(tok[k]) + "'");
        // Negative indices count back from the latest vertex.
        f.ids.push_back(v > 0 ? v - 1 : int64_t(m.nodes.size()) + v);
      }
      faces.push_back(std::move(f));
    }
  }
  for (const auto& f : faces) {
    corners.clear();
    for (auto v : f.ids) {
      if (v < 0 || size_t(v) >= m.nodes.size())
        in.fail_at(f.line, "face refers to vertex " + std::to_string(v + 1) + ", out of range 1.." + std::to_string(m.nodes.size()));
      corners.push_back(int32_t(v));
    }
    if (corners.size() < 3) in.fail_at(f.line, "face with fewer than 3 corners");
    for (size_t k = 1; k + 1 < corners.size(); ++k) m.tris.push_back({corners[0], corners[k], corners[k + 1]});
  }
  return m;
}

void write_obj(std::ostream& out, const MeshFile& m) {
  out << "# ElastoBench surface\n";
  for (const auto& p : m.nodes) out << "v " << format_double(p[0]) << ' ' << format_double(p[1]) << ' ' << format_double(p[2]) << '\n';
  for (const auto& t : m.tris) out << "f " << t[0] + 1 << ' ' << t[1] + 1 << ' ' << t[2] + 1 << '\n';
}

MeshFile read_off(TextReader& in) {
  in.set_comment_char('#');
  const auto head = in.token("OFF header");
  if (head.size() < 3 || head.substr(head.size() - 3) != "OFF") in.fail("not an OFF file (header '" + std::string(head) + "')");
  const int64_t nv = in.integer("vertex count"), nf = in.integer("face count");
  in.integer("edge count");
  if (nv < 0 || nf < 0) in.fail("negative vertex or face count");
  MeshFile m;
  m.nodes.resize(in.checked_count(nv, 1, "vertex count"));
  std::string_view line, tok[3];
  in.rest_of_line();
  // Vertex lines may carry colours after x y z, so they are read a line at a time.
  for (int64_t i = 0; i < nv; ++i) {
    do {
      if (!in.next_line(line)) in.fail("unexpected end of file in vertex " + std::to_string(i) + " of " + std::to_string(nv) + " (truncated file?)");
    } while (split_tokens(line, tok, 1) == 0 || tok[0][0] == '#');
    if (split_tokens(line, tok, 3) < 3) in.fail_at(in.last_line(), "vertex needs 3 coordinates");
    m.nodes[size_t(i)] = parse_point(in, tok, in.last_line());
  }
  std::vector<int32_t> corners;
  for (int64_t f = 0; f < nf; ++f) {
    const int64_t k = in.integer("face corner count");
    if (k < 3 || k > 1000) in.fail("face " + std::to_string(f) + " has " + std::to_string(k) + " corners");
    corners.clear();
    for (int64_t c = 0; c < k; ++c) corners.push_back(checked_index(in.integer("face corner"), m.nodes.size(), in, "vertex"));
    add_polygon(m, corners, in);
    in.rest_of_line();  // optional face colour
  }
  return m;
}

void write_off(std::ostream& out, const MeshFile& m) {
  out << "OFF\n" << m.nodes.size() << ' ' << m.tris.size() << " 0\n";
  for (const auto& p : m.nodes) out << format_double(p[0]) << ' ' << format_double(p[1]) << ' ' << format_double(p[2]) << '\n';
  for (const auto& t : m.tris) out << "3 " << t[0] << ' ' << t[1] << ' ' << t[2] << '\n';
}

namespace {
// STL stores every triangle's corners separately; equal coordinates become one node.
struct VertexWelder {
  struct Hash {
    size_t operator()(const Vec3& p) const {
      size_t h = 0;
      for (double x : p) h = h * 1000003u ^ std::hash<double>()(x);
      return h;
    }
  };
  std::unordered_map<Vec3, int32_t, Hash> index;
  int32_t add(MeshFile& m, const Vec3& p) {
    auto [it, inserted] = index.try_emplace(p, int32_t(m.nodes.size()));
    if (inserted) m.nodes.push_back(p);
    return it->second;
  }
};
}  // namespace

MeshFile read_stl(TextReader& in) {
  const std::string& d = in.data();
  MeshFile m;
  VertexWelder weld;
  const bool ascii_start = d.compare(0, 5, "solid") == 0;
  if (d.size() >= 84) {
    const uint32_t n = load<uint32_t>(d.data() + 80, true);
    if (uint64_t(84) + uint64_t(n) * 50 == d.size() || !ascii_start) {
      if (uint64_t(84) + uint64_t(n) * 50 > d.size())
        in.fail("binary STL declares " + std::to_string(n) + " triangles but holds only " +
                std::to_string((d.size() - 84) / 50) + " (truncated file?)");
      for (uint32_t t = 0; t < n; ++t) {
        const char* p = d.data() + 84 + size_t(t) * 50 + 12;
        std::array<int32_t, 3> tri{};
        for (int c = 0; c < 3; ++c) {
          Vec3 x;
          for (int k = 0; k < 3; ++k) x[size_t(k)] = load<float>(p + 12 * c + 4 * k, true);
          for (double v : x)
            if (!std::isfinite(v)) throw InputError(in.name() + ": triangle " + std::to_string(t + 1) + " has a non-finite coordinate");
          tri[size_t(c)] = weld.add(m, x);
        }
        m.tris.push_back(tri);
      }
      return m;
    }
  }
  if (!ascii_start) in.fail("not an STL file (no 'solid' header and wrong size for binary STL)");
  in.rest_of_line();
  while (true) {
    const auto t = in.try_token();
    if (t.empty() || t == "endsolid") break;
    if (t != "facet") in.fail("expected 'facet', found '" + std::string(t) + "'");
    in.rest_of_line();  // normal
    if (in.token("outer") != "outer" || in.token("loop") != "loop") in.fail("expected 'outer loop'");
    std::array<int32_t, 3> tri{};
    for (int c = 0; c < 3; ++c) {
      if (in.token("vertex") != "vertex") in.fail("expected 'vertex' (only triangles are supported)");
      Vec3 x{in.real("vertex x"), in.real("vertex y"), in.real("vertex z")};
      tri[size_t(c)] = weld.add(m, x);
    }
    if (in.token("endloop") != "endloop") in.fail("expected 'endloop' (only triangles are supported)");
    if (in.token("endfacet") != "endfacet") in.fail("expected 'endfacet'");
    m.tris.push_back(tri);
  }
  return m;
}

void write_stl(std::ostream& out, const MeshFile& m) {
  char header[80] = {};
  std::strncpy(header, "ElastoBench binary STL", sizeof header - 1);
  out.write(header, 80);
  store<uint32_t>(out, uint32_t(m.tris.size()), true);
  for (const auto& t : m.tris) {
    const Vec3 &a = m.nodes[size_t(t[0])], &b = m.nodes[size_t(t[1])], &c = m.nodes[size_t(t[2])];
    const double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    double n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
    const double len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (double& x : n) x = len > 0 ? x / len : 0.0;
    for (double x : n) store<float>(out, float(x), true);
    for (const Vec3* p : {&a, &b, &c})
      for (double x : *p) store<float>(out, float(x), true);
    store<uint16_t>(out, 0, true);
  }
}

namespace {
struct PlyProperty {
  std::string name, type, count_type;  // count_type non-empty for lists
};
struct PlyElement {
  std::string name;
  size_t count = 0;
  std::vector<PlyProperty> props;
  size_t line = 0;  // of the header's element line
};

std::string ply_xml_type(const std::string& t, const TextReader& in) {
  if (t == "char" || t == "int8") return "Int8";
  if (t == "uchar" || t == "uint8") return "UInt8";
  if (t == "short" || t == "int16") return "Int16";
  if (t == "ushort" || t == "uint16") return "UInt16";
  if (t == "int" || t == "int32") return "Int32";
  if (t == "uint" || t == "uint32") return "UInt32";
  if (t == "float" || t == "float32") return "Float32";
  if (t == "double" || t == "float64") return "Float64";
  in.fail("unknown PLY property type '" + t + "'");
}
}  // namespace

MeshFile read_ply(TextReader& in) {
  std::string_view line, tok[6];
  if (!in.next_line(line) || line != "ply") in.fail("not a PLY file (first line must be 'ply')");
  int format = -1;  // 0 ascii, 1 binary LE, 2 binary BE
  std::vector<PlyElement> elems;
  while (true) {
    if (!in.next_line(line)) in.fail("PLY header without end_header (truncated file?)");
    const size_t n = split_tokens(line, tok, 6);
    if (n == 0 || tok[0] == "comment" || tok[0] == "obj_info") continue;
    if (tok[0] == "end_header") break;
    if (tok[0] == "format" && n >= 2) {
      format = tok[1] == "ascii" ? 0 : tok[1] == "binary_little_endian" ? 1 : tok[1] == "binary_big_endian" ? 2 : -1;
      if (format < 0) in.fail_at(in.last_line(), "unknown PLY format '" + std::string(tok[1]) + "'");
    } else if (tok[0] == "element" && n >= 3) {
      int64_t c = 0;
      if (!parse_integer(tok[2], c) || c < 0) in.fail_at(in.last_line(), "bad element count '" + std::string(tok[2]) + "'");
      for (const auto& e : elems)
        if (e.name == tok[1]) in.fail_at(in.last_line(), "element '" + e.name + "' declared twice");
      elems.push_back({std::string(tok[1]), size_t(c), {}, in.last_line()});
    } else if (tok[0] == "property" && !elems.empty()) {
      if (n >= 5 && tok[1] == "list")
        elems.back().props.push_back({std::string(tok[4]), ply_xml_type(std::string(tok[3]), in), ply_xml_type(std::string(tok[2]), in)});
      else if (n >= 3)
        elems.back().props.push_back({std::string(tok[2]), ply_xml_type(std::string(tok[1]), in), ""});
      else
        in.fail_at(in.last_line(), "malformed property line");
    } else {
      in.fail_at(in.last_line(), "unexpected PLY header line '" + std::string(line) + "'");
    }
  }
  if (format < 0) in.fail("PLY header has no format line");
  MeshFile m;
  const bool le = format == 1;
  // Reads one scalar of XML type `type` (ASCII token or binary value).
  auto scalar = [&](const std::string& type, const char* what) -> double {
    if (format == 0) {
      const auto t = in.token(what);
      double v = 0;
      if (!parse_real(t, v)) in.fail(std::string("malformed ") + what + " '" + std::string(t) + "'");
      return v;
    }
    const size_t s = vtk_type_size(type);
    if (in.position() + s > in.data().size()) in.fail(std::string("binary data ends inside ") + what + " (truncated file?)");
    double v = 0;
    convert_to_double(type, in.data().data() + in.position(), 1, le, &v);
    in.seek(in.position() + s);
    return v;
  };
  // The smallest an entry of `e` can be: a byte per ASCII value (TextReader::checked_count),
  // the type's size per binary one (lists at their length field).
  auto min_entry_bytes = [&](const PlyElement& e) {
    size_t bytes = 0;
    for (const auto& p : e.props) bytes += format == 0 ? 1 : vtk_type_size(p.count_type.empty() ? p.type : p.count_type);
    return std::max<size_t>(bytes, 1);  // an element without properties is still counted
  };
  std::vector<int32_t> corners;
  for (const auto& e : elems) {
    const bool is_vertex = e.name == "vertex", is_face = e.name == "face";
    in.checked_count_from(in.position(), e.count, min_entry_bytes(e), "PLY element '" + e.name + "' count", e.line);
    if (is_vertex) m.nodes.resize(e.count);
    for (size_t i = 0; i < e.count; ++i) {
      corners.clear();
      for (const auto& p : e.props) {
        if (!p.count_type.empty()) {
          const double k = scalar(p.count_type, "list length");
          int64_t length = 0;
          if (!exact_integer(k, length) || length < 0 || length > 1000)
            in.fail("bad list length " + format_double(k) + " in " + e.name + " " + std::to_string(i));
          for (int64_t c = 0; c < length; ++c) {
            const double v = scalar(p.type, "list entry");
            if (is_face && (p.name == "vertex_indices" || p.name == "vertex_index")) {
              int64_t index = -1;
              if (!exact_integer(v, index)) in.fail("face vertex index " + format_double(v) + " is not an integer");
              corners.push_back(checked_index(index, m.nodes.size(), in, "face vertex"));
            }
          }
          continue;
        }
        const double v = scalar(p.type, p.name.c_str());
        if (is_vertex && (p.name == "x" || p.name == "y" || p.name == "z")) {
          if (!std::isfinite(v)) in.fail("non-finite coordinate in vertex " + std::to_string(i));
          m.nodes[i][size_t(p.name[0] - 'x')] = v;
        }
      }
      if (is_face) add_polygon(m, corners, in);
    }
  }
  return m;
}

void write_ply(std::ostream& out, const MeshFile& m) {
  out << "ply\nformat binary_little_endian 1.0\ncomment ElastoBench surface\nelement vertex " << m.nodes.size()
      << "\nproperty double x\nproperty double y\nproperty double z\nelement face " << m.tris.size()
      << "\nproperty list uchar int vertex_indices\nend_header\n";
  for (const auto& p : m.nodes)
    for (double x : p) store<double>(out, x, true);
  for (const auto& t : m.tris) {
    store<uint8_t>(out, 3, true);
    for (auto v : t) store<int32_t>(out, v, true);
  }
}

}  // namespace eb::mesh::formats
