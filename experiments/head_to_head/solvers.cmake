# The solver comparison's peers (part `solvers`, solver_*.cpp): each optional library is found
# here; a build without it still compiles, and the part lists that solver with the reason.
#   hypre (Debian libhypre-dev, with OpenMPI): BoomerAMG-PCG, run in one MPI process
#   CHOLMOD (Debian libsuitesparse-dev): the supernodal sparse Cholesky, through Eigen
#   cuSPARSE (CUDA toolkit): linalg's CG with the vendor SpMV (eb_linalg_cusparse)
target_link_libraries(eb_experiment_head_to_head PUBLIC eb_linalg_cusparse)
if(ELASTOBENCH_HAVE_CUDA)
  target_sources(eb_experiment_head_to_head PRIVATE ${CMAKE_CURRENT_LIST_DIR}/solver_device.cu)
endif()

# OFF for a build whose binaries run where these libraries are not installed (the GPU machine's
# build-device: the part then lists those solvers as absent).
option(ELASTOBENCH_HYPRE "head-to-head: hypre BoomerAMG-PCG in the solver comparison, when found" ON)
option(ELASTOBENCH_CHOLMOD "head-to-head: CHOLMOD in the solver comparison, when found" ON)
if(ELASTOBENCH_HYPRE)
  find_path(EB_HYPRE_INCLUDE_DIR HYPRE.h PATH_SUFFIXES hypre)
  find_library(EB_HYPRE_LIBRARY HYPRE)
  find_package(MPI COMPONENTS C QUIET)
endif()
if(ELASTOBENCH_HYPRE AND EB_HYPRE_INCLUDE_DIR AND EB_HYPRE_LIBRARY AND MPI_C_FOUND)
  target_include_directories(eb_experiment_head_to_head SYSTEM PRIVATE ${EB_HYPRE_INCLUDE_DIR})
  target_link_libraries(eb_experiment_head_to_head PRIVATE ${EB_HYPRE_LIBRARY} MPI::MPI_C)
  target_compile_definitions(eb_experiment_head_to_head PRIVATE EB_H2H_HAVE_HYPRE)
  message(STATUS "  head-to-head  : hypre ${EB_HYPRE_LIBRARY} (elastobench then needs libHYPRE and OpenMPI at run "
                 "time: a build for the GPU machine, which has neither, takes -DELASTOBENCH_HYPRE=OFF)")
else()
  message(STATUS "  head-to-head  : no hypre (ELASTOBENCH_HYPRE=${ELASTOBENCH_HYPRE}; Debian libhypre-dev): the solver part skips BoomerAMG")
endif()

if(ELASTOBENCH_CHOLMOD)
  find_path(EB_CHOLMOD_INCLUDE_DIR cholmod.h PATH_SUFFIXES suitesparse)
  find_library(EB_CHOLMOD_LIBRARY cholmod)
endif()
if(ELASTOBENCH_CHOLMOD AND EB_CHOLMOD_INCLUDE_DIR AND EB_CHOLMOD_LIBRARY)
  target_include_directories(eb_experiment_head_to_head SYSTEM PRIVATE ${EB_CHOLMOD_INCLUDE_DIR})
  target_link_libraries(eb_experiment_head_to_head PRIVATE ${EB_CHOLMOD_LIBRARY})
  target_compile_definitions(eb_experiment_head_to_head PRIVATE EB_H2H_HAVE_CHOLMOD)
  message(STATUS "  head-to-head  : CHOLMOD ${EB_CHOLMOD_LIBRARY} (needs libcholmod at run time: a build for the GPU "
                 "machine takes -DELASTOBENCH_CHOLMOD=OFF)")
else()
  message(STATUS "  head-to-head  : no CHOLMOD (ELASTOBENCH_CHOLMOD=${ELASTOBENCH_CHOLMOD}; Debian libsuitesparse-dev): the solver part skips it")
endif()

# cupy_cg.py beside this file: the part finds it here, or under the working directory (a run
# from the repository root on another machine).
target_compile_definitions(eb_experiment_head_to_head PRIVATE EB_H2H_SOURCE_DIR="${CMAKE_CURRENT_LIST_DIR}")
