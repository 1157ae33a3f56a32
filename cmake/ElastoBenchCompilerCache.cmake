# A compiler cache (ccache) in front of the C++, C and CUDA compilers when one is installed, so
# that the second build of a CI run (the sanitizer build) and rebuilds after small edits reuse
# what an earlier build compiled. ELASTOBENCH_CCACHE=OFF turns it off; a launcher the user set
# (CMAKE_<LANG>_COMPILER_LAUNCHER) is kept.
option(ELASTOBENCH_CCACHE "Compile through ccache when it is installed" ON)
set(ELASTOBENCH_CCACHE_NOTE "off")
if(ELASTOBENCH_CCACHE)
  find_program(ELASTOBENCH_CCACHE_PROGRAM ccache)
  if(ELASTOBENCH_CCACHE_PROGRAM)
    foreach(lang CXX C CUDA)
      if(NOT CMAKE_${lang}_COMPILER_LAUNCHER)
        set(CMAKE_${lang}_COMPILER_LAUNCHER ${ELASTOBENCH_CCACHE_PROGRAM})
      endif()
    endforeach()
    set(ELASTOBENCH_CCACHE_NOTE "${ELASTOBENCH_CCACHE_PROGRAM}")
  else()
    set(ELASTOBENCH_CCACHE_NOTE "ccache not found")
  endif()
endif()
