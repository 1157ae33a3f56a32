#pragma once
// The seeded random-impulse schedule of a scenario (boundary.random_impulses, Campo 2015's
// interaction: every `every` frames a force of random magnitude on a random particle). Each
// draw is a counter-based hash of (seed, frame, slot) (splitmix64), not a stream of a stateful
// generator, so the impulse of frame k is the same whatever was asked before, on every backend
// and in every run, and a backend can evaluate it for any frame without replaying the others.
#include <cstdint>
#include <optional>

#include "solvers/common/scenario.h"

namespace eb {

struct Impulse {
  int64_t frame = 0;
  int32_t node = 0;
  double force[3] = {0, 0, 0};  // N, acting during that frame only
};

// The impulse of `frame` (0-based: the frame that starts from state `frame`), if any: frames
// k * every for k >= 1. Node uniform in [0, num_nodes), magnitude uniform in
// [min_force, max_force], direction uniform on the sphere.
std::optional<Impulse> impulse_at(const RandomImpulseSpec& spec, int64_t frame, int64_t num_nodes);

// A uniform double in [0, 1) from (seed, frame, slot), the schedule's only source of randomness.
double impulse_uniform(uint64_t seed, uint64_t frame, uint64_t slot);

}  // namespace eb
