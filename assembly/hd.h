#pragma once
// One definition of each element formula for both backends: functions marked EB_HD compile as
// __host__ __device__ under nvcc and as plain inline functions elsewhere.
#if defined(__CUDACC__)
#define EB_HD __host__ __device__ __forceinline__
#else
#define EB_HD inline
#endif
