# The install and package test, run by ctest as
#   cmake -DBUILD_DIR=... -DWORK_DIR=... -DCONSUMER_DIR=... [-DGENERATOR=...]
#         [-DCXX_COMPILER=...] [-DLAUNCHER=...] -P RunInstallTest.cmake
# Installs the build tree into a fresh prefix under WORK_DIR, then configures,
# builds and runs tests/install/consumer against that prefix only. Any failing
# step fails the test with that step's output.
foreach(_var BUILD_DIR WORK_DIR CONSUMER_DIR)
  if(NOT ${_var})
    message(FATAL_ERROR "RunInstallTest.cmake: ${_var} is not set")
  endif()
endforeach()

set(_prefix ${WORK_DIR}/prefix)
set(_consumer_build ${WORK_DIR}/consumer-build)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# run_step(NAME COMMAND...): runs a command, failing the test on error.
function(run_step NAME)
  message(STATUS "install test: ${NAME}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc
                  OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "install test: '${NAME}' failed (${_rc}):\n${_out}")
  endif()
  message("${_out}")
endfunction()

run_step("install into ${_prefix}"
  ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${_prefix})

set(_args -S ${CONSUMER_DIR} -B ${_consumer_build}
  -DCMAKE_PREFIX_PATH=${_prefix} -DCMAKE_BUILD_TYPE=Release
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
run_step("configure the consumer" ${CMAKE_COMMAND} ${_args})
run_step("build the consumer" ${CMAKE_COMMAND} --build ${_consumer_build})
run_step("run the consumer" ${_consumer_build}/consumer)
