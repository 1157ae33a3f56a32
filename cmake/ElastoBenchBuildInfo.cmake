# Build provenance for summary.json: the git commit is read at build time (not configure time)
# so a rebuild after a commit records the right one; the file is only rewritten when it changes.
set(EB_BUILD_INFO_CPP ${PROJECT_BINARY_DIR}/generated/build_info.cpp)
add_custom_target(eb_build_info_gen
  COMMAND ${CMAKE_COMMAND} -DSRC=${PROJECT_SOURCE_DIR} -DOUT=${EB_BUILD_INFO_CPP}
          -DBUILD_TYPE=${CMAKE_BUILD_TYPE} -DCXX_ID=${CMAKE_CXX_COMPILER_ID}
          -DCXX_VERSION=${CMAKE_CXX_COMPILER_VERSION} -DCUDA_VERSION=${CMAKE_CUDA_COMPILER_VERSION}
          -P ${PROJECT_SOURCE_DIR}/cmake/write_build_info.cmake
  BYPRODUCTS ${EB_BUILD_INFO_CPP}
  COMMENT "Recording git commit and build settings")
