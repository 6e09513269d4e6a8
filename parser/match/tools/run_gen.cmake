# run_gen.cmake: writes OUT (a generated .cc) with GEN (gen_prefilter_blob or
# gen_fast_code); when GEN fails, OUT is FALLBACK (no_prefilter_blob.cc: runs
# compile the literal database themselves; no_fast_code.cc: every fast layout
# is interpreted). Either way the results are the same, only slower.
# OUT is rewritten each time (GEN is newer), so make does not rerun this.
# cmake -DGEN=... -DOUT=... -DFALLBACK=... -P run_gen.cmake
execute_process(COMMAND "${GEN}" "${OUT}.tmp" RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  get_filename_component(gen_name "${GEN}" NAME)
  message(WARNING "${gen_name} failed (${rc}): ${err}The build uses ${FALLBACK} instead (same results, slower).")
  file(COPY_FILE "${FALLBACK}" "${OUT}.tmp")
endif()
file(RENAME "${OUT}.tmp" "${OUT}")
