# The Debian package test (ctest install.deb), run as
#   cmake -DBUILD_DIR=... -DWORK_DIR=... -DCONSUMER_DIR=... -DSOURCE_DIR=...
#         -DVERSION=... [-DPYTHON=...] [-DGENERATOR=...] [-DCXX_COMPILER=...]
#         [-DLAUNCHER=...] -P RunDebTest.cmake
# Builds the .deb of cmake/Packaging.cmake with cpack into WORK_DIR, checks
# its name and control fields, unpacks it with `dpkg-deb -x` into a scratch
# root and checks the root: every file under usr/, the tools, headers,
# libraries, CMake package and Python module where Debian puts them, every
# file a plain `cmake --install` of the tree installs, the
# Depends naming the Debian package of every shared library a program links;
# runs a tool and (with PYTHON) imports the Python module from the root; then
# configures, builds and runs tests/install/consumer against <root>/usr.
# Says SKIPPED (ctest: skipped) without cpack or dpkg-deb.
foreach(_var BUILD_DIR WORK_DIR CONSUMER_DIR SOURCE_DIR VERSION)
  if(NOT ${_var})
    message(FATAL_ERROR "RunDebTest.cmake: ${_var} is not set")
  endif()
endforeach()
include(${CMAKE_CURRENT_LIST_DIR}/InstallTestSteps.cmake)

find_program(_dpkg_deb dpkg-deb)
find_program(_dpkg dpkg)
if(NOT EXISTS "${CMAKE_CPACK_COMMAND}" OR NOT _dpkg_deb OR NOT _dpkg)
  message("SKIPPED: the Debian package test needs cpack (Debian's cmake) "
          "and dpkg-deb (dpkg): not found on this machine")
  return()
endif()
if(NOT EXISTS ${BUILD_DIR}/CPackConfig.cmake)
  message(FATAL_ERROR "install.deb: ${BUILD_DIR}/CPackConfig.cmake is "
          "missing: reconfigure the build tree (cmake -S . -B build), which "
          "writes it from cmake/Packaging.cmake")
endif()

if(NOT EXISTS ${BUILD_DIR}/bin/nngraph-opt)
  message(FATAL_ERROR "install.deb: ${BUILD_DIR}/bin/nngraph-opt is not "
          "built: build the tree first (cmake --build ${BUILD_DIR}), then "
          "package it")
endif()

set(_out ${WORK_DIR}/cpack)
set(_root ${WORK_DIR}/root)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${_out} ${_root})

# fail(MESSAGE...): a failed check, with the package named.
macro(fail)
  string(JOIN "" _msg ${ARGN})
  message(FATAL_ERROR "install.deb: ${_msg}")
endmacro()

# 1. The package, as a user makes it.
string(TIMESTAMP _t0 "%s")
run_step("cpack -G DEB into ${_out}" ${CMAKE_CPACK_COMMAND} -G DEB
  --config ${BUILD_DIR}/CPackConfig.cmake -B ${_out})
string(TIMESTAMP _t1 "%s")
math(EXPR _secs "${_t1} - ${_t0}")
execute_process(COMMAND ${_dpkg} --print-architecture
  OUTPUT_VARIABLE _arch OUTPUT_STRIP_TRAILING_WHITESPACE)
file(GLOB _debs ${_out}/*.deb)
set(_deb ${_out}/nngraph_${VERSION}_${_arch}.deb)
if(NOT _debs STREQUAL _deb)
  fail("expected cpack to write exactly ${_deb}, found: '${_debs}'")
endif()
file(SIZE ${_deb} _size)
math(EXPR _mib "${_size} / 1048576")
message(STATUS "install test: ${_deb}: ${_mib} MiB, built in ${_secs} s")

# 2. Its control fields.
execute_process(COMMAND ${_dpkg_deb} --field ${_deb}
  OUTPUT_VARIABLE _control RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  fail("dpkg-deb cannot read the control fields of ${_deb}")
endif()
message("${_control}")
foreach(_want "Package: nngraph" "Version: ${VERSION}"
              "Architecture: ${_arch}" "Section: science")
  string(FIND "${_control}" "${_want}\n" _at)
  if(_at EQUAL -1)
    fail("control field '${_want}' missing (cmake/Packaging.cmake)")
  endif()
endforeach()
foreach(_field Maintainer Description Depends)
  if(NOT _control MATCHES "(^|\n)${_field}: [^\n]")
    fail("control field ${_field} is missing or empty (cmake/Packaging.cmake)")
  endif()
endforeach()
string(REGEX MATCH "(^|\n)Depends: [^\n]*" _depends "${_control}")

# 3. Unpacked into the scratch root: only under usr/, and the expected files.
run_step("dpkg-deb -x into ${_root}" ${_dpkg_deb} -x ${_deb} ${_root})
file(GLOB_RECURSE _files LIST_DIRECTORIES false RELATIVE ${_root} ${_root}/*)
list(LENGTH _files _n)
foreach(_f ${_files})
  if(NOT _f MATCHES "^usr/")
    fail("${_f} is outside /usr: an install rule has an absolute or empty "
         "DESTINATION (GNUInstallDirs' CMAKE_INSTALL_*DIR used before "
         "include(GNUInstallDirs)?)")
  endif()
endforeach()
set(_expected
  usr/bin/nngraph-opt usr/bin/nngraph-run usr/bin/nngraph-convert
  usr/bin/nngraph-inspect usr/bin/nngraph-quantize usr/bin/nngraph-view
  usr/bin/nngraph-bench
  usr/include/nngraph/ir/Graph.h usr/include/nngraph/runtime/BuildConfig.h
  usr/include/nngraph/frontend/nn/NN.h
  usr/lib/libnngraph_runtime.a usr/lib/libnngraph_eager.a
  usr/lib/libnngraph_autograd.a usr/lib/libnngraph_nn.a usr/lib/libnngraph_fx.a
  usr/lib/cmake/nngraph/nngraphConfig.cmake
  usr/lib/cmake/nngraph/nngraphConfigVersion.cmake
  usr/lib/cmake/nngraph/nngraphTargets.cmake
  usr/share/nngraph/conformance/skips.txt
  usr/share/nngraph/tools/nngraph-bench/ort_peer.mjs
  usr/share/nngraph/tests/ort/load_ort.mjs
  usr/share/nngraph/tests/ort/tensor_dir.mjs)
set(_site usr/lib/python3/dist-packages)
if(PYTHON)
  list(APPEND _expected ${_site}/nngraph/__init__.py
       ${_site}/nngraph-${VERSION}.dist-info/METADATA)
  file(GLOB _ext RELATIVE ${_root} ${_root}/${_site}/nngraph/_nngraph*.so)
  if(NOT _ext)
    fail("the Python extension is not in /${_site}/nngraph")
  endif()
endif()
foreach(_f ${_expected})
  if(NOT EXISTS ${_root}/${_f})
    fail("/${_f} is not in the package (${_n} files)")
  endif()
endforeach()
# Complete: everything a plain `cmake --install` of the tree installs (the
# default component; it writes its own manifest, install_manifest_Unspecified.txt,
# not the install_manifest.txt that install.consumer reads) is in the package.
set(_plain ${WORK_DIR}/plain)
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR}
    --component Unspecified --prefix ${_plain}
  OUTPUT_VARIABLE _log ERROR_VARIABLE _log RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  fail("cmake --install ${BUILD_DIR} --prefix ${_plain} failed (${_rc}):\n${_log}")
endif()
file(GLOB_RECURSE _installed LIST_DIRECTORIES false RELATIVE ${_plain} ${_plain}/*)
foreach(_f ${_installed})
  if(NOT EXISTS ${_root}/usr/${_f})
    fail("cmake --install installs ${_f} but the package has no /usr/${_f}")
  endif()
endforeach()
file(REMOVE_RECURSE ${_plain})
list(LENGTH _installed _m)
message(STATUS "install test: ${_n} files, all under /usr, the expected ones "
        "there, and the ${_m} files of a plain cmake --install")

# regex_escape(OUT TEXT): TEXT as a regular expression matching itself
# (library and package names have '+' and '.': libstdc++6, libstdc++.so.6).
function(regex_escape OUT TEXT)
  string(REGEX REPLACE "([][+.*?()^$|\\])" "\\\\\\1" _e "${TEXT}")
  set(${OUT} "${_e}" PARENT_SCOPE)
endfunction()

# 4. Depends names the Debian package of every shared library that a
# program (and the Python extension) links, as resolved on this machine
# (dpkg -S); libraries of no Debian package (CUDA's) are reported only.
foreach(_bin usr/bin/nngraph-opt ${_ext})
  execute_process(COMMAND readelf -d ${_root}/${_bin}
    OUTPUT_VARIABLE _dyn RESULT_VARIABLE _rc)
  execute_process(COMMAND ldd ${_root}/${_bin}
    OUTPUT_VARIABLE _ldd ERROR_VARIABLE _ldd RESULT_VARIABLE _rc2)
  if(NOT _rc EQUAL 0 OR NOT _rc2 EQUAL 0 OR _ldd MATCHES "not found")
    fail("cannot list the shared libraries of /${_bin} (readelf -d, ldd; "
         "binutils):\n${_ldd}")
  endif()
  string(REGEX MATCHALL "\\(NEEDED\\)[^[]*\\[[^]]+\\]" _needed "${_dyn}")
  foreach(_lib ${_needed})
    string(REGEX REPLACE ".*\\[(.+)\\]" "\\1" _lib "${_lib}")
    regex_escape(_lib_re "${_lib}")
    string(REGEX MATCH "[\t ]${_lib_re} => ([^ ]+)" _m "${_ldd}")
    set(_path ${CMAKE_MATCH_1})
    if(NOT _path)
      continue()
    endif()
    file(REAL_PATH ${_path} _real)
    string(REGEX REPLACE "^/usr/" "/" _unmerged ${_path})
    set(_pkg "")
    foreach(_p ${_path} /usr${_path} ${_unmerged} ${_real})
      execute_process(COMMAND ${_dpkg} -S ${_p} OUTPUT_VARIABLE _owner
        ERROR_QUIET RESULT_VARIABLE _rc)
      if(_rc EQUAL 0)
        string(REGEX REPLACE "[:,][^\n]*\n.*" "" _pkg "${_owner}")
        break()
      endif()
    endforeach()
    if(NOT _pkg)
      message(STATUS "install test: ${_lib} (${_path}) belongs to no Debian "
              "package: not in Depends")
    endif()
    regex_escape(_pkg_re "${_pkg}")
    if(_pkg AND NOT _depends MATCHES "[ ,]${_pkg_re}( |,|$)")
      fail("/${_bin} links ${_lib} (${_path}, package ${_pkg}) but the "
           "package's Depends lacks ${_pkg}:${_depends}\nInstall dpkg-dev "
           "and file (scripts/setup.sh) so that dpkg-shlibdeps computes it, "
           "or add it to the fixed list in cmake/Packaging.cmake")
    endif()
  endforeach()
endforeach()
message(STATUS "install test: Depends covers the linked libraries")

# 5. A tool from the root runs a pass on the bundled model.
set(_model ${SOURCE_DIR}/examples/models/small_cnn.nng)
execute_process(COMMAND ${_root}/usr/bin/nngraph-opt --version
  OUTPUT_VARIABLE _v ERROR_VARIABLE _v RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0 OR NOT _v MATCHES "nngraph-opt ${VERSION}")
  fail("/usr/bin/nngraph-opt --version from the package failed (${_rc}):\n${_v}")
endif()
execute_process(COMMAND ${_root}/usr/bin/nngraph-opt ${_model} -p fold-conv-bn
  OUTPUT_VARIABLE _g ERROR_VARIABLE _err RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0 OR NOT _g MATCHES "graph \"small_cnn\"" OR
   _g MATCHES "BatchNormalization")
  fail("/usr/bin/nngraph-opt ${_model} -p fold-conv-bn from the package "
       "failed (${_rc}) or left a BatchNormalization:\n${_err}${_g}")
endif()
message(STATUS "install test: /usr/bin/nngraph-opt runs:\n${_v}")

# 6. The Python module imports from the root's dist-packages (and nowhere
# else: PYTHONPATH is replaced) and optimizes the same model.
if(PYTHON)
  set(_code [[
import sys, nngraph
print(nngraph.__version__, nngraph.__file__)
m = nngraph.load(sys.argv[1])
m.optimize("fold-conv-bn")
assert "BatchNormalization" not in str(m), "fold-conv-bn left a BatchNormalization"
]])
  execute_process(COMMAND ${CMAKE_COMMAND} -E env
      PYTHONPATH=${_root}/${_site} PYTHONDONTWRITEBYTECODE=1 PYTHONNOUSERSITE=1
      ${PYTHON} -c "${_code}" ${_model}
    OUTPUT_VARIABLE _py ERROR_VARIABLE _py RESULT_VARIABLE _rc)
  string(FIND "${_py}" "${VERSION} ${_root}/${_site}/nngraph/" _at)
  if(NOT _rc EQUAL 0 OR NOT _at EQUAL 0)
    fail("import nngraph from /${_site} of the package with ${PYTHON} "
         "failed (${_rc}) or found another copy:\n${_py}")
  endif()
  message(STATUS "install test: import nngraph: ${_py}")
else()
  message(STATUS "install test: the build has no Python module: not checked")
endif()

# 7. A CMake project against the package's /usr.
build_consumer(${_root}/usr ${WORK_DIR}/consumer-build)
