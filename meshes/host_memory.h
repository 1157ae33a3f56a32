#pragma once
// Refusing work that cannot fit in host memory before allocating it: a scenario such as
// mesh.element_size = 1e-5 on the 1 m cantilever (10^13 hexahedra) must end with exit 1 and a
// message giving the estimate and the limit, not with std::bad_alloc or the OOM killer.
#include <cstdint>
#include <string>

namespace eb::mesh {

// The number after `key` (e.g. "VmData:", in kB, or "Threads:") in /proc/self/status; 0 when absent.
uint64_t process_status_number(const std::string& key);

// Resident bytes now (VmRSS) and the peak since the start or the last reset_peak_resident (VmHWM);
// 0 when unknown. reset_peak_resident returns the heap's free memory to the system first (so that
// a following peak counts fresh pages) and returns false where the kernel cannot reset the peak.
uint64_t resident_bytes();
uint64_t peak_resident_bytes();
bool reset_peak_resident();

// Bytes this process may still allocate: MemAvailable from /proc/meminfo, lowered to what the
// cgroup's memory.max leaves above memory.current where a container sets a limit, and to what
// the data-size limit (RLIMIT_DATA, `ulimit -d`) leaves above the process's data (VmData).
// 0: unknown.
uint64_t available_host_memory();

// Lowers the process's data-size limit (RLIMIT_DATA: heap and private writable mappings, not
// the GPU driver's reserved address space) to its data now plus available_host_memory(), so that
// a run larger than the host's memory fails in an allocation (std::bad_alloc, which elastobench
// reports naming the limit, exit 1) rather than being killed by the kernel's out-of-memory
// killer with no message. Never raises a limit already set. Returns the limit in force after the
// call (0: none). Not applied under AddressSanitizer, whose shadow memory is such a mapping.
uint64_t limit_host_memory_to_available();

// Whether limit_host_memory_to_available can set a limit in this build (not under
// AddressSanitizer).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kHostMemoryLimit = false;
#else
constexpr bool kHostMemoryLimit = true;
#endif

// The limit limit_host_memory_to_available() left in force (0: none set or unknown).
uint64_t host_memory_limit();

// What a std::bad_alloc means in a run: "out of host memory: an allocation failed at the
// process's limit of N MB (...)", the limit left out when none is known.
std::string out_of_host_memory_text();

// Throws RuntimeFailure (exit 1) naming `what`, the estimate and the limit when `bytes` (a
// lower bound of what the work needs) exceed available_host_memory(). Does nothing when the
// limit is unknown.
void require_host_memory(double bytes, const std::string& what);

}  // namespace eb::mesh
