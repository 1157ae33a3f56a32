#pragma once
// Refusing work that cannot fit in host memory before allocating it: a scenario such as
// mesh.element_size = 1e-5 on the 1 m cantilever (10^13 hexahedra) must end with exit 1 and a
// message giving the estimate and the limit, not with std::bad_alloc or the OOM killer.
#include <cstdint>
#include <string>

namespace eb::mesh {

// Bytes this process may still allocate: MemAvailable from /proc/meminfo, lowered to what the
// cgroup's memory.max leaves above memory.current where a container sets a limit. 0: unknown.
uint64_t available_host_memory();

// Throws RuntimeFailure (exit 1) naming `what`, the estimate and the limit when `bytes` (a
// lower bound of what the work needs) exceed available_host_memory(). Does nothing when the
// limit is unknown.
void require_host_memory(double bytes, const std::string& what);

}  // namespace eb::mesh
