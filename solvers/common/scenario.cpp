#include "solvers/common/scenario.h"

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "meshes/errors.h"
#include "meshes/voxel_tets.h"
#include "solvers/common/visit_io.h"

namespace eb {

// ---------------------------------------------------------------------------------------------
// Field lists. Each struct's keys are named exactly once, here; the strict reader, the writer
// and the documentation all walk these lists, so they cannot drift apart.
// ---------------------------------------------------------------------------------------------
template <class V> void visit(V& v, NodeSelector& s) {
  v("kind", s.kind);
  v("min", s.min);
  v("max", s.max);
  v("point", s.point);
  v("normal", s.normal);
  v("tolerance", s.tolerance);
}
template <class V> void visit(V& v, LoadCurve& c) {
  v("shape", c.shape);
  v("start", c.start);
  v("duration", c.duration);
}
template <class V> void visit(V& v, FixedBC& f) {
  v("where", f.where);
  v("components", f.components);
}
template <class V> void visit(V& v, PrescribedBC& p) {
  v("where", p.where);
  v("components", p.components);
  v("displacement", p.displacement);
  v("curve", p.curve);
}
template <class V> void visit(V& v, PointForce& p) {
  v("position", p.position);
  v("force", p.force);
  v("curve", p.curve);
}
template <class V> void visit(V& v, SurfaceForce& s) {
  v("where", s.where);
  v("traction", s.traction);
  v("curve", s.curve);
}
template <class V> void visit(V& v, GroundSpec& g) {
  v("enabled", g.enabled);
  v("height", g.height);
  v("normal", g.normal);
  v("stiffness", g.stiffness);
}
template <class V> void visit(V& v, RandomImpulseSpec& r) {
  v("enabled", r.enabled);
  v("every", r.every);
  v("min_force", r.min_force);
  v("max_force", r.max_force);
  v("seed", r.seed);
}
template <class V> void visit(V& v, BoundarySpec& b) {
  v("fixed", b.fixed);
  v("prescribed", b.prescribed);
  v("gravity", b.gravity);
  v("point_forces", b.point_forces);
  v("surface_forces", b.surface_forces);
  v("ground", b.ground);
  v("random_impulses", b.random_impulses);
}
template <class V> void visit(V& v, DamageSpec& d) {
  v("enabled", d.enabled);
  v("gamma", d.gamma);
  v("m", d.m);
  v("psi0", d.psi0);
}
template <class V> void visit(V& v, MaterialOverride& o) {
  v("min", o.min);
  v("max", o.max);
  v("material_id", o.material_id);
  v("youngs_modulus", o.youngs_modulus);
  v("poisson_ratio", o.poisson_ratio);
  v("density", o.density);
}
template <class V> void visit(V& v, MaterialSpec& m) {
  v("youngs_modulus", m.youngs_modulus);
  v("poisson_ratio", m.poisson_ratio);
  v("lame_lambda", m.lame_lambda);
  v("lame_mu", m.lame_mu);
  v("shear_modulus", m.shear_modulus);
  v("bulk_modulus", m.bulk_modulus);
  v("density", m.density);
  v("damage", m.damage);
  v("overrides", m.overrides);
}
template <class V> void visit(V& v, TimeSpec& t) {
  v("mode", t.mode);
  v("dt", t.dt);
  v("steps", t.steps);
  v("end_time", t.end_time);
  v("damping", t.damping);
  v("courant", t.courant);
  v("until_rest", t.until_rest);
  v("rest_velocity", t.rest_velocity);
  v("max_steps", t.max_steps);
  v("rayleigh_stiffness", t.rayleigh_stiffness);
}
template <class V> void visit(V& v, StaticSpec& s) {
  v("load_steps", s.load_steps);
  v("tolerance", s.tolerance);
  v("max_iterations", s.max_iterations);
}
template <class V> void visit(V& v, SolverSpec& s) { v("variant", s.variant); }
template <class V> void visit(V& v, ProbeSpec& p) {
  v("name", p.name);
  v("position", p.position);
}
template <class V> void visit(V& v, OutputSpec& o) {
  v("vtk_every", o.vtk_every);
  v("probe_every", o.probe_every);
  v("probes", o.probes);
  v("render_surface", o.render_surface);
}
template <class V> void visit(V& v, mesh::MeshSpec& m) {
  v("source", m.source);
  v("file", m.file);
  v("origin", m.origin);
  v("size", m.size);
  v("element_size", m.element_size);
  v("elements_per_edge", m.elements_per_edge);
  v("target_elements", m.target_elements);
  v("tets_per_cube", m.tets_per_cube);
  v("refinement", m.refinement);
  v("scale", m.scale);
  v("translate", m.translate);
  v("tetrahedralizer", m.tetrahedralizer);
  v("merge_levels", m.merge_levels);
  v("voxel_subdivision", m.voxel_subdivision);
  v("divisions", m.divisions);
  v("cube_split", m.cube_split);
}
template <class V> void visit(V& v, Scenario& s) {
  v("name", s.name);
  v("description", s.description);
  v("mesh", s.mesh);
  v("material", s.material);
  v("boundary", s.boundary);
  v("time", s.time);
  v("static", s.static_solve);
  v("solver", s.solver);
  v("output", s.output);
}

namespace {

using nlohmann::json;

bool one_of(const std::string& v, std::initializer_list<const char*> options) {
  return std::any_of(options.begin(), options.end(), [&](const char* o) { return v == o; });
}

std::string options_text(std::initializer_list<const char*> options) {
  std::string s;
  for (const char* o : options) s += (s.empty() ? "" : ", ") + std::string(o);
  return s;
}

void check_enum(const std::string& key, const std::string& value, std::initializer_list<const char*> options) {
  if (!one_of(value, options))
    throw InputError("scenario key '" + key + "' is '" + value + "' (valid: " + options_text(options) + ")");
}

void check_components(const std::string& key, const std::string& c) {
  if (c.empty() || c.find_first_not_of("xyz") != std::string::npos)
    throw InputError("scenario key '" + key + "' must be a non-empty combination of x, y, z; got '" + c + "'");
}

void check_selector(const std::string& key, const NodeSelector& s) {
  check_enum(key + ".kind", s.kind, {"box", "plane", "all"});
  if (s.tolerance < 0) throw InputError("scenario key '" + key + ".tolerance' must be >= 0");
  if (s.kind == "plane" && s.normal[0] == 0 && s.normal[1] == 0 && s.normal[2] == 0)
    throw InputError("scenario key '" + key + ".normal' must not be the zero vector");
  if (s.kind == "box")
    for (int d = 0; d < 3; ++d)
      if (s.min[d] > s.max[d]) throw InputError("scenario key '" + key + "': min exceeds max along axis " + std::to_string(d));
}

void check_curve(const std::string& key, const LoadCurve& c) {
  check_enum(key + ".shape", c.shape, {"smooth", "linear", "step"});
  if (c.duration < 0) throw InputError("scenario key '" + key + ".duration' must be >= 0");
}

void positive(const std::string& key, double v) {
  if (!(v > 0)) throw InputError("scenario key '" + key + "' must be positive, got " + std::to_string(v));
}

std::string read_file_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw InputError("cannot open scenario file " + p.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// JSON parsing that refuses what nlohmann::json accepts silently: a key given twice in one
// object (the last would win, so a scenario would not say what it seems to), and nesting
// deeper than any scenario needs (the converters and validators recurse).
json parse_json_strictly(const std::string& text, const std::string& origin) {
  constexpr int kMaxDepth = 32;
  struct Level {
    std::set<std::string> keys;
    std::string path;  // dotted key of this object or array, for messages
  };
  std::vector<Level> open;
  std::string pending_key;  // the key whose value comes next
  const json::parser_callback_t check = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth > kMaxDepth) throw InputError(origin + ": nested deeper than " + std::to_string(kMaxDepth) + " levels");
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start: {
        std::string path = open.empty() ? "" : open.back().path;
        if (!pending_key.empty()) path += (path.empty() ? "" : ".") + pending_key;
        pending_key.clear();
        open.push_back({{}, path});
        break;
      }
      case json::parse_event_t::key: {
        pending_key = parsed.get<std::string>();
        if (!open.empty() && !open.back().keys.insert(pending_key).second) {
          const std::string& p = open.back().path;
          throw InputError(origin + ": key '" + (p.empty() ? "" : p + ".") + pending_key + "' appears twice");
        }
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!open.empty()) open.pop_back();
        break;
      case json::parse_event_t::value:
        pending_key.clear();
        break;
    }
    return true;
  };
  return json::parse(text, check);
}

// toml++ 3.3.0 (Debian 12) reaches a branch it marks unreachable (undefined behaviour) when it
// asks whether a non-ASCII code point is whitespace: U+00A1..U+0499 and others fall through the
// switch in is_non_ascii_horizontal_whitespace (found by the scenario_toml fuzzer; a lone UTF-8
// BOM is enough). It asks that of characters outside strings and comments, of the character
// after a backslash in a multi-line basic string, and of the first one after a line-ending
// backslash and the blanks and newlines it trims. TOML allows non-ASCII text only in strings
// and comments, so the text is parsed first as an ASCII copy with every non-ASCII code point
// replaced by '~', which TOML also accepts only there ('\~' is no escape): toml++'s own reading
// of the copy, where its question cannot go wrong, decides where the strings are. (An earlier
// version modelled TOML's quoting here; the fuzzer kept finding places where the model and
// toml++ disagreed.) The line-ending backslash is checked on its own. A leading BOM is dropped.
std::string checked_toml_text(const std::string& text, const std::string& origin) {
  const size_t start = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
  const size_t n = text.size();
  auto non_ascii = [&](size_t i) { return static_cast<unsigned char>(text[i]) >= 0x80; };
  auto refuse = [&](size_t line) {
    throw InputError(origin + ":" + std::to_string(line) +
                     ": invalid TOML: a non-ASCII character outside a string or comment");
  };
  std::string ascii;
  ascii.reserve(n - start);
  std::set<std::pair<size_t, size_t>> replaced;  // (line, column) of each '~' put in, 1-based
  size_t line = 1, column = 0;
  for (size_t i = start; i < n; ++i) {
    const unsigned char b = static_cast<unsigned char>(text[i]);
    // One '~' per code point: a UTF-8 lead byte, or a stray continuation byte.
    if (b >= 0x80 && b < 0xC0 && i > start && non_ascii(i - 1)) continue;
    if (text[i] == '\n') ++line, column = 0;
    else ++column;
    if (b >= 0x80) replaced.insert({line, column});
    ascii += b >= 0x80 ? '~' : text[i];
    // A backslash whose line ends after blanks: toml++ then skips blanks and newlines and asks the
    // question of the next character (in a multi-line basic string; elsewhere the backslash
    // is an error or literal text, and refusing a non-ASCII character there is harmless).
    if (text[i] == '\\') {
      size_t j = i + 1;
      while (j < n && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r')) ++j;
      if (j < n && text[j] == '\n') {
        size_t at_line = line;
        while (j < n && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r' || text[j] == '\n'))
          at_line += text[j++] == '\n';
        if (j < n && non_ascii(j)) refuse(at_line);
      }
    }
  }
  try {
    (void)toml::parse(ascii, origin);
  } catch (const toml::parse_error& e) {
    const auto& at = e.source().begin;
    if (replaced.count({size_t(at.line), size_t(at.column)})) refuse(size_t(at.line));
    throw;
  }
  return text.substr(start);
}

json toml_to_json(const toml::node& node) {
  if (const auto* t = node.as_table()) {
    json o = json::object();
    for (const auto& [k, v] : *t) o[std::string(k.str())] = toml_to_json(v);
    return o;
  }
  if (const auto* a = node.as_array()) {
    json arr = json::array();
    for (const auto& v : *a) arr.push_back(toml_to_json(v));
    return arr;
  }
  if (const auto* v = node.as_integer()) return v->get();
  if (const auto* v = node.as_floating_point()) return v->get();
  if (const auto* v = node.as_boolean()) return v->get();
  if (const auto* v = node.as_string()) return v->get();
  std::ostringstream where;
  where << node.source().begin;
  throw InputError("unsupported TOML value (dates and times are not scenario values) at " + where.str());
}

// Scenarios are written by this printer, not toml++'s formatter: to estimate line widths that
// one converts log10 of every floating-point array element to size_t, which is undefined for
// |x| < 0.1 (the built-in cantilever's probe at y = 0.05), infinities and NaN (found by the
// scenario_toml fuzzer). Tables become [sections] and arrays of tables [[sections]], with
// whatever is nested in an array element written inline.
std::string toml_value(const json& v);

std::string toml_key(const std::string& k) {
  const bool bare = !k.empty() && std::all_of(k.begin(), k.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-';
  });
  return bare ? k : toml_value(json(k));
}

std::string toml_value(const json& v) {
  if (v.is_string()) {
    // JSON's escapes are TOML's basic-string escapes; TOML also wants DEL escaped.
    std::string out;
    for (char c : v.dump(-1, ' ', false, json::error_handler_t::replace)) out += c == '\x7f' ? std::string("\\u007F") : std::string(1, c);
    return out;
  }
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return v.dump();
  if (v.is_number()) {
    const double x = v.get<double>();
    if (std::isnan(x)) return "nan";
    if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, x);  // shortest text that reads back the same
    std::string text(buf, r.ptr);
    if (text.find_first_of(".e") == std::string::npos) text += ".0";  // TOML would read it as an integer
    return text;
  }
  if (v.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + toml_value(v[i]);
    return out + "]";
  }
  if (v.is_object()) {
    std::string out = "{";
    for (auto it = v.begin(); it != v.end(); ++it) out += (it == v.begin() ? "" : ", ") + toml_key(it.key()) + " = " + toml_value(it.value());
    return out + "}";
  }
  throw std::logic_error("a scenario holds a null value");
}

bool is_array_of_tables(const json& v) {
  return v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_object(); });
}

void write_toml_table(std::string& out, const json& table, const std::string& path) {
  for (auto it = table.begin(); it != table.end(); ++it)
    if (!it.value().is_object() && !is_array_of_tables(it.value())) out += toml_key(it.key()) + " = " + toml_value(it.value()) + "\n";
  for (auto it = table.begin(); it != table.end(); ++it) {
    const std::string sub = path.empty() ? toml_key(it.key()) : path + "." + toml_key(it.key());
    if (it.value().is_object()) {
      out += "\n[" + sub + "]\n";
      write_toml_table(out, it.value(), sub);
    } else if (is_array_of_tables(it.value())) {
      for (const auto& element : it.value()) {
        out += "\n[[" + sub + "]]\n";
        for (auto e = element.begin(); e != element.end(); ++e) out += toml_key(e.key()) + " = " + toml_value(e.value()) + "\n";
      }
    }
  }
}

}  // namespace

CurveParams curve_params(const LoadCurve& c) {
  CurveParams p;
  if (c.shape == "smooth") p.shape = int(CurveShape::Smooth);
  else if (c.shape == "linear") p.shape = int(CurveShape::Linear);
  else if (c.shape == "step") p.shape = int(CurveShape::Step);
  else throw InputError("unknown load curve shape '" + c.shape + "' (smooth, linear, step)");
  p.start = c.start;
  p.duration = c.duration;
  return p;
}

double load_factor(const LoadCurve& c, double t) { return curve_factor(curve_params(c), t); }

ElasticConstants elastic_constants(double E, double nu) {
  if (!(E > 0)) throw InputError("Young's modulus must be positive, got " + std::to_string(E));
  if (!(nu > -1.0 && nu < 0.5))
    throw InputError("Poisson ratio must lie in (-1, 0.5), got " + std::to_string(nu));
  const double mu = E / (2.0 * (1.0 + nu));
  const double lambda = E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu));
  return {E, nu, lambda, mu, lambda + 2.0 * mu / 3.0};
}

ElasticConstants elastic_constants(const MaterialSpec& m) {
  const bool en = m.youngs_modulus || m.poisson_ratio;
  const bool lm = m.lame_lambda || m.lame_mu;
  const bool gk = m.shear_modulus || m.bulk_modulus;
  if (int(en) + int(lm) + int(gk) != 1)
    throw InputError(
        "material: give exactly one pair of elastic constants: (youngs_modulus, poisson_ratio), "
        "(lame_lambda, lame_mu) or (shear_modulus, bulk_modulus)");
  if (en) {
    if (!m.youngs_modulus || !m.poisson_ratio)
      throw InputError("material: youngs_modulus and poisson_ratio must be given together");
    // The keys are named here; the two-number overload serves callers without a scenario.
    if (!(*m.youngs_modulus > 0))
      throw InputError("scenario key 'material.youngs_modulus' (Young's modulus) must be positive, got " + std::to_string(*m.youngs_modulus));
    if (!(*m.poisson_ratio > -1.0 && *m.poisson_ratio < 0.5))
      throw InputError("scenario key 'material.poisson_ratio' (Poisson ratio) must lie in (-1, 0.5), got " + std::to_string(*m.poisson_ratio));
    return elastic_constants(*m.youngs_modulus, *m.poisson_ratio);
  }
  double lambda, mu;
  if (lm) {
    if (!m.lame_lambda || !m.lame_mu) throw InputError("material: lame_lambda and lame_mu must be given together");
    lambda = *m.lame_lambda;
    mu = *m.lame_mu;
  } else {
    if (!m.shear_modulus || !m.bulk_modulus)
      throw InputError("material: shear_modulus and bulk_modulus must be given together");
    mu = *m.shear_modulus;
    lambda = *m.bulk_modulus - 2.0 * mu / 3.0;
  }
  if (!(mu > 0)) throw InputError("material: the shear modulus must be positive");
  const double bulk = lambda + 2.0 * mu / 3.0;
  if (!(bulk > 0)) throw InputError("material: the bulk modulus must be positive");
  const double E = mu * (3.0 * lambda + 2.0 * mu) / (lambda + mu);
  const double nu = lambda / (2.0 * (lambda + mu));
  return {E, nu, lambda, mu, bulk};
}

void validate_scenario(const Scenario& s) {
  const auto& m = s.mesh;
  check_enum("mesh.source", m.source, {"box", "file", "sphere"});
  check_enum("mesh.tetrahedralizer", m.tetrahedralizer, {"voxel", "voxel-merged", "gmsh"});
  if (m.merge_levels < 0 || m.merge_levels > mesh::kMaxMergeLevels)
    throw InputError("scenario key 'mesh.merge_levels' must be 0.." + std::to_string(mesh::kMaxMergeLevels));
  if (m.voxel_subdivision < 1 || m.voxel_subdivision > mesh::kMaxVoxelSubdivision)
    throw InputError("scenario key 'mesh.voxel_subdivision' must be 1.." + std::to_string(mesh::kMaxVoxelSubdivision));
  if (m.voxel_subdivision != 1 && m.source == "box")
    throw InputError("scenario key 'mesh.voxel_subdivision' applies to voxelized surfaces, not to mesh.source = \"box\"");
  if (m.source == "file" && m.file.empty()) throw InputError("scenario key 'mesh.file' is required when mesh.source = \"file\"");
  if (m.element_size < 0) throw InputError("scenario key 'mesh.element_size' must be >= 0");
  if (m.elements_per_edge < 0) throw InputError("scenario key 'mesh.elements_per_edge' must be >= 0");
  if (m.tets_per_cube != 5 && m.tets_per_cube != 6) throw InputError("scenario key 'mesh.tets_per_cube' must be 5 or 6");
  check_enum("mesh.cube_split", m.cube_split, {"kuhn", "sofa"});
  if (m.cube_split == "sofa" && m.tets_per_cube != 6)
    throw InputError("scenario key 'mesh.cube_split' = \"sofa\" needs mesh.tets_per_cube = 6");
  if (m.refinement < 0 || m.refinement > 3) throw InputError("scenario key 'mesh.refinement' must be 0..3");
  positive("mesh.scale", m.scale);
  if (m.source == "box") {
    for (int d = 0; d < 3; ++d) positive("mesh.size", m.size[d]);
    if (m.element_size <= 0 && m.elements_per_edge <= 0 && m.divisions.empty())
      throw InputError("a box mesh needs 'mesh.element_size' > 0, 'mesh.elements_per_edge' > 0 or 'mesh.divisions'");
    if (!m.divisions.empty() && (m.divisions.size() != 3 || *std::min_element(m.divisions.begin(), m.divisions.end()) < 1))
      throw InputError("scenario key 'mesh.divisions' must be 3 counts >= 1 [nx, ny, nz]");
  }

  elastic_constants(s.material);
  positive("material.density", s.material.density);
  const auto& d = s.material.damage;
  if (d.enabled) {
    if (!(d.gamma >= 0 && d.gamma <= 1)) throw InputError("scenario key 'material.damage.gamma' must lie in [0, 1]");
    positive("material.damage.m", d.m);
    if (d.psi0 < 0) throw InputError("scenario key 'material.damage.psi0' must be >= 0");
  }
  for (size_t i = 0; i < s.material.overrides.size(); ++i) {
    const auto& o = s.material.overrides[i];
    const std::string key = "material.overrides." + std::to_string(i);
    if (o.youngs_modulus) positive(key + ".youngs_modulus", *o.youngs_modulus);
    if (o.density) positive(key + ".density", *o.density);
    if (o.poisson_ratio && !(*o.poisson_ratio > -1 && *o.poisson_ratio < 0.5))
      throw InputError("scenario key '" + key + ".poisson_ratio' must lie in (-1, 0.5)");
  }

  const auto& b = s.boundary;
  for (size_t i = 0; i < b.fixed.size(); ++i) {
    const std::string key = "boundary.fixed." + std::to_string(i);
    check_selector(key + ".where", b.fixed[i].where);
    check_components(key + ".components", b.fixed[i].components);
  }
  for (size_t i = 0; i < b.prescribed.size(); ++i) {
    const std::string key = "boundary.prescribed." + std::to_string(i);
    check_selector(key + ".where", b.prescribed[i].where);
    check_components(key + ".components", b.prescribed[i].components);
    check_curve(key + ".curve", b.prescribed[i].curve);
  }
  for (size_t i = 0; i < b.point_forces.size(); ++i)
    check_curve("boundary.point_forces." + std::to_string(i) + ".curve", b.point_forces[i].curve);
  for (size_t i = 0; i < b.surface_forces.size(); ++i) {
    const std::string key = "boundary.surface_forces." + std::to_string(i);
    check_selector(key + ".where", b.surface_forces[i].where);
    check_curve(key + ".curve", b.surface_forces[i].curve);
  }

  const auto& t = s.time;
  check_enum("time.mode", t.mode, {"dynamic", "static"});
  if (t.dt < 0) throw InputError("scenario key 'time.dt' must be >= 0 (0: the method chooses)");
  if (t.steps < 0) throw InputError("scenario key 'time.steps' must be >= 0");
  if (t.end_time < 0) throw InputError("scenario key 'time.end_time' must be >= 0");
  if (t.damping < 0) throw InputError("scenario key 'time.damping' must be >= 0");
  if (t.rayleigh_stiffness < 0) throw InputError("scenario key 'time.rayleigh_stiffness' must be >= 0");
  const auto& g = b.ground;
  if (g.enabled && g.normal[0] == 0 && g.normal[1] == 0 && g.normal[2] == 0)
    throw InputError("scenario key 'boundary.ground.normal' must not be zero");
  if (g.stiffness < 0) throw InputError("scenario key 'boundary.ground.stiffness' must be >= 0");
  const auto& ri = b.random_impulses;
  if (ri.enabled) {
    if (ri.every < 1) throw InputError("scenario key 'boundary.random_impulses.every' must be >= 1");
    if (!(ri.min_force >= 0 && ri.max_force >= ri.min_force))
      throw InputError("scenario key 'boundary.random_impulses.max_force' must be >= min_force >= 0");
  }
  if (!(t.courant > 0 && t.courant <= 1)) throw InputError("scenario key 'time.courant' must lie in (0, 1]");
  positive("time.max_steps", t.max_steps);
  positive("time.rest_velocity", t.rest_velocity);
  if (t.mode == "dynamic" && t.steps == 0 && t.end_time == 0 && !t.until_rest)
    throw InputError("the scenario never stops: set time.steps, time.end_time or time.until_rest");
  const auto& st = s.static_solve;
  if (st.load_steps < 1) throw InputError("scenario key 'static.load_steps' must be >= 1");
  if (!(st.tolerance > 0 && st.tolerance < 1)) throw InputError("scenario key 'static.tolerance' must lie in (0, 1)");
  if (st.max_iterations < 1) throw InputError("scenario key 'static.max_iterations' must be >= 1");

  const auto& o = s.output;
  if (o.vtk_every < 0) throw InputError("scenario key 'output.vtk_every' must be >= 0");
  if (o.probe_every < 0) throw InputError("scenario key 'output.probe_every' must be >= 0");
  std::set<std::string> names;
  for (size_t i = 0; i < o.probes.size(); ++i) {
    if (o.probes[i].name.empty()) throw InputError("scenario key 'output.probes." + std::to_string(i) + ".name' is empty");
    if (!names.insert(o.probes[i].name).second) throw InputError("duplicate probe name '" + o.probes[i].name + "'");
  }
}

const std::vector<std::string>& scenario_features() {
  static const std::vector<std::string> features = {"boundary.ground", "material.damage", "material.overrides",
                                                       "boundary.random_impulses", "time.rayleigh_stiffness"};
  return features;
}

std::vector<std::string> features_used(const Scenario& s) {
  std::vector<std::string> used;
  if (s.boundary.ground.enabled) used.push_back("boundary.ground");
  if (s.material.damage.enabled) used.push_back("material.damage");
  if (!s.material.overrides.empty()) used.push_back("material.overrides");
  if (s.boundary.random_impulses.enabled) used.push_back("boundary.random_impulses");
  if (s.time.rayleigh_stiffness > 0) used.push_back("time.rayleigh_stiffness");
  return used;
}

Scenario scenario_from_json(const nlohmann::json& doc, const std::string& origin) {
  if (!doc.is_object()) throw InputError(origin + ": a scenario must be a table/object at the top level");
  if (const auto it = doc.find("solver"); it != doc.end() && it->is_object())
    for (auto k = it->begin(); k != it->end(); ++k)
      if (k.key() != "variant")
        // Scenarios written before method sections existed had their method options here.
        throw InputError(origin + ": unknown key 'solver." + k.key() +
                         "' (valid keys here: variant); options of one method live in its own section: " +
                         "[METHOD] " + k.key() + " = ..., or --set METHOD." + k.key() + "=... (elastobench list names them)");
  Scenario s;
  StrictReader reader(doc, "", origin);
  visit(reader, s);
  for (const auto& key : reader.unknown_keys()) {
    if (!doc[key].is_object()) throw InputError(reader.unknown_key_message(key) + "; a method's section is a table");
    s.method_options[key] = doc[key];
  }
  try {
    validate_scenario(s);
  } catch (const InputError& e) {
    throw InputError(origin + ": " + e.what());
  }
  return s;
}

nlohmann::json scenario_to_json(const Scenario& s) {
  Scenario copy = s;
  nlohmann::json out = FieldWriter::write(copy);
  for (auto it = s.method_options.begin(); it != s.method_options.end(); ++it) out[it.key()] = it.value();
  return out;
}

nlohmann::json parse_scenario_text(const std::string& text, const std::string& format, const std::string& origin) {
  if (format == "json") {
    try {
      return parse_json_strictly(text, origin);
    } catch (const nlohmann::json::exception& e) {
      // parse_error, and out_of_range for a number beyond double's range (1e400).
      throw InputError(origin + ": invalid JSON: " + e.what());
    }
  }
  if (format == "toml") {
    try {
      return toml_to_json(toml::parse(checked_toml_text(text, origin), origin));
    } catch (const toml::parse_error& e) {
      std::ostringstream msg;
      msg << origin << ":" << e.source().begin.line << ":" << e.source().begin.column << ": invalid TOML: "
          << e.description();
      throw InputError(msg.str());
    }
  }
  throw InputError("unknown scenario format '" + format + "' (valid: toml, json)");
}

std::string scenario_to_toml(const Scenario& s) {
  // Shortest round-trip numbers print 0.3 rather than 0.29999999999999999; the round-trip test
  // guards that no value changes. Flat tables read better in an edited file than indentation.
  std::string out;
  write_toml_table(out, scenario_to_json(s), "");
  return out + "\n";
}

void apply_override(nlohmann::json& doc, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--set expects KEY=VALUE (e.g. mesh.elements_per_edge=20), got '" + assignment + "'");
  const std::string key = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(text);
  } catch (const nlohmann::json::out_of_range&) {
    throw InputError("--set " + key + ": the number '" + text + "' is out of range");
  } catch (const nlohmann::json::parse_error&) {
    value = text;  // an unquoted word is taken as a string
  }
  // Files are checked for UTF-8 by their parsers; a command-line word is not, and an invalid
  // one would make every later dump() (messages, summary.json) throw.
  try {
    (void)value.dump();
  } catch (const nlohmann::json::type_error&) {
    throw InputError("--set " + key + ": the value is not valid UTF-8 text");
  }
  nlohmann::json* node = &doc;
  std::stringstream path(key);
  std::string part, walked;
  std::vector<std::string> parts;
  while (std::getline(path, part, '.')) parts.push_back(part);
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    if (p.empty()) throw InputError("--set: empty component in key '" + key + "'");
    walked = walked.empty() ? p : walked + "." + p;
    const bool last = i + 1 == parts.size();
    if (node->is_array()) {
      size_t idx;
      try {
        idx = std::stoul(p);
      } catch (...) {
        throw InputError("--set: '" + walked + "' indexes an array and must be a number");
      }
      if (idx > node->size()) throw InputError("--set: index " + p + " out of range in '" + walked + "'");
      if (idx == node->size()) node->push_back(last ? value : nlohmann::json::object());
      node = &(*node)[idx];
      if (last) *node = value;
    } else {
      if (node->is_null()) *node = nlohmann::json::object();
      if (!node->is_object()) throw InputError("--set: '" + walked + "' is inside a value that is not a table");
      if (last)
        (*node)[p] = value;
      else
        node = &(*node)[p];
    }
  }
}

Scenario load_scenario(const std::string& name_or_path, const std::vector<std::string>& overrides) {
  nlohmann::json doc;
  std::string origin;
  const std::filesystem::path p(name_or_path);
  const bool looks_like_path = p.has_extension() || name_or_path.find('/') != std::string::npos;
  if (const auto* b = find_builtin_scenario(name_or_path); b && !looks_like_path) {
    origin = "built-in scenario '" + b->name + "'";
    doc = parse_scenario_text(b->toml, "toml", origin);
  } else if (std::filesystem::exists(p)) {
    origin = p.string();
    const std::string ext = p.extension().string();
    if (ext != ".toml" && ext != ".json")
      throw InputError(origin + ": scenario files must end in .toml or .json");
    doc = parse_scenario_text(read_file_text(p), ext == ".json" ? "json" : "toml", origin);
  } else {
    std::string names;
    for (const auto& b2 : builtin_scenarios()) names += (names.empty() ? "" : ", ") + b2.name;
    throw InputError("unknown scenario '" + name_or_path + "': not a built-in scenario (" + names +
                     ") and no such file");
  }
  for (const auto& o : overrides) apply_override(doc, o);
  if (!overrides.empty()) origin += " with --set overrides";
  return scenario_from_json(doc, origin);
}

}  // namespace eb
