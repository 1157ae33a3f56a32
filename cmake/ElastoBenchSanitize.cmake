include(ElastoBenchFuzz)

# ELASTOBENCH_SANITIZE: a comma-separated list for -fsanitize= (e.g. address,undefined), applied
# to every C/C++ target. scripts/test.sh builds the CPU tests this way into build-asan.
set(ELASTOBENCH_SANITIZE "" CACHE STRING "Sanitizers for host code, e.g. address,undefined (empty: none)")
# Build type `Sanitize` (-O1 -g1), what scripts/test.sh builds: UBSan's checks make GCC's -O2 code
# generation slow (nlohmann::json's templates in every file pay it), and -O1 compiles in about 0.7x
# of -O2's time while its tests run within 1.1-1.3x of -O2's (-Og compiles faster still, but
# without inlining the numerical loops ran 3-10x slower). -g1: the line tables and function names
# the reports print, not the variables (about 0.7x -g's compile time). NDEBUG as in the optimised
# builds, so that both runs test the same code paths.
# project() has already created these entries, empty, for every build type it does not know, so a
# plain set(... CACHE) would leave them empty (the tests then ran at -O0, hexmg 35x slower than
# Release): an empty entry is replaced, one a user set is kept.
foreach(eb_lang C CXX)
  if(NOT CMAKE_${eb_lang}_FLAGS_SANITIZE)
    set(CMAKE_${eb_lang}_FLAGS_SANITIZE "-O1 -g1 -DNDEBUG" CACHE STRING "${eb_lang} flags of the Sanitize build type" FORCE)
  endif()
endforeach()
set(CMAKE_EXE_LINKER_FLAGS_SANITIZE "" CACHE STRING "")
set(CMAKE_SHARED_LINKER_FLAGS_SANITIZE "" CACHE STRING "")
set(CMAKE_STATIC_LINKER_FLAGS_SANITIZE "" CACHE STRING "")
set(CMAKE_MODULE_LINKER_FLAGS_SANITIZE "" CACHE STRING "")
mark_as_advanced(CMAKE_C_FLAGS_SANITIZE CMAKE_CXX_FLAGS_SANITIZE CMAKE_EXE_LINKER_FLAGS_SANITIZE
                 CMAKE_SHARED_LINKER_FLAGS_SANITIZE CMAKE_STATIC_LINKER_FLAGS_SANITIZE CMAKE_MODULE_LINKER_FLAGS_SANITIZE)
if(ELASTOBENCH_SANITIZE)
  # nvcc would need every flag through -Xcompiler, and the CUDA driver's mappings fail under
  # ASan unless protect_shadow_gap=0; the GPU code is checked by compute-sanitizer instead.
  if(ELASTOBENCH_HAVE_CUDA)
    message(FATAL_ERROR "ELASTOBENCH_SANITIZE needs -DELASTOBENCH_CUDA=OFF")
  endif()
  string(REPLACE "," ";" eb_sanitizers "${ELASTOBENCH_SANITIZE}")
  set(eb_sanitize_flags -fsanitize=${ELASTOBENCH_SANITIZE} -fno-omit-frame-pointer)
  if("undefined" IN_LIST eb_sanitizers)
    # UBSan only warns and carries on by default; a finding must fail the test that hit it.
    list(APPEND eb_sanitize_flags -fno-sanitize-recover=undefined)
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${eb_sanitize_flags}>")
  add_link_options(-fsanitize=${ELASTOBENCH_SANITIZE})
  string(JOIN " " eb_sanitize_note ${eb_sanitize_flags})
  message(STATUS "Sanitizers: ${eb_sanitize_note}")
endif()
