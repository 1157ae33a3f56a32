# Required dependencies (Debian 12 packages, see scripts/install_deps.sh) and the optional
# components VTK, Gmsh and METIS. An optional component set to AUTO is used when found and
# reported as off otherwise; set to ON it is required.

find_package(Eigen3 3.3 REQUIRED NO_MODULE)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(ZLIB REQUIRED)
find_package(nlohmann_json 3.9 REQUIRED)
find_package(CLI11 REQUIRED)
# toml++ is used header-only so that binaries carry no extra shared library to the GPU machine.
find_path(TOMLPP_INCLUDE_DIR toml++/toml.h REQUIRED)
add_library(eb::tomlplusplus INTERFACE IMPORTED)
set_target_properties(eb::tomlplusplus PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${TOMLPP_INCLUDE_DIR}"
  INTERFACE_COMPILE_DEFINITIONS "TOML_HEADER_ONLY=1;TOML_EXCEPTIONS=1")
find_package(Threads REQUIRED)

if(ELASTOBENCH_BUILD_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
endif()
if(ELASTOBENCH_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()


# VTK
set(ELASTOBENCH_HAVE_VTK OFF)
set(ELASTOBENCH_VTK_NOTE "")
if(NOT ELASTOBENCH_VTK STREQUAL "OFF")
  find_package(VTK 9 QUIET COMPONENTS CommonCore CommonDataModel IOXML IOLegacy IOGeometry IOPLY
               FiltersCore FiltersGeometry)
  if(VTK_FOUND)
    set(ELASTOBENCH_HAVE_VTK ON)
    set(ELASTOBENCH_VTK_NOTE "(${VTK_VERSION})")
  elseif(ELASTOBENCH_VTK STREQUAL "ON")
    message(FATAL_ERROR "ELASTOBENCH_VTK=ON but VTK 9 was not found (Debian: libvtk9-dev)")
  else()
    set(ELASTOBENCH_VTK_NOTE "(not found: built-in readers/writers are used)")
  endif()
else()
  set(ELASTOBENCH_VTK_NOTE "(disabled: built-in readers/writers are used)")
endif()

# Gmsh
set(ELASTOBENCH_HAVE_GMSH OFF)
set(ELASTOBENCH_GMSH_NOTE "")
if(NOT ELASTOBENCH_GMSH STREQUAL "OFF")
  find_path(GMSH_INCLUDE_DIR gmsh.h)
  find_library(GMSH_LIBRARY NAMES gmsh)
  if(GMSH_INCLUDE_DIR AND GMSH_LIBRARY)
    set(ELASTOBENCH_HAVE_GMSH ON)
    add_library(eb::gmsh UNKNOWN IMPORTED)
    set_target_properties(eb::gmsh PROPERTIES IMPORTED_LOCATION "${GMSH_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${GMSH_INCLUDE_DIR}")
    set(ELASTOBENCH_GMSH_NOTE "(${GMSH_LIBRARY})")
  elseif(ELASTOBENCH_GMSH STREQUAL "ON")
    message(FATAL_ERROR "ELASTOBENCH_GMSH=ON but gmsh.h/libgmsh were not found (Debian: libgmsh-dev)")
  else()
    set(ELASTOBENCH_GMSH_NOTE "(not found: surface tetrahedralization is unavailable)")
  endif()
else()
  set(ELASTOBENCH_GMSH_NOTE "(disabled: surface tetrahedralization is unavailable)")
endif()

# METIS
set(ELASTOBENCH_HAVE_METIS OFF)
set(ELASTOBENCH_METIS_NOTE "")
if(NOT ELASTOBENCH_METIS STREQUAL "OFF")
  find_path(METIS_INCLUDE_DIR metis.h)
  find_library(METIS_LIBRARY NAMES metis)
  if(METIS_INCLUDE_DIR AND METIS_LIBRARY)
    set(ELASTOBENCH_HAVE_METIS ON)
    add_library(eb::metis UNKNOWN IMPORTED)
    set_target_properties(eb::metis PROPERTIES IMPORTED_LOCATION "${METIS_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${METIS_INCLUDE_DIR}")
    set(ELASTOBENCH_METIS_NOTE "(${METIS_LIBRARY})")
  elseif(ELASTOBENCH_METIS STREQUAL "ON")
    message(FATAL_ERROR "ELASTOBENCH_METIS=ON but metis.h/libmetis were not found (Debian: libmetis-dev)")
  else()
    set(ELASTOBENCH_METIS_NOTE "(not found: natural node ordering is used)")
  endif()
else()
  set(ELASTOBENCH_METIS_NOTE "(disabled: natural node ordering is used)")
endif()
