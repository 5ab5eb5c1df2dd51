# The Debian package: `cpack -G DEB` in the build tree (or `cmake --build
# build --target package`) writes nngraph_<version>_<arch>.deb with everything
# `cmake --install` installs (the tools in /usr/bin, the layers' static
# libraries in /usr/lib, the headers in /usr/include/nngraph, the CMake
# package in /usr/lib/cmake/nngraph) plus the Python module (component
# `python`) in /usr/lib/python3/dist-packages, where Debian's python3 finds
# it. Depends: the Debian packages of the shared libraries the programs link,
# computed by dpkg-shlibdeps (dpkg-dev and file; scripts/setup.sh installs
# them), else a fixed list. Recommends: what find_package(nngraph) and the
# Python module need beyond that. Included last by the top-level
# CMakeLists.txt; tests/install/RunDebTest.cmake (ctest install.deb) checks it.

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME nngraph)
set(CPACK_PACKAGE_VENDOR "nngraph")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "neural-network models as graphs: optimize, quantize and run ONNX models")
# The long description, in lines of Debian's width (CPack indents them).
string(JOIN "\n" CPACK_PACKAGE_DESCRIPTION
  "nngraph reads ONNX models and PyTorch state dicts (.pt, safetensors,"
  ".npz) into a graph IR with a text format, optimizes them with passes"
  "(conv+batchnorm folding, fusion, pruning, int8 quantization) and runs"
  "them on a CPU backend (oneDNN and an LLVM JIT)."
  "."
  "This package holds the command-line tools (nngraph-opt, nngraph-run,"
  "nngraph-convert, ...), the C++ libraries and headers with their CMake"
  "package (find_package(nngraph)) and the Python module (import nngraph).")
set(CPACK_PACKAGE_CONTACT "nngraph maintainers <nngraph@localhost>")
set(NNGRAPH_PACKAGE_MAINTAINER "${CPACK_PACKAGE_CONTACT}" CACHE STRING
    "Maintainer field of the Debian package (Name <email>)")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${NNGRAPH_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)   # nngraph_<version>_<arch>.deb
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)   # the fastest to write; dpkg reads all

# One package from every install component: the default one, and `python`,
# which a plain `cmake --install` leaves out (it is for virtualenvs) but
# which belongs in a system package.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
get_cmake_property(CPACK_COMPONENTS_ALL COMPONENTS)

# Depends: dpkg-shlibdeps maps every shared library the programs and the
# Python module link to its Debian package (libc6, libstdc++6, libgomp1,
# libdnnl2, libllvm19, libonnx1, libprotobuf32, zlib1g, ...). Without it (no
# dpkg-dev or no `file` here), the same list for Debian 12, by hand.
find_program(NNGRAPH_DPKG_SHLIBDEPS dpkg-shlibdeps)
find_program(NNGRAPH_FILE_PROGRAM file)
if(NNGRAPH_DPKG_SHLIBDEPS AND NNGRAPH_FILE_PROGRAM)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  message(STATUS "nngraph: dpkg-shlibdeps or file not found (scripts/setup.sh "
          "installs dpkg-dev and file): the Debian package's Depends is a "
          "fixed list for Debian 12")
  set(_deps "libc6 (>= 2.34)" "libstdc++6 (>= 12)" "libgcc-s1" "libgomp1"
            "libonnx1" "libprotobuf32" "zlib1g")
  if(NNGRAPH_HAVE_ONEDNN)
    list(APPEND _deps "libdnnl2")
  endif()
  if(NNGRAPH_HAVE_LLVM)
    list(APPEND _deps "libllvm19")
  endif()
  list(JOIN _deps ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
endif()

# Recommends: the development packages the exported CMake package finds or
# links (nngraphConfig.cmake, the layers' link interfaces) and the Python
# module's interpreter and NumPy. Not needed to run the tools.
set(_recs g++ libonnx-dev libprotobuf-dev zlib1g-dev)
if(NNGRAPH_HAVE_ONEDNN)
  list(APPEND _recs libdnnl-dev)
endif()
if(NNGRAPH_HAVE_LLVM)
  list(APPEND _recs llvm-19-dev)
endif()
if(NNGRAPH_HAVE_PYTHON)
  # The extension is built for one interpreter (_nngraph.cpython-XY-...).
  math(EXPR _next_minor "${Python_VERSION_MINOR} + 1")
  list(APPEND _recs
    "python3 (>= ${Python_VERSION_MAJOR}.${Python_VERSION_MINOR})"
    "python3 (<< ${Python_VERSION_MAJOR}.${_next_minor})" python3-numpy)
endif()
list(JOIN _recs ", " CPACK_DEBIAN_PACKAGE_RECOMMENDS)

if(NNGRAPH_HAVE_CUDA)
  message(STATUS "nngraph: the CUDA backend is built: the Debian package's "
          "programs then need the CUDA toolkit's libraries (not a Debian "
          "package) on the machine that installs it; configure with "
          "-DNNGRAPH_ENABLE_CUDA=OFF for a package without them")
endif()

include(CPack)
