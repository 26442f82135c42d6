# cmake -DIN=<example source> -DOUT=<copy> -DPATCH=<broken_*/patch.cmake> -P patch_source.cmake
# Writes a copy of the example's source with the patch's one change: PATCH_OLD, which must occur
# exactly once (else the example changed under the patch, which then needs updating), becomes
# PATCH_NEW. The copy is rewritten only when it changes.
cmake_minimum_required(VERSION 3.20)
include("${PATCH}")
file(READ "${IN}" text)
string(FIND "${text}" "${PATCH_OLD}" first)
string(FIND "${text}" "${PATCH_OLD}" last REVERSE)
if(first EQUAL -1)
  message(FATAL_ERROR "${PATCH}: its PATCH_OLD text is not in ${IN}: update the patch to the example")
endif()
if(NOT first EQUAL last)
  message(FATAL_ERROR "${PATCH}: its PATCH_OLD text occurs more than once in ${IN}")
endif()
string(REPLACE "${PATCH_OLD}" "${PATCH_NEW}" text "${text}")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
