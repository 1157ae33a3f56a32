# Folder discovery: a method, an experiment or a test folder is picked up by being there (a
# folder with a CMakeLists.txt), so adding one needs no edit elsewhere. CONFIGURE_DEPENDS makes
# the build re-run CMake when a folder appears or goes.
#
# eb_subfolders(OUT DIR) - the names of DIR's subfolders that have a CMakeLists.txt, sorted.
function(eb_subfolders out dir)
  file(GLOB children LIST_DIRECTORIES true CONFIGURE_DEPENDS RELATIVE ${dir} ${dir}/*/CMakeLists.txt)
  set(names "")
  foreach(child IN LISTS children)
    get_filename_component(name ${child} DIRECTORY)
    list(APPEND names ${name})
  endforeach()
  list(SORT names)
  set(${out} ${names} PARENT_SCOPE)
endfunction()

# eb_is_method_folder(OUT NAME) - TRUE when solvers/NAME is a method (it defines
# register_method_NAME in register_NAME.cpp); other solvers/ folders are shared libraries.
function(eb_is_method_folder out name)
  if(EXISTS ${PROJECT_SOURCE_DIR}/solvers/${name}/register_${name}.cpp)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

# eb_filter_folders(LIST_VAR SELECTION) - keeps the names in LIST_VAR that SELECTION (all, none,
# or a ;-list) selects.
function(eb_filter_folders list_var selection)
  set(names ${${list_var}})
  if(selection STREQUAL "none")
    set(names "")
  elseif(NOT selection STREQUAL "all")
    string(REPLACE ";" "|" wanted "${selection}")
    list(FILTER names INCLUDE REGEX "^(${wanted})$")
  endif()
  set(${list_var} ${names} PARENT_SCOPE)
endfunction()
