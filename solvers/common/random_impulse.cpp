#include "solvers/common/random_impulse.h"

#include <algorithm>
#include <cmath>

namespace eb {

namespace {
uint64_t splitmix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
}  // namespace

double impulse_uniform(uint64_t seed, uint64_t frame, uint64_t slot) {
  const uint64_t h = splitmix64(splitmix64(splitmix64(seed) ^ frame) ^ slot);
  return double(h >> 11) * 0x1.0p-53;  // 53 random bits
}

std::optional<Impulse> impulse_at(const RandomImpulseSpec& spec, int64_t frame, int64_t num_nodes) {
  if (!spec.enabled || num_nodes <= 0 || spec.every < 1 || frame <= 0 || frame % spec.every != 0) return std::nullopt;
  const uint64_t seed = uint64_t(int64_t(spec.seed)), f = uint64_t(frame);
  Impulse imp;
  imp.frame = frame;
  imp.node = int32_t(std::min<int64_t>(num_nodes - 1, int64_t(impulse_uniform(seed, f, 0) * double(num_nodes))));
  const double magnitude = spec.min_force + (spec.max_force - spec.min_force) * impulse_uniform(seed, f, 1);
  // Uniform direction: z uniform in [-1, 1], azimuth uniform (Archimedes).
  const double z = 2.0 * impulse_uniform(seed, f, 2) - 1.0;
  const double phi = 2.0 * M_PI * impulse_uniform(seed, f, 3);
  const double s = std::sqrt(std::max(0.0, 1.0 - z * z));
  imp.force[0] = magnitude * s * std::cos(phi);
  imp.force[1] = magnitude * s * std::sin(phi);
  imp.force[2] = magnitude * z;
  return imp;
}

}  // namespace eb
