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

# A header + library found by path (Debian ships no CMake config for Gmsh or METIS): sets
# ELASTOBENCH_HAVE_<NAME>, ELASTOBENCH_<NAME>_NOTE and the imported target eb::<target>.
function(eb_optional_library NAME option header library target package missing_note)
  set(have OFF)
  if(NOT ${option} STREQUAL "OFF")
    find_path(${NAME}_INCLUDE_DIR ${header})
    find_library(${NAME}_LIBRARY NAMES ${library})
    if(${NAME}_INCLUDE_DIR AND ${NAME}_LIBRARY)
      set(have ON)
      add_library(eb::${target} UNKNOWN IMPORTED GLOBAL)
      set_target_properties(eb::${target} PROPERTIES IMPORTED_LOCATION "${${NAME}_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${${NAME}_INCLUDE_DIR}")
      set(note "(${${NAME}_LIBRARY})")
    elseif(${option} STREQUAL "ON")
      message(FATAL_ERROR "ELASTOBENCH_${NAME}=ON but ${header}/lib${library} were not found (Debian: ${package})")
    else()
      set(note "(not found: ${missing_note})")
    endif()
  else()
    set(note "(disabled: ${missing_note})")
  endif()
  set(ELASTOBENCH_HAVE_${NAME} ${have} PARENT_SCOPE)
  set(ELASTOBENCH_${NAME}_NOTE "${note}" PARENT_SCOPE)
endfunction()

eb_optional_library(GMSH "${ELASTOBENCH_GMSH}" gmsh.h gmsh gmsh libgmsh-dev "surface tetrahedralization is unavailable")
eb_optional_library(METIS "${ELASTOBENCH_METIS}" metis.h metis metis libmetis-dev "natural node ordering is used")
