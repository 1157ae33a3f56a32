# ELASTOBENCH_FUZZ: libFuzzer targets for every parser (tests/fuzz), built with clang only. The
# whole tree gets coverage instrumentation (the parsers live in eb_meshes and eb_common), and
# address,undefined are the sanitizers unless ELASTOBENCH_SANITIZE names others. OFF by default:
# the normal build needs no clang; the regression inputs are replayed by every build.
option(ELASTOBENCH_FUZZ "Build the libFuzzer targets (clang; implies address,undefined sanitizers)" OFF)
if(ELASTOBENCH_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "ELASTOBENCH_FUZZ needs clang (e.g. CXX=clang++ CC=clang); found ${CMAKE_CXX_COMPILER_ID}")
  endif()
  if(NOT ELASTOBENCH_SANITIZE)
    set(ELASTOBENCH_SANITIZE "address,undefined" CACHE STRING "" FORCE)
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=fuzzer-no-link>")
  add_link_options(-fsanitize=fuzzer-no-link)
endif()
