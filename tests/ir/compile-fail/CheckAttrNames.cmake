# Compiles AttrNameProbe.cpp with -fsyntax-only for one PROBE_CASE and checks
# the outcome: case 0 must compile; any other case must fail, with EXPECT
# (the name of the failed check) in the compiler's output, so the test cannot
# pass because the probe fails for another reason.
#   cmake -DCXX=... -DINCLUDES=a|b|... -DSOURCE=... -DCASE=N [-DEXPECT=...]
#         -P CheckAttrNames.cmake
string(REPLACE "|" ";" _incs "${INCLUDES}")
set(_args)
foreach(_i IN LISTS _incs)
  list(APPEND _args "-I${_i}")
endforeach()
execute_process(
  COMMAND ${CXX} -std=c++20 -fsyntax-only -DPROBE_CASE=${CASE} ${_args}
          ${SOURCE}
  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(CASE EQUAL 0)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "case 0 (names Ops.def declares) does not compile:\n${_out}")
  endif()
  message(STATUS "case 0 compiles")
else()
  if(_rc EQUAL 0)
    message(FATAL_ERROR "case ${CASE} compiled; it must not")
  endif()
  string(FIND "${_out}" "${EXPECT}" _at)
  if(_at EQUAL -1)
    message(FATAL_ERROR "case ${CASE} failed without naming ${EXPECT}:\n${_out}")
  endif()
  message(STATUS "case ${CASE} fails to compile, naming ${EXPECT}")
endif()
