# run_gen_prefilter_blob.cmake: writes OUT (prefilter_blob_data.cc) with GEN
# (gen_prefilter_blob); when GEN fails, OUT holds no blob (FALLBACK, a copy of
# no_prefilter_blob.cc) and runs compile the literal database themselves.
# OUT is rewritten each time (GEN is newer), so make does not rerun this.
# cmake -DGEN=... -DOUT=... -DFALLBACK=... -P run_gen_prefilter_blob.cmake
execute_process(COMMAND "${GEN}" "${OUT}.tmp" RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(WARNING "gen_prefilter_blob failed (${rc}): ${err}The literal database will be compiled at run time.")
  file(COPY_FILE "${FALLBACK}" "${OUT}.tmp")
endif()
file(RENAME "${OUT}.tmp" "${OUT}")
