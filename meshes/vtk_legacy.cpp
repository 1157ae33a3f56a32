// Legacy VTK (.vtk) UNSTRUCTURED_GRID / POLYDATA, ASCII or BINARY (big-endian), both the
// classic CELLS layout ("n i0 i1 ..") and the 5.1 OFFSETS/CONNECTIVITY layout.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>

#include "meshes/binary_util.h"
#include "meshes/errors.h"
#include "meshes/formats.h"
#include "meshes/vtk_io.h"

namespace eb::mesh::formats {
namespace {

// Legacy type names -> XML names understood by convert_to_double.
std::string xml_type(std::string t, const TextReader& in) {
  for (auto& c : t) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (t == "float") return "Float32";
  if (t == "double") return "Float64";
  if (t == "int" || t == "vtktypeint32") return "Int32";
  if (t == "unsigned_int" || t == "vtktypeuint32") return "UInt32";
  if (t == "long" || t == "vtktypeint64" || t == "vtkidtype") return "Int64";
  if (t == "unsigned_long" || t == "vtktypeuint64") return "UInt64";
  if (t == "short") return "Int16";
  if (t == "unsigned_short") return "UInt16";
  if (t == "char") return "Int8";
  if (t == "unsigned_char" || t == "bit") return "UInt8";
  in.fail("unsupported data type '" + t + "'");
}

class LegacyReader {
 public:
  explicit LegacyReader(TextReader& in) : in_(in) {}

  MeshFile read() {
    std::string_view line;
    if (!in_.next_line(line) || line.rfind("# vtk DataFile", 0) != 0)
      in_.fail("not a legacy VTK file (first line must start with '# vtk DataFile')");
    if (!in_.next_line(line)) in_.fail("unexpected end of file after the header (truncated file?)");  // title
    const std::string mode(in_.token("ASCII/BINARY"));
    if (mode == "BINARY") binary_ = true;
    else if (mode != "ASCII") in_.fail("expected ASCII or BINARY, found '" + mode + "'");
    if (in_.token("DATASET") != "DATASET") in_.fail("expected DATASET");
    const std::string kind(in_.token("dataset type"));
    if (kind != "UNSTRUCTURED_GRID" && kind != "POLYDATA")
      in_.fail("dataset type " + kind + " is not supported (UNSTRUCTURED_GRID or POLYDATA)");
    polydata_ = kind == "POLYDATA";
    MeshFile m;
    std::vector<int64_t> cell_conn, cell_offsets, types;
    size_t cell_line = 0;
    std::set<std::string> seen;
    while (!in_.at_end()) {
      const std::string key(in_.token("section keyword"));
      // A second block would replace the first without the file saying which it means.
      if ((key == "POINTS" || key == "CELLS" || key == "POLYGONS" || key == "CELL_TYPES") && !seen.insert(key).second)
        in_.fail(key + " given twice");
      if (key == "POINTS") {
        const size_t n = count("number of points");
        const auto type = xml_type(std::string(in_.token("point type")), in_);
        const auto xyz = read_array(type, 3 * n, "point coordinates");
        m.nodes.resize(n);
        for (size_t i = 0; i < n; ++i) m.nodes[i] = {xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]};
      } else if (key == "CELLS" || key == "POLYGONS") {
        cell_line = in_.line();
        read_cells(cell_conn, cell_offsets);
        if (key == "POLYGONS") types.assign(cell_offsets.size() - 1, 5);
      } else if (key == "CELL_TYPES") {
        const size_t n = count("number of cell types");
        types.clear();
        for (double x : read_array("Int32", n, "cell types")) types.push_back(integer_value(x, "cell types"));
      } else if (key == "CELL_DATA" || key == "POINT_DATA") {
        // Attributes come last; only a region array of the cells is kept (kRegionArrayNames).
        read_attributes(key == "CELL_DATA");
        break;
      } else if (key == "FIELD" || key == "METADATA") {
        break;  // dataset-level field data: not needed for meshes
      } else if (key == "VERTICES" || key == "LINES" || key == "TRIANGLE_STRIPS") {
        std::vector<int64_t> c, o;
        read_cells(c, o);  // skipped, like 0-D/1-D cells of unstructured grids
      } else {
        in_.fail("unexpected keyword '" + key + "'");
      }
    }
    if (cell_offsets.size() > 1 && types.size() != cell_offsets.size() - 1)
      in_.fail_at(cell_line, "CELL_TYPES count " + std::to_string(types.size()) + " differs from the CELLS count " +
                                 std::to_string(cell_offsets.size() - 1));
    for (size_t c = 0; c + 1 < cell_offsets.size(); ++c) {
      const int64_t* ids = cell_conn.data() + cell_offsets[c];
      const size_t n = size_t(cell_offsets[c + 1] - cell_offsets[c]);
      for (size_t k = 0; k < n; ++k)
        if (ids[k] < 0 || size_t(ids[k]) >= m.nodes.size())
          in_.fail_at(cell_line, "cell " + std::to_string(c + 1) + " refers to point " + std::to_string(ids[k]) +
                                     ", out of range 0.." + std::to_string(m.nodes.empty() ? 0 : m.nodes.size() - 1));
      int32_t mat = 0;
      if (material_.size() == types.size()) {
        const int64_t v = integer_value(material_[c], "the region array");
        if (v < INT32_MIN || v > INT32_MAX) in_.fail_at(cell_line, "region " + std::to_string(v) + " of cell " + std::to_string(c + 1) + " is out of range");
        mat = int32_t(v);
      }
      if (types[c] < INT32_MIN || types[c] > INT32_MAX) in_.fail_at(cell_line, "bad cell type " + std::to_string(types[c]));
      add_vtk_cell(m, int(types[c]), ids, n, mat, in_);
    }
    return m;
  }

 private:
  // Every counted item takes at least a byte, so no count (nor a product of two) can
  // overflow before read_array checks the bytes an array needs.
  size_t count(const char* what) { return in_.checked_count(in_.integer(what), 1, what); }

  // A value of an integer array (offsets, connectivity, cell types, regions) read as double.
  int64_t integer_value(double v, const char* what) {
    int64_t out = 0;
    if (!exact_integer(v, out)) in_.fail(std::string("non-integer value ") + format_double(v) + " in " + what);
    return out;
  }

  std::vector<double> read_array(const std::string& type, size_t n, const char* what) {
    in_.checked_count_from(in_.position(), n, binary_ ? vtk_type_size(type) : 1, std::string("number of ") + what);
    std::vector<double> v(n);
    if (!binary_) {
      for (size_t i = 0; i < n; ++i) v[i] = in_.real(what);
      return v;
    }
    in_.rest_of_line();  // binary data starts after the keyword line
    const size_t bytes = n * vtk_type_size(type);
    if (in_.position() + bytes > in_.data().size())
      in_.fail(std::string("binary ") + what + " are truncated (" + std::to_string(n) + " values expected)");
    convert_to_double(type, in_.data().data() + in_.position(), n, false, v.data());
    in_.seek(in_.position() + bytes);
    for (size_t i = 0; i < n; ++i)
      if (!std::isfinite(v[i])) in_.fail(std::string("non-finite value in ") + what + " at entry " + std::to_string(i));
    return v;
  }

  void read_cells(std::vector<int64_t>& conn, std::vector<int64_t>& offsets) {
    const size_t a = count("number of cells"), b = count("cell list size");
    offsets.assign(1, 0);
    conn.clear();
    if (std::string_view(in_.data()).substr(in_.position()).find("OFFSETS") < 32) {
      // 5.1 layout: a = number of offsets (cells + 1), b = connectivity length.
      in_.token("OFFSETS");
      const auto o = read_array(xml_type(std::string(in_.token("offset type")), in_), a, "offsets");
      if (in_.token("CONNECTIVITY") != "CONNECTIVITY") in_.fail("expected CONNECTIVITY");
      const auto c = read_array(xml_type(std::string(in_.token("connectivity type")), in_), b, "connectivity");
      offsets.clear();
      conn.clear();
      for (double x : o) offsets.push_back(integer_value(x, "offsets"));
      for (double x : c) conn.push_back(integer_value(x, "connectivity"));
      if (offsets.empty() || offsets[0] != 0) in_.fail("OFFSETS must start at 0");
      for (size_t i = 1; i < offsets.size(); ++i)
        if (offsets[i] < offsets[i - 1] || uint64_t(offsets[i]) > conn.size()) in_.fail("OFFSETS are not increasing");
      return;
    }
    const auto flat = read_array("Int32", b, "cell list");
    size_t pos = 0;
    for (size_t c = 0; c < a; ++c) {
      if (pos >= flat.size()) in_.fail("cell list is shorter than its " + std::to_string(a) + " cells");
      const int64_t n = integer_value(flat[pos++], "cell list");
      if (n < 0 || uint64_t(n) > flat.size() - pos) in_.fail("cell " + std::to_string(c + 1) + " runs past the end of the cell list");
      for (size_t k = pos; k < pos + size_t(n); ++k) conn.push_back(integer_value(flat[k], "cell list"));
      offsets.push_back(int64_t(conn.size()));
      pos += size_t(n);
    }
  }

  // POINT_DATA / CELL_DATA sections: SCALARS and FIELD arrays are read (FIELD is how meshio
  // writes "medit:ref" and "gmsh:physical"), the other attribute kinds skipped by their sizes.
  // An unknown keyword ends the parse; whatever follows is not needed.
  void read_attributes(bool cells) {
    size_t n = count("number of attribute tuples");
    while (!in_.at_end()) {
      const std::string kw(in_.token("attribute keyword"));
      if (kw == "CELL_DATA" || kw == "POINT_DATA") {
        cells = kw == "CELL_DATA";
        n = count("number of attribute tuples");
      } else if (kw == "SCALARS") {
        const std::string name(in_.token("array name"));
        const std::string type = xml_type(std::string(in_.token("type")), in_);
        size_t comps = 1;  // the component count is optional
        const std::string rest = trim(in_.rest_of_line());
        if (!rest.empty()) {
          const auto c = std::strtol(rest.c_str(), nullptr, 10);
          if (c < 1 || c > 4) in_.fail("SCALARS " + name + ": bad component count '" + rest + "'");
          comps = size_t(c);
        }
        if (in_.token("LOOKUP_TABLE") != "LOOKUP_TABLE") in_.fail("expected LOOKUP_TABLE after SCALARS " + name);
        in_.token("table name");
        take(cells, name, comps, read_array(type, n * comps, "attribute values"));
      } else if (kw == "FIELD") {
        in_.token("field name");
        const size_t arrays = count("number of field arrays");
        for (size_t a = 0; a < arrays; ++a) {
          const std::string name(in_.token("array name"));
          const size_t comps = count("components"), tuples = count("tuples");
          const std::string type = xml_type(std::string(in_.token("type")), in_);
          take(cells && tuples == n, name, comps, read_array(type, comps * tuples, "field values"));
        }
      } else if (kw == "VECTORS" || kw == "NORMALS" || kw == "TENSORS") {
        in_.token("array name");
        read_array(xml_type(std::string(in_.token("type")), in_), n * (kw == "TENSORS" ? 9 : 3), "attribute values");
      } else if (kw == "TEXTURE_COORDINATES") {
        in_.token("array name");
        const size_t dim = count("dimension");
        read_array(xml_type(std::string(in_.token("type")), in_), n * dim, "attribute values");
      } else {
        return;  // LOOKUP_TABLE, COLOR_SCALARS, METADATA, ...: nothing after them is needed
      }
    }
  }

  void take(bool cells, const std::string& name, size_t comps, std::vector<double> values) {
    const int rank = region_array_rank(name);
    if (!cells || comps != 1 || rank < 0 || (material_rank_ >= 0 && rank >= material_rank_)) return;
    material_ = std::move(values);
    material_rank_ = rank;
  }

  static std::string trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return std::string(s);
  }

  TextReader& in_;
  bool binary_ = false, polydata_ = false;
  std::vector<double> material_;
  int material_rank_ = -1;
};

}  // namespace

MeshFile read_vtk_legacy(TextReader& in) { return LegacyReader(in).read(); }

int region_array_rank(const std::string& name) {
  int rank = 0;
  for (const char* region : kRegionArrayNames) {
    if (name == region) return rank;
    ++rank;
  }
  return -1;
}

void write_vtk_legacy(std::ostream& out, const MeshFile& m) {
  out << "# vtk DataFile Version 4.2\nElastoBench mesh\nBINARY\nDATASET UNSTRUCTURED_GRID\n";
  out << "POINTS " << m.nodes.size() << " double\n";
  for (const auto& p : m.nodes)
    for (double x : p) store<double>(out, x, false);
  const size_t ncells = m.tets.size() + m.hexes.size() + m.tris.size();
  const size_t size = 5 * m.tets.size() + 9 * m.hexes.size() + 4 * m.tris.size();
  out << "\nCELLS " << ncells << ' ' << size << '\n';
  auto cells = [&](const auto& list) {
    for (const auto& e : list) {
      store<int32_t>(out, int32_t(e.size()), false);
      for (auto v : e) store<int32_t>(out, v, false);
    }
  };
  cells(m.tets);
  cells(m.hexes);
  cells(m.tris);
  out << "\nCELL_TYPES " << ncells << '\n';
  for (size_t i = 0; i < m.tets.size(); ++i) store<int32_t>(out, 10, false);
  for (size_t i = 0; i < m.hexes.size(); ++i) store<int32_t>(out, 12, false);
  for (size_t i = 0; i < m.tris.size(); ++i) store<int32_t>(out, 5, false);
  out << "\nCELL_DATA " << ncells << "\nSCALARS " << field::kMaterialId << " int 1\nLOOKUP_TABLE default\n";
  for (size_t i = 0; i < m.tets.size(); ++i) store<int32_t>(out, m.tet_material.empty() ? 0 : m.tet_material[i], false);
  for (size_t i = 0; i < m.hexes.size(); ++i) store<int32_t>(out, m.hex_material.empty() ? 0 : m.hex_material[i], false);
  for (size_t i = 0; i < m.tris.size(); ++i) store<int32_t>(out, 0, false);
  out << '\n';
}

}  // namespace eb::mesh::formats
