# Fails if the executable BINARY defines a symbol in the mlir:: or llvm:: namespaces, or needs
# libMLIR or libLLVM. Run as: cmake -DBINARY=path -P CheckNoCompilerSymbols.cmake
if(NOT BINARY OR NOT EXISTS "${BINARY}")
  message(FATAL_ERROR "no binary to check: '${BINARY}'")
endif()

execute_process(COMMAND nm -C --defined-only "${BINARY}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE symbols ERROR_VARIABLE errors)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${BINARY}: ${errors}")
endif()
# A stripped binary would pass vacuously: insist on seeing main.
if(NOT symbols MATCHES "[ \t]main\n")
  message(FATAL_ERROR "${BINARY} has no readable symbol table (stripped?); cannot check it")
endif()
string(REGEX MATCHALL "[^\n]*(mlir|llvm)::[^\n]*" hits "${symbols}")
if(hits)
  list(LENGTH hits count)
  list(SUBLIST hits 0 10 shown)
  string(REPLACE ";" "\n  " shown "${shown}")
  message(FATAL_ERROR "${BINARY} defines ${count} mlir:: or llvm:: symbols, e.g.\n  ${shown}")
endif()

execute_process(COMMAND readelf -d "${BINARY}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE dynamic ERROR_VARIABLE errors)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf failed on ${BINARY}: ${errors}")
endif()
string(REGEX MATCHALL "NEEDED[^\n]*lib(MLIR|LLVM)[^\n]*" needed "${dynamic}")
if(needed)
  message(FATAL_ERROR "${BINARY} links compiler libraries: ${needed}")
endif()
message(STATUS "${BINARY}: no mlir:: or llvm:: symbols, no MLIR/LLVM libraries")
