# Declared dependencies equal real ones: a library of frontend/lib (one per
# folder, frontend/CMakeLists.txt) includes another library's header only by
# its path under an include directory (the detail/ headers the lower library
# declares), never by a relative path into the other's folder
# (#include "../eager/X.h"), which the build would not see as a dependency.
# Run with cmake -P; fails naming each include.
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=DIR -P RelativeIncludes.cmake")
endif()
file(GLOB_RECURSE Files LIST_DIRECTORIES FALSE
     "${SOURCE_DIR}/frontend/lib/*.cpp" "${SOURCE_DIR}/frontend/lib/*.h")
set(Found "")
foreach(F IN LISTS Files)
  file(STRINGS "${F}" Lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"\\.\\./")
  foreach(L IN LISTS Lines)
    file(RELATIVE_PATH Rel "${SOURCE_DIR}" "${F}")
    string(STRIP "${L}" L)
    string(APPEND Found "  ${Rel}: ${L}\n")
  endforeach()
endforeach()
if(Found)
  message(FATAL_ERROR "includes into another library's folder (include a "
          "header its library declares, e.g. nngraph/frontend/detail/...):\n"
          "${Found}")
endif()
list(LENGTH Files Count)
message(STATUS "${Count} frontend sources, no relative include across libraries")
