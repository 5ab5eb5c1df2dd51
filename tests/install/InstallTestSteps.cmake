# Steps shared by the install tests (RunInstallTest.cmake: `cmake --install`;
# RunDebTest.cmake: the Debian package), included by both:
#   run_step(NAME COMMAND...)           runs a command; a failure fails the
#                                       test with the step's name and output;
#   build_consumer(PREFIX BUILD_DIR)    configures, builds and runs
#                                       tests/install/consumer (CONSUMER_DIR)
#                                       against PREFIX only, honouring
#                                       GENERATOR, CXX_COMPILER and LAUNCHER.

# run_step(NAME COMMAND...): the output is printed either way.
function(run_step NAME)
  message(STATUS "install test: ${NAME}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc
                  OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "install test: '${NAME}' failed (${_rc}):\n${_out}")
  endif()
  message("${_out}")
endfunction()

# build_consumer(PREFIX BUILD_DIR): find_package(nngraph) must resolve inside
# PREFIX, never in the build tree or another install on this machine.
function(build_consumer PREFIX BUILD_DIR)
  set(_args -S ${CONSUMER_DIR} -B ${BUILD_DIR}
    -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
  if(GENERATOR)
    list(APPEND _args -G ${GENERATOR})
  endif()
  if(CXX_COMPILER)
    list(APPEND _args -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
  endif()
  if(LAUNCHER)
    list(APPEND _args -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
  endif()
  run_step("configure the consumer against ${PREFIX}" ${CMAKE_COMMAND} ${_args})
  file(STRINGS ${BUILD_DIR}/CMakeCache.txt _dir REGEX "^nngraph_DIR:")
  string(REGEX REPLACE "^[^=]*=" "" _dir "${_dir}")
  file(REAL_PATH "${_dir}" _dir)
  file(REAL_PATH "${PREFIX}" _real_prefix)
  string(FIND "${_dir}/" "${_real_prefix}/" _at)
  if(NOT _at EQUAL 0)
    message(FATAL_ERROR "install test: the consumer found nngraph in "
            "'${_dir}', not under '${PREFIX}': another nngraph install or "
            "CMAKE_PREFIX_PATH on this machine shadows the one under test")
  endif()
  run_step("build the consumer" ${CMAKE_COMMAND} --build ${BUILD_DIR})
  run_step("run the consumer" ${BUILD_DIR}/consumer)
endfunction()
