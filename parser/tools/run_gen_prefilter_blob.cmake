# run_gen_prefilter_blob.cmake: writes OUT (prefilter_blob.cc) with GEN
# (gen_prefilter_blob); when GEN fails, OUT holds no blob (FALLBACK, a copy of
# no_prefilter_blob.cc) and runs compile the literal database themselves.
# cmake -DGEN=... -DOUT=... -DFALLBACK=... -P run_gen_prefilter_blob.cmake
execute_process(COMMAND "${GEN}" "${OUT}.tmp" RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(WARNING "gen_prefilter_blob failed (${rc}): ${err}The literal database will be compiled at run time.")
  file(COPY_FILE "${FALLBACK}" "${OUT}.tmp")
endif()
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
