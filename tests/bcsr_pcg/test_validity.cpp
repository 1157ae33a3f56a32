// Validity and bad input. The last state of a run is checked when it is copied out. A load that inverts elements (gravity x 2,000 on the loaded box) is
// counted: inverted_element_steps > 0, and the element and step it names are checked against det F
// computed here from the states themselves (ValidityCounts: "a step number names the state it
// produced"; the Rotation of step k checks the state of step k - 1). Bad input is an InputError
// that names what is wrong: an inverted reference element in a mesh file (a tiny .vtu written
// here), boundary.prescribed (not supported), an unknown or out-of-range [bcsr-pcg] key, an
// unknown variant.
#include <cstdio>

#include "meshes/errors.h"
#include "tests/bcsr_pcg/bcsr_pcg_test_util.h"

namespace eb::bcsr_pcg::test {
namespace {

class Validity : public ::testing::TestWithParam<Regime> {};

TEST_P(Validity, InvertedElementsAreCountedWithElementAndStep) {
  const Regime r = GetParam();
  EB_BCSR_PCG_SKIP_WITHOUT_DEVICE(r);
  auto sim = make(test_box({"boundary.gravity=[0.0, -19620.0, -6000.0]"}), r);
  const BcsrPcgSetup& s = sim->setup();
  EXPECT_TRUE(sim->validity().det_f_checked);
  EXPECT_EQ(sim->validity().inverted_threshold, 0.0);
  // fp32 states carry rounding: a det F within this of 0 may be counted either way.
  const double slack = r.precision == Precision::Fp32 ? 1e-5 : 1e-12;
  std::vector<std::vector<double>> states;  // states[k]: the state of step k
  std::vector<double> u, v;
  sim->copy_state_to_host(u, v);
  states.push_back(u);
  int steps = 0;
  while (steps < 200 && sim->validity().inverted_element_steps == 0) {
    sim->advance(1);
    ++steps;
    sim->copy_state_to_host(u, v);
    states.push_back(u);
  }
  const ValidityCounts c = sim->validity();
  ASSERT_GT(c.inverted_element_steps, 0) << "no inversion in " << steps << " steps";
  std::printf("%s: first inversion reported at step %lld, element %lld (%lld inverted), after %d steps; min det F %.3f\n",
              regime_label(r).c_str(), (long long)c.first_inverted_step, (long long)c.first_inverted_element,
              (long long)c.inverted_element_steps, steps, c.min_det_f);
  ASSERT_GE(c.first_inverted_step, 0);
  ASSERT_LT(c.first_inverted_step, int64_t(states.size()));
  ASSERT_GE(c.first_inverted_element, 0);
  ASSERT_LT(c.first_inverted_element, s.num_elements);
  EXPECT_LE(c.min_det_f, 0.0);
  // The named state has the named element inverted, and it is the lowest-numbered one there; no
  // earlier state has an inverted element.
  const std::vector<double> det = determinants(s, states[size_t(c.first_inverted_step)]);
  EXPECT_LE(det[size_t(c.first_inverted_element)], slack) << "named element's det F";
  int64_t first = -1, count = 0;
  for (size_t e = 0; e < det.size(); ++e)
    if (det[e] <= 0) {
      if (first < 0) first = int64_t(e);
      ++count;
    }
  if (r.precision == Precision::Fp64) {
    EXPECT_EQ(c.first_inverted_element, first);
    EXPECT_EQ(c.inverted_element_steps, count);
  }
  for (int64_t k = 0; k < c.first_inverted_step; ++k)
    for (double d : determinants(s, states[size_t(k)])) ASSERT_GT(d, -slack) << "state " << k << " was inverted already";
  // Counts are cumulative: going on never forgets the first inversion.
  sim->advance(2);
  const ValidityCounts later = sim->validity();
  EXPECT_EQ(later.first_inverted_step, c.first_inverted_step);
  EXPECT_EQ(later.first_inverted_element, c.first_inverted_element);
  EXPECT_GE(later.inverted_element_steps, c.inverted_element_steps);
}

// A step's Rotation checks the state the step starts from, so the last state of advance() is
// checked only when it is copied out (copy_state_to_host, as the runner's final sample does); the
// next step counts that state itself, and the two must not add up.
TEST_P(Validity, LastStateIsCheckedWhenCopiedOut) {
  const Regime r = GetParam();
  EB_BCSR_PCG_SKIP_WITHOUT_DEVICE(r);
  const std::vector<std::string> load = {"boundary.gravity=[0.0, -19620.0, -6000.0]"};
  std::vector<double> u, v;
  int64_t first = -1;  // the first inverted state, found step by step
  {
    auto probe = make(test_box(load), r);
    for (int k = 0; k < 200 && probe->validity().inverted_element_steps == 0; ++k) {
      probe->advance(1);
      probe->copy_state_to_host(u, v);
    }
    first = probe->validity().first_inverted_step;
  }
  ASSERT_GT(first, 0);
  auto sim = make(test_box(load), r);
  sim->advance(int(first));  // the inverted state is the last one: no step has started from it
  EXPECT_EQ(sim->validity().inverted_element_steps, 0);
  sim->copy_state_to_host(u, v);
  const ValidityCounts seen = sim->validity();
  ASSERT_GT(seen.inverted_element_steps, 0);
  EXPECT_EQ(seen.first_inverted_step, first);
  sim->advance(1);  // starts from that state and counts it: once, not twice
  EXPECT_EQ(sim->validity().inverted_element_steps, seen.inverted_element_steps);
  EXPECT_EQ(sim->validity().first_inverted_step, first);
}

// The InputError's message, or "" when `f` throws none.
template <class F>
std::string input_error(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST_P(Validity, BadInputIsAnInputErrorNamingIt) {
  const Regime r = GetParam();
  EB_BCSR_PCG_SKIP_WITHOUT_DEVICE(r);
  // Two tetrahedra sharing a face, the second inverted (corners 2 and 3 swapped).
  {
    const std::vector<mesh::Vec3> nodes = {{0, 0, 0}, {0.02, 0, 0}, {0, 0.02, 0}, {0, 0, 0.02}, {0.02, 0.02, 0.02}};
    TempMesh file(nodes, {{0, 1, 2, 3}, {1, 3, 2, 4}});  // (1,3,2,4): negative volume
    const std::string msg = input_error([&] { make(single_element(file.path()), r); });
    EXPECT_NE(msg.find("inverted"), std::string::npos) << msg;
    EXPECT_NE(msg.find("index 1"), std::string::npos) << msg;  // "element 2 [index 1]"
  }
  std::string msg = input_error([&] {
    make(test_box({"boundary.prescribed=[{components = \"z\", displacement = [0.0, 0.0, -0.001], where = { kind = "
                   "\"plane\", point = [0.12, 0.0, 0.0], normal = [1.0, 0.0, 0.0] }}]"}),
         r);
  });
  EXPECT_NE(msg.find("prescribed"), std::string::npos) << msg;
  msg = input_error([&] { make(test_box({"bcsr-pcg.cg_iteration=5"}), r); });
  EXPECT_NE(msg.find("bcsr-pcg.cg_iteration"), std::string::npos) << msg;
  // The registry refuses the key before anything is built, naming it too.
  msg = input_error([&] { methods().resolve(test_box({"bcsr-pcg.cg_iteration=5"}), "bcsr-pcg", r.backend, r.precision); });
  EXPECT_NE(msg.find("bcsr-pcg.cg_iteration"), std::string::npos) << msg;
  msg = input_error([&] { make(test_box({"bcsr-pcg.cg_iterations=0"}), r); });
  EXPECT_NE(msg.find("bcsr-pcg.cg_iterations"), std::string::npos) << msg;
  msg = input_error([&] { make(test_box({"bcsr-pcg.node_order=\"spiral\""}), r); });
  EXPECT_NE(msg.find("bcsr-pcg.node_order"), std::string::npos) << msg;
  msg = input_error([&] { make(test_box({"bcsr-pcg.cg_single_reduction=\"sometimes\""}), r); });
  EXPECT_NE(msg.find("bcsr-pcg.cg_single_reduction"), std::string::npos) << msg;
  msg = input_error([&] { make(test_box({"bcsr-pcg.cg_l2_residency=\"yes\""}), r); });
  EXPECT_NE(msg.find("bcsr-pcg.cg_l2_residency"), std::string::npos) << msg;
  msg = input_error([&] { make(test_box(), r, 1, "colouring"); });
  EXPECT_NE(msg.find("colouring"), std::string::npos) << msg;
}

INSTANTIATE_TEST_SUITE_P(BcsrPcg, Validity, ::testing::ValuesIn(regimes()), regime_name);

}  // namespace
}  // namespace eb::bcsr_pcg::test
