// Volume mesh formats: Gmsh MSH (v1; v2 ASCII and binary; v4.0/v4.1 ASCII), Medit .mesh,
// TetGen .node/.ele.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "meshes/binary_util.h"
#include "meshes/errors.h"
#include "meshes/formats.h"

namespace eb::mesh::formats {
namespace {

// Gmsh element type -> VTK cell type (0: skipped, -1: unsupported volume/high-order element).
int gmsh_to_vtk(int64_t t) {
  switch (t) {
    case 2: return 5;
    case 4: return 10;
    case 5: return 12;
    case 1: case 3: case 8: case 15: return 0;
    default: return -1;
  }
}
int gmsh_node_count(int64_t t) {
  switch (t) {
    case 1: return 2; case 2: return 3; case 3: return 4; case 4: return 4; case 5: return 8;
    case 6: return 6; case 7: return 5; case 8: return 3; case 9: return 6; case 10: return 9;
    case 11: return 10; case 12: return 27; case 15: return 1; case 17: return 20;
    default: return -1;
  }
}

// File node tags -> dense 0-based indices.
class NodeTags {
 public:
  void add(int64_t tag, size_t index, const TextReader& in) {
    if (tag < 0) in.fail("negative node tag " + std::to_string(tag));
    if (!map_.emplace(tag, int32_t(index)).second) in.fail("node tag " + std::to_string(tag) + " appears twice");
  }
  int64_t find(int64_t tag, const TextReader& in, size_t element_line) const {
    const auto it = map_.find(tag);
    if (it == map_.end()) in.fail_at(element_line, "element refers to node " + std::to_string(tag) + ", which is not defined");
    return it->second;
  }

 private:
  std::unordered_map<int64_t, int32_t> map_;
};

void skip_section(TextReader& in, std::string_view end_marker) {
  std::string_view line;
  while (in.next_line(line))
    if (line.substr(0, end_marker.size()) == end_marker) return;
  in.fail("section not closed by " + std::string(end_marker) + " (truncated file?)");
}

// Sections we do not use ($PhysicalNames, $Periodic, $NodeData, ...) are skipped whole.
void skip_unknown_section(TextReader& in, const std::string& section) {
  if (section[0] != '$') in.fail("unexpected text '" + section + "' outside a section");
  std::string end = section;
  end.insert(1, "End");
  skip_section(in, end);
}

void expect(TextReader& in, std::string_view marker) {
  const auto t = in.token(std::string(marker).c_str());
  if (t != marker) in.fail("expected " + std::string(marker) + ", found '" + std::string(t) + "'");
}

void add_gmsh_element(MeshFile& m, int64_t type, const int64_t* file_tags, size_t n, int32_t material,
                      const NodeTags& tags, TextReader& in, size_t line) {
  const int vtk = gmsh_to_vtk(type);
  if (vtk == 0) return;
  if (vtk < 0) in.fail_at(line, "Gmsh element type " + std::to_string(type) + " is not supported (only 4-node tetrahedra, 8-node hexahedra and 3-node triangles)");
  int64_t ids[8];
  for (size_t k = 0; k < n; ++k) ids[k] = tags.find(file_tags[k], in, line);
  add_vtk_cell(m, vtk, ids, n, material, in);
}

// Gmsh v1 and v2 share the node/element line layout except for the tag fields.
// Node and element sections may appear once: a second one would replace or extend the first
// without the file saying which it means.
void once(std::set<std::string>& seen, const std::string& section, TextReader& in) {
  if (!seen.insert(section).second) in.fail("section " + section + " given twice");
}

void read_msh_v1v2_ascii(TextReader& in, MeshFile& m, bool v1) {
  NodeTags tags;
  std::set<std::string> seen;
  while (!in.at_end()) {
    const std::string section(in.token("section"));
    if (section == (v1 ? "$NOD" : "$Nodes")) {
      once(seen, section, in);
      const int64_t n = in.integer("node count");
      m.nodes.resize(in.checked_count(n, 1, "node count"));
      for (int64_t i = 0; i < n; ++i) {
        tags.add(in.integer("node tag"), size_t(i), in);
        m.nodes[size_t(i)] = {in.real("node x"), in.real("node y"), in.real("node z")};
      }
      expect(in, v1 ? "$ENDNOD" : "$EndNodes");
    } else if (section == (v1 ? "$ELM" : "$Elements")) {
      once(seen, section, in);
      const int64_t n = in.integer("element count");
      int64_t ids[32];
      for (int64_t e = 0; e < n; ++e) {
        in.integer("element tag");
        const size_t line = in.line();
        const int64_t type = in.integer("element type");
        int64_t material = 0;
        int64_t nn = gmsh_node_count(type);
        if (v1) {
          material = in.integer("physical region");
          in.integer("elementary region");
          const int64_t declared = in.integer("node count");
          if (nn >= 0 && declared != nn) in.fail_at(line, "element type " + std::to_string(type) + " needs " + std::to_string(nn) + " nodes, line says " + std::to_string(declared));
          nn = declared;
        } else {
          const int64_t ntags = in.integer("tag count");
          if (ntags < 0 || ntags > 64) in.fail_at(line, "bad tag count " + std::to_string(ntags));
          for (int64_t t = 0; t < ntags; ++t) {
            const int64_t v = in.integer("element tag value");
            if (t == 0) material = v;  // physical group
          }
        }
        if (nn < 0 || nn > 32) in.fail_at(line, "Gmsh element type " + std::to_string(type) + " is not supported");
        for (int64_t k = 0; k < nn; ++k) ids[k] = in.integer("element node");
        add_gmsh_element(m, type, ids, size_t(nn), int32_t(material), tags, in, line);
      }
      expect(in, v1 ? "$ENDELM" : "$EndElements");
    } else {
      skip_unknown_section(in, section);
    }
  }
}

void read_msh_v2_binary(TextReader& in, MeshFile& m) {
  NodeTags tags;
  std::set<std::string> seen;
  const std::string& d = in.data();
  auto need = [&](size_t bytes, const char* what) {
    if (in.position() + bytes > d.size()) in.fail(std::string("binary ") + what + " truncated");
  };
  auto i32 = [&](const char* what) {
    need(4, what);
    const int32_t v = load<int32_t>(d.data() + in.position(), true);
    in.seek(in.position() + 4);
    return v;
  };
  while (!in.at_end()) {
    const std::string section(in.token("section"));
    if (section == "$Nodes") {
      once(seen, section, in);
      const int64_t n = in.integer("node count");
      m.nodes.resize(in.checked_count(n, 28, "node count"));
      in.rest_of_line();
      for (int64_t i = 0; i < n; ++i) {
        tags.add(i32("node tag"), size_t(i), in);
        need(24, "node coordinates");
        for (size_t k = 0; k < 3; ++k) {
          const double x = load<double>(d.data() + in.position() + 8 * k, true);
          if (!std::isfinite(x)) in.fail("node " + std::to_string(i + 1) + " has a non-finite coordinate");
          m.nodes[size_t(i)][k] = x;
        }
        in.seek(in.position() + 24);
      }
      expect(in, "$EndNodes");
    } else if (section == "$Elements") {
      once(seen, section, in);
      const int64_t n = in.integer("element count");
      in.rest_of_line();
      int64_t done = 0, ids[32];
      while (done < n) {
        const size_t line = in.line();
        const int32_t type = i32("element header"), count = i32("element header"), ntags = i32("element header");
        const int nn = gmsh_node_count(type);
        if (nn < 0 || count < 0 || ntags < 0) in.fail_at(line, "bad binary element block (type " + std::to_string(type) + ")");
        for (int32_t e = 0; e < count; ++e) {
          i32("element tag");
          int32_t material = 0;
          for (int32_t t = 0; t < ntags; ++t) {
            const int32_t v = i32("element tags");
            if (t == 0) material = v;
          }
          for (int k = 0; k < nn; ++k) ids[k] = i32("element nodes");
          add_gmsh_element(m, type, ids, size_t(nn), material, tags, in, line);
        }
        done += count;
      }
      expect(in, "$EndElements");
    } else {
      skip_unknown_section(in, section);
    }
  }
}

void read_msh_v4_ascii(TextReader& in, MeshFile& m, bool v41) {
  NodeTags tags;
  std::map<int64_t, int32_t> volume_physical;  // volume entity tag -> first physical tag
  std::set<std::string> seen;
  while (!in.at_end()) {
    const std::string section(in.token("section"));
    if (section == "$Entities" || section == "$Nodes" || section == "$Elements") once(seen, section, in);
    if (section == "$Entities" && v41) {
      const int64_t np = in.integer("point count"), nc = in.integer("curve count"), ns = in.integer("surface count"),
                    nv = in.integer("volume count");
      for (int64_t i = 0; i < np; ++i) {
        in.integer("point tag");
        for (int k = 0; k < 3; ++k) in.real("point coordinate");
        const int64_t nphys = in.integer("physical tag count");
        for (int64_t k = 0; k < nphys; ++k) in.integer("physical tag");
      }
      for (int dim = 1; dim <= 3; ++dim) {
        const int64_t count = dim == 1 ? nc : dim == 2 ? ns : nv;
        for (int64_t i = 0; i < count; ++i) {
          const int64_t tag = in.integer("entity tag");
          for (int k = 0; k < 6; ++k) in.real("entity bounding box");
          const int64_t nphys = in.integer("physical tag count");
          for (int64_t k = 0; k < nphys; ++k) {
            const int64_t p = in.integer("physical tag");
            if (dim == 3 && k == 0) volume_physical[tag] = int32_t(p);
          }
          const int64_t nb = in.integer("bounding entity count");
          for (int64_t k = 0; k < nb; ++k) in.integer("bounding entity");
        }
      }
      expect(in, "$EndEntities");
    } else if (section == "$Nodes") {
      const int64_t blocks = in.integer("entity block count"), total = in.integer("node count");
      if (v41) {
        in.integer("min node tag");
        in.integer("max node tag");
      }
      if (total < 0 || blocks < 0) in.fail("negative node count");
      m.nodes.reserve(in.checked_count(total, 1, "node count"));
      std::vector<int64_t> block_tags;
      for (int64_t b = 0; b < blocks; ++b) {
        in.integer("entity");
        in.integer("entity");
        const int64_t parametric = in.integer("parametric flag"), n = in.integer("nodes in block");
        if (n < 0) in.fail("negative node count in block");
        const int extra = parametric ? 3 : 0;  // at most u v w; only for curves/surfaces but harmless
        if (v41) {
          block_tags.resize(in.checked_count(n, 1, "nodes in block"));
          for (auto& t : block_tags) t = in.integer("node tag");
          for (int64_t i = 0; i < n; ++i) {
            tags.add(block_tags[size_t(i)], m.nodes.size(), in);
            m.nodes.push_back({in.real("node x"), in.real("node y"), in.real("node z")});
            if (parametric) in.rest_of_line();
          }
        } else {
          for (int64_t i = 0; i < n; ++i) {
            tags.add(in.integer("node tag"), m.nodes.size(), in);
            m.nodes.push_back({in.real("node x"), in.real("node y"), in.real("node z")});
            if (extra) in.rest_of_line();
          }
        }
      }
      if (int64_t(m.nodes.size()) != total) in.fail("$Nodes declares " + std::to_string(total) + " nodes but holds " + std::to_string(m.nodes.size()));
      expect(in, "$EndNodes");
    } else if (section == "$Elements") {
      const int64_t blocks = in.integer("entity block count");
      in.integer("element count");
      if (v41) {
        in.integer("min element tag");
        in.integer("max element tag");
      }
      int64_t ids[32];
      for (int64_t b = 0; b < blocks; ++b) {
        int64_t dim = 0, entity = 0;
        if (v41) {
          dim = in.integer("entity dimension");
          entity = in.integer("entity tag");
        } else {
          entity = in.integer("entity tag");
          dim = in.integer("entity dimension");
        }
        const int64_t type = in.integer("element type"), n = in.integer("elements in block");
        const int nn = gmsh_node_count(type);
        if (nn < 0) in.fail("Gmsh element type " + std::to_string(type) + " is not supported");
        int32_t material = 0;
        if (dim == 3) {
          const auto it = volume_physical.find(entity);
          material = it != volume_physical.end() ? it->second : 0;
        }
        for (int64_t e = 0; e < n; ++e) {
          in.integer("element tag");
          const size_t line = in.line();
          for (int k = 0; k < nn; ++k) ids[k] = in.integer("element node");
          add_gmsh_element(m, type, ids, size_t(nn), material, tags, in, line);
        }
      }
      expect(in, "$EndElements");
    } else {
      skip_unknown_section(in, section);
    }
  }
}

}  // namespace

MeshFile read_msh(TextReader& in) {
  MeshFile m;
  const auto first = in.token("$MeshFormat or $NOD");
  if (first == "$NOD") {
    in.seek(0);
    read_msh_v1v2_ascii(in, m, true);
    return m;
  }
  if (first != "$MeshFormat") in.fail("not a Gmsh file (expected $MeshFormat or $NOD, found '" + std::string(first) + "')");
  const std::string version(in.token("format version"));
  const int64_t binary = in.integer("file type");
  in.integer("data size");
  in.rest_of_line();
  if (binary) {
    const size_t p = in.position();
    if (p + 4 > in.data().size() || load<int32_t>(in.data().data() + p, true) != 1)
      in.fail("binary MSH endianness check failed (big-endian or truncated file)");
    in.seek(p + 4);
  }
  expect(in, "$EndMeshFormat");
  if (version.rfind("2", 0) == 0) {
    if (binary) read_msh_v2_binary(in, m);
    else read_msh_v1v2_ascii(in, m, false);
  } else if (version.rfind("4", 0) == 0) {
    if (binary) in.fail("binary MSH 4 is not supported; save it as ASCII (gmsh -0 -format msh41 or Mesh.Binary=0)");
    read_msh_v4_ascii(in, m, version != "4" && version != "4.0");
  } else {
    in.fail("MSH version " + version + " is not supported (1, 2.x, 4.x)");
  }
  return m;
}

void write_msh(std::ostream& out, const MeshFile& m, MshVersion version) {
  auto material_of = [](const std::vector<int32_t>& mat, size_t i) { return mat.empty() ? 0 : mat[i]; };
  if (version == MshVersion::V2) {
    out << "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n" << m.nodes.size() << '\n';
    for (size_t i = 0; i < m.nodes.size(); ++i)
      out << i + 1 << ' ' << format_double(m.nodes[i][0]) << ' ' << format_double(m.nodes[i][1]) << ' '
          << format_double(m.nodes[i][2]) << '\n';
    out << "$EndNodes\n$Elements\n" << m.tris.size() + m.tets.size() + m.hexes.size() << '\n';
    size_t id = 1;
    auto emit = [&](int type, const int32_t* v, size_t n, int32_t phys) {
      out << id++ << ' ' << type << " 2 " << phys << ' ' << phys;
      for (size_t k = 0; k < n; ++k) out << ' ' << v[k] + 1;
      out << '\n';
    };
    for (const auto& t : m.tris) emit(2, t.data(), 3, 0);
    for (size_t i = 0; i < m.tets.size(); ++i) emit(4, m.tets[i].data(), 4, material_of(m.tet_material, i));
    for (size_t i = 0; i < m.hexes.size(); ++i) emit(5, m.hexes[i].data(), 8, material_of(m.hex_material, i));
    out << "$EndElements\n";
    return;
  }
  // v4.1: one volume entity per (element type, material) so that materials survive as
  // physical groups; triangles go to surface entity 1.
  std::map<int32_t, int> volume_entity;  // material -> entity tag
  for (size_t i = 0; i < m.tets.size(); ++i) volume_entity.emplace(material_of(m.tet_material, i), 0);
  for (size_t i = 0; i < m.hexes.size(); ++i) volume_entity.emplace(material_of(m.hex_material, i), 0);
  int next = 1;
  for (auto& [mat, tag] : volume_entity) tag = next++;
  out << "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Entities\n0 0 " << (m.tris.empty() ? 0 : 1) << ' '
      << volume_entity.size() << '\n';
  if (!m.tris.empty()) out << "1 0 0 0 0 0 0 0 0\n";
  for (const auto& [mat, tag] : volume_entity) out << tag << " 0 0 0 0 0 0 1 " << mat << " 0\n";
  out << "$EndEntities\n$Nodes\n1 " << m.nodes.size() << " 1 " << m.nodes.size() << "\n3 1 0 " << m.nodes.size() << '\n';
  for (size_t i = 0; i < m.nodes.size(); ++i) out << i + 1 << '\n';
  for (const auto& p : m.nodes) out << format_double(p[0]) << ' ' << format_double(p[1]) << ' ' << format_double(p[2]) << '\n';
  out << "$EndNodes\n";
  struct Block {
    int dim, entity, type;
    std::vector<const int32_t*> elems;
    size_t n;
  };
  std::vector<Block> blocks;
  if (!m.tris.empty()) {
    blocks.push_back({2, 1, 2, {}, 3});
    for (const auto& t : m.tris) blocks.back().elems.push_back(t.data());
  }
  // Runs of equal material become blocks, so the element order survives a round trip.
  auto add_runs = [&](const auto& elems, const std::vector<int32_t>& mat, int type, size_t n) {
    for (size_t i = 0; i < elems.size(); ++i) {
      const int entity = volume_entity.at(material_of(mat, i));
      if (i == 0 || material_of(mat, i) != material_of(mat, i - 1)) blocks.push_back({3, entity, type, {}, n});
      blocks.back().elems.push_back(elems[i].data());
    }
  };
  add_runs(m.tets, m.tet_material, 4, 4);
  add_runs(m.hexes, m.hex_material, 5, 8);
  const size_t total = m.tris.size() + m.tets.size() + m.hexes.size();
  out << "$Elements\n" << blocks.size() << ' ' << total << " 1 " << total << '\n';
  size_t id = 1;
  for (const auto& b : blocks) {
    out << b.dim << ' ' << b.entity << ' ' << b.type << ' ' << b.elems.size() << '\n';
    for (const int32_t* e : b.elems) {
      out << id++;
      for (size_t k = 0; k < b.n; ++k) out << ' ' << e[k] + 1;
      out << '\n';
    }
  }
  out << "$EndElements\n";
}

MeshFile read_medit(TextReader& in) {
  in.set_comment_char('#');
  MeshFile m;
  bool have_version = false, have_vertices = false;
  while (!in.at_end()) {
    std::string key(in.token("keyword"));
    std::string lower = key;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (lower == "end") break;
    if (lower == "meshversionformatted") {
      const int64_t v = in.integer("mesh version");
      if (v != 1 && v != 2) in.fail("MeshVersionFormatted " + std::to_string(v) + " is not supported (1 or 2)");
      have_version = true;
      continue;
    }
    if (!have_version) in.fail("not a Medit .mesh file (expected MeshVersionFormatted, found '" + key + "')");
    if (lower == "dimension") {
      if (in.integer("dimension") != 3) in.fail("only Dimension 3 meshes are supported");
      continue;
    }
    const size_t line = in.line();
    const int64_t n = in.integer("entry count");
    if (n < 0) in.fail("negative count for " + key);
    if (lower == "vertices") {
      // A second block would silently renumber what the elements read so far refer to.
      if (have_vertices) in.fail_at(line, "Vertices given twice");
      have_vertices = true;
      m.nodes.resize(in.checked_count(n, 1, "vertex count"));
      for (auto& p : m.nodes) {
        p = {in.real("vertex x"), in.real("vertex y"), in.real("vertex z")};
        in.integer("vertex reference");
      }
      continue;
    }
    int per = -1, vtk = 0;
    if (lower == "triangles") per = 3, vtk = 5;
    else if (lower == "tetrahedra") per = 4, vtk = 10;
    else if (lower == "hexahedra") per = 8, vtk = 12;
    if (per > 0) {
      int64_t ids[8];
      for (int64_t e = 0; e < n; ++e) {
        for (int k = 0; k < per; ++k) {
          const int64_t v = in.integer("element vertex");
          if (v < 1 || size_t(v) > m.nodes.size())
            in.fail(key + " entry " + std::to_string(e + 1) + " refers to vertex " + std::to_string(v) +
                    ", out of range 1.." + std::to_string(m.nodes.size()) + " (Vertices must come first)");
          ids[k] = v - 1;
        }
        add_vtk_cell(m, vtk, ids, size_t(per), int32_t(in.integer("element reference")), in);
      }
      continue;
    }
    // Entries we do not use, with their number of integers/reals per entry.
    static const std::map<std::string, int> skip = {
        {"edges", 3}, {"quadrilaterals", 5}, {"corners", 1}, {"ridges", 1}, {"requiredvertices", 1},
        {"requirededges", 1}, {"requiredtriangles", 1}, {"normals", 3}, {"tangents", 3},
        {"normalatvertices", 2}, {"tangentatedges", 3}, {"normalattrianglevertices", 3}};
    const auto it = skip.find(lower);
    if (it == skip.end()) {
      if (lower == "prisms" || lower == "pyramids") in.fail_at(line, key + " are not supported (tetrahedra and hexahedra only)");
      in.fail_at(line, "unknown Medit keyword '" + key + "'");
    }
    const size_t entries = in.checked_count(n, size_t(it->second), key + " count") * size_t(it->second);
    for (size_t e = 0; e < entries; ++e) in.token("entry");
  }
  return m;
}

void write_medit(std::ostream& out, const MeshFile& m) {
  out << "MeshVersionFormatted 2\nDimension 3\nVertices\n" << m.nodes.size() << '\n';
  for (const auto& p : m.nodes) out << format_double(p[0]) << ' ' << format_double(p[1]) << ' ' << format_double(p[2]) << " 0\n";
  auto block = [&](const char* name, const auto& elems, const std::vector<int32_t>* mat) {
    if (elems.empty()) return;
    out << name << '\n' << elems.size() << '\n';
    for (size_t i = 0; i < elems.size(); ++i) {
      for (auto v : elems[i]) out << v + 1 << ' ';
      out << (mat && !mat->empty() ? (*mat)[i] : 0) << '\n';
    }
  };
  block("Triangles", m.tris, nullptr);
  block("Tetrahedra", m.tets, &m.tet_material);
  block("Hexahedra", m.hexes, &m.hex_material);
  out << "End\n";
}

MeshFile read_tetgen(const std::filesystem::path& node_file, const std::filesystem::path& ele_file) {
  MeshFile m;
  TextReader nodes(node_file);
  nodes.set_comment_char('#');
  const int64_t n = nodes.integer("node count"), dim = nodes.integer("dimension"), nattr = nodes.integer("attribute count"),
                nmark = nodes.integer("boundary marker flag");
  if (dim != 3) nodes.fail("only 3-D .node files are supported");
  if (n < 0 || nattr < 0 || nmark < 0 || nmark > 1) nodes.fail("bad .node header");
  nodes.checked_count(nattr, 1, "attribute count");  // bounds nattr + nmark below
  m.nodes.resize(nodes.checked_count(n, 1, "node count"));
  int64_t first = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t id = nodes.integer("node index");
    if (i == 0) {
      if (id != 0 && id != 1) nodes.fail("the first node must be numbered 0 or 1");
      first = id;
    }
    if (id != first + i) nodes.fail("node numbers must be consecutive: expected " + std::to_string(first + i) + ", found " + std::to_string(id));
    m.nodes[size_t(i)] = {nodes.real("node x"), nodes.real("node y"), nodes.real("node z")};
    for (int64_t a = 0; a < nattr + nmark; ++a) nodes.token("node attribute");
  }
  TextReader ele(ele_file);
  ele.set_comment_char('#');
  const int64_t ne = ele.integer("tetrahedron count"), per = ele.integer("nodes per tetrahedron"), eattr = ele.integer("region attribute flag");
  if (per != 4 && per != 10) ele.fail("nodes per tetrahedron must be 4 (or 10, of which the first 4 are used)");
  if (ne < 0 || eattr < 0) ele.fail("bad .ele header");
  int64_t ids[10];
  for (int64_t e = 0; e < ne; ++e) {
    ele.integer("tetrahedron index");
    for (int64_t k = 0; k < per; ++k) {
      // Compared before subtracting `first`: INT64_MIN - 1 would overflow.
      const int64_t raw = ele.integer("tetrahedron node");
      if (raw < first || raw - first >= n)
        ele.fail("tetrahedron " + std::to_string(e + first) + " refers to node " + std::to_string(raw) +
                 ", out of range " + std::to_string(first) + ".." + std::to_string(n - 1 + first));
      ids[k] = raw - first;
    }
    int32_t material = 0;
    for (int64_t a = 0; a < eattr; ++a) {
      const double v = ele.real("region attribute");
      int64_t region = 0;
      if (a == 0 && (!exact_integer(std::round(v), region) || region < INT32_MIN || region > INT32_MAX))
        ele.fail("region attribute " + format_double(v) + " is out of range");
      if (a == 0) material = int32_t(region);
    }
    add_vtk_cell(m, 10, ids, 4, material, ele);
  }
  return m;
}

void write_tetgen_node(std::ostream& out, const MeshFile& m) {
  out << m.nodes.size() << " 3 0 0\n";
  for (size_t i = 0; i < m.nodes.size(); ++i)
    out << i + 1 << ' ' << format_double(m.nodes[i][0]) << ' ' << format_double(m.nodes[i][1]) << ' '
        << format_double(m.nodes[i][2]) << '\n';
}

void write_tetgen_ele(std::ostream& out, const MeshFile& m) {
  out << m.tets.size() << " 4 1\n";
  for (size_t i = 0; i < m.tets.size(); ++i) {
    out << i + 1;
    for (auto v : m.tets[i]) out << ' ' << v + 1;
    out << ' ' << (m.tet_material.empty() ? 0 : m.tet_material[i]) << '\n';
  }
}

}  // namespace eb::mesh::formats
