# The house rule "no file over ~800 lines", checked rather than remembered:
# every source file of the project (C++ sources and headers, .def tables,
# Python and JavaScript, CMake files) under SOURCE_DIR, third_party and
# build trees aside, has at most LIMIT lines. Generated documents
# (docs/*.md) are not sources. Run with cmake -P; fails naming each file
# over the limit and its length.
if(NOT SOURCE_DIR OR NOT LIMIT)
  message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=DIR -DLIMIT=N -P FileLengths.cmake")
endif()
set(Roots backends bench cmake examples frontend ir passes python rewrite runtime
          scripts tests tools)
set(Over "")
set(Count 0)
foreach(Root IN LISTS Roots)
  file(GLOB_RECURSE Files LIST_DIRECTORIES FALSE
       "${SOURCE_DIR}/${Root}/*.cpp" "${SOURCE_DIR}/${Root}/*.h"
       "${SOURCE_DIR}/${Root}/*.def" "${SOURCE_DIR}/${Root}/*.py"
       "${SOURCE_DIR}/${Root}/*.mjs" "${SOURCE_DIR}/${Root}/*.cmake"
       "${SOURCE_DIR}/${Root}/CMakeLists.txt")
  foreach(F IN LISTS Files)
    # file(STRINGS) skips empty lines: count newlines instead.
    file(READ "${F}" Text)
    string(REGEX MATCHALL "\n" NewLines "${Text}")
    list(LENGTH NewLines N)
    math(EXPR Count "${Count} + 1")
    if(N GREATER LIMIT)
      file(RELATIVE_PATH Rel "${SOURCE_DIR}" "${F}")
      string(APPEND Over "  ${Rel}: ${N} lines\n")
    endif()
  endforeach()
endforeach()
if(Over)
  message(FATAL_ERROR "files over ${LIMIT} lines (split them by job):\n${Over}")
endif()
message(STATUS "${Count} source files, none over ${LIMIT} lines")
