# The install and package test, run by ctest as
#   cmake -DBUILD_DIR=... -DWORK_DIR=... -DCONSUMER_DIR=... [-DGENERATOR=...]
#         [-DCXX_COMPILER=...] [-DLAUNCHER=...] -P RunInstallTest.cmake
# Installs the build tree into a fresh prefix under WORK_DIR, checks that
# every installed file is under it, then configures, builds and runs
# tests/install/consumer against that prefix only (InstallTestSteps.cmake).
# Any failing step fails the test with that step's output.
foreach(_var BUILD_DIR WORK_DIR CONSUMER_DIR)
  if(NOT ${_var})
    message(FATAL_ERROR "RunInstallTest.cmake: ${_var} is not set")
  endif()
endforeach()

set(_prefix ${WORK_DIR}/prefix)
set(_consumer_build ${WORK_DIR}/consumer-build)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

include(${CMAKE_CURRENT_LIST_DIR}/InstallTestSteps.cmake)

run_step("install into ${_prefix}"
  ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${_prefix})
# Every installed file lands under the prefix (an empty CMAKE_INSTALL_*DIR
# makes an absolute destination that a root install writes outside it).
file(STRINGS ${BUILD_DIR}/install_manifest.txt _installed)
foreach(_f ${_installed})
  string(FIND "${_f}" "${_prefix}/" _at)
  if(NOT _at EQUAL 0)
    message(FATAL_ERROR "install test: ${_f} was installed outside the "
            "prefix ${_prefix}: its install rule has an absolute or empty "
            "DESTINATION (GNUInstallDirs' CMAKE_INSTALL_*DIR used before "
            "include(GNUInstallDirs)?)")
  endif()
endforeach()
build_consumer(${_prefix} ${_consumer_build})
