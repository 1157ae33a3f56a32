include(ElastoBenchFuzz)

# ELASTOBENCH_SANITIZE: a comma-separated list for -fsanitize= (e.g. address,undefined), applied
# to every C/C++ target. scripts/test.sh builds the CPU tests this way into build-asan.
set(ELASTOBENCH_SANITIZE "" CACHE STRING "Sanitizers for host code, e.g. address,undefined (empty: none)")
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
