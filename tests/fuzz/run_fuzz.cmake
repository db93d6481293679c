# SPDX-License-Identifier: MIT
# Runs one libFuzzer harness for SECONDS over the seed corpus SEEDS (read only) with a fresh
# working corpus WORK (and the dictionary DICT, if given); fails on any finding (crash, sanitizer report, leak, RSS above the limit,
# a slow unit). Prints the final stats, among them stat::number_of_executed_units.
foreach(v HARNESS SEEDS WORK SECONDS)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_fuzz.cmake: ${v} not set")
  endif()
endforeach()
# DICT (optional): a libFuzzer dictionary of the reader's tokens, passed with -dict=.
set(dict_arg "")
if(DEFINED DICT AND NOT DICT STREQUAL "")
  set(dict_arg "-dict=${DICT}")
endif()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/corpus" "${WORK}/artifacts")
execute_process(
  COMMAND "${HARNESS}" -max_total_time=${SECONDS} -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10
          -max_len=65536 -print_final_stats=1 -artifact_prefix=${WORK}/artifacts/ ${dict_arg}
          "${WORK}/corpus" "${SEEDS}"
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
string(REGEX MATCHALL "stat::[a-z_]+: *[0-9]+|Dictionary: [0-9]+ entries" stats "${err}")
string(REPLACE ";" "\n  " stats "${stats}")
message(STATUS "${HARNESS}:\n  ${stats}")
if(NOT rc EQUAL 0)
  string(LENGTH "${err}" n)
  if(n GREATER 20000)
    math(EXPR start "${n} - 20000")
    string(SUBSTRING "${err}" ${start} 20000 err)
  endif()
  message(FATAL_ERROR "fuzzing found a problem (exit ${rc}); the input is in ${WORK}/artifacts\n${err}")
endif()
