# nngraph_add_layer(NAME DIR DEPS...): one library per layer. Sources are the
# .cpp files under DIR/lib (recursively); public headers live in
# DIR/include/nngraph/<layer>/ and install to include/nngraph/<layer>/. A
# layer sees only the include directories of the layers it links, which is
# what enforces the layering; nngraph_check_links below enforces it for
# calls too.
function(nngraph_add_layer NAME DIR)
  get_filename_component(_dir ${DIR} ABSOLUTE)
  nngraph_add_library(${NAME} ${_dir}/lib INCLUDEDIR ${_dir}/include
                      DEPS ${ARGN})
  install(DIRECTORY ${DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()

# nngraph_add_library(NAME SRCDIR [EXCLUDE SUBDIR...] [DEPS LIB...]): one of
# the libraries inside a layer (frontend's eager, autograd, nn, ...), as
# MLIR builds one library per folder over a single include tree. Sources
# are the .cpp files under SRCDIR (recursively, less the EXCLUDEd
# sub-folders, which are libraries of their own); the layer's include
# folder is the caller's INCLUDEDIR (installed once by the caller).
function(nngraph_add_library NAME SRCDIR)
  cmake_parse_arguments(A "" "INCLUDEDIR" "EXCLUDE;DEPS" ${ARGN})
  file(GLOB_RECURSE _srcs CONFIGURE_DEPENDS ${SRCDIR}/*.cpp)
  foreach(_x ${A_EXCLUDE})
    list(FILTER _srcs EXCLUDE REGEX "^${SRCDIR}/${_x}/")
  endforeach()
  add_library(${NAME} ${_srcs})
  target_include_directories(${NAME} PUBLIC
    $<BUILD_INTERFACE:${A_INCLUDEDIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${NAME} PUBLIC ${A_DEPS})
  target_compile_options(${NAME} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  install(TARGETS ${NAME} EXPORT nngraphTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  nngraph_check_links(${NAME})
endfunction()

# nngraph_check_links(LIB): links every object of the static library LIB,
# with only the libraries LIB declares, into a throwaway shared object with
# -z defs. A call into a library LIB does not link (a higher layer, or a
# sibling it does not declare) is then an undefined symbol and fails the
# build, as LLVM's BUILD_SHARED_LIBS builds catch missing LINK_LIBS.
# Skipped with the sanitizers (their runtime is linked into executables).
function(nngraph_check_links LIB)
  if(NNGRAPH_SANITIZE)
    return()
  endif()
  set(_stub ${PROJECT_BINARY_DIR}/linkcheck/${LIB}.cpp)
  file(CONFIGURE OUTPUT ${_stub}
       CONTENT "// Link check of ${LIB} (cmake/NngraphLibrary.cmake).\n")
  add_library(${LIB}_linkcheck SHARED ${_stub})
  target_link_libraries(${LIB}_linkcheck PRIVATE
    "$<LINK_LIBRARY:WHOLE_ARCHIVE,${LIB}>")
  target_link_options(${LIB}_linkcheck PRIVATE LINKER:-z,defs)
  set_target_properties(${LIB}_linkcheck PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/linkcheck)
endfunction()

# nngraph_openmp_spin_at_start(TARGET): the program TARGET gives libgomp
# nngraph's spin (runtime/include/nngraph/runtime/OpenMPStart.h). The
# loader runs the initializers of libraries that do not depend on each
# other last-needed first, and a library's dependencies before it: so the
# program's needed list names libgomp and libdnnl (which needs libgomp),
# then libnngraph_openmp_spin.so, whose initializer then runs before
# libgomp's. --no-as-needed keeps all three listed.
function(nngraph_openmp_spin_at_start TARGET)
  # As linker flags, not libraries: CMake would move a library it links
  # again later (libdnnl) to its last place; the linker lists each at its
  # first.
  set(_first "-Wl,--push-state,--no-as-needed,${OpenMP_gomp_LIBRARY}")
  if(TARGET DNNL::dnnl)
    string(APPEND _first ",$<TARGET_FILE:DNNL::dnnl>")
  endif()
  target_link_libraries(${TARGET} PRIVATE "${_first}" nngraph_openmp_spin
    "-Wl,--pop-state")
endfunction()
