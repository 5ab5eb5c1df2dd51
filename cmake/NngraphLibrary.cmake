# nngraph_add_layer(NAME DIR DEPS...): one library per layer. Sources are the
# .cpp files under DIR/lib (recursively); public headers live in
# DIR/include/nngraph/<layer>/ and install to include/nngraph/<layer>/. A
# layer sees only the include directories of the layers it links, which is
# what enforces the layering.
function(nngraph_add_layer NAME DIR)
  file(GLOB_RECURSE _srcs CONFIGURE_DEPENDS ${DIR}/lib/*.cpp)
  add_library(${NAME} ${_srcs})
  target_include_directories(${NAME} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/${DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${NAME} PUBLIC ${ARGN})
  target_compile_options(${NAME} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  install(TARGETS ${NAME} EXPORT nngraphTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY ${DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()
