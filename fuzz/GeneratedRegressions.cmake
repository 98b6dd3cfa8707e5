# Regression inputs of fuzz_model that are one pattern repeated thousands of times: written
# into the build tree at configure time rather than kept as 200 KB of source. Each once crashed
# dp (a stack overflow in the parser); ctest replays them with the ones in regressions/model.
function(dp_write_repeated path prefix unit count middle unit2 count2 suffix)
  string(REPEAT "${unit}" ${count} body)
  set(body2 "")
  if(count2 GREATER 0)
    string(REPEAT "${unit2}" ${count2} body2)
  endif()
  set(text "${prefix}${body}${middle}${body2}${suffix}")
  # Rewritten only when different, so a reconfigure does not touch the files' times.
  if(EXISTS "${path}")
    file(READ "${path}" old)
    if(old STREQUAL text)
      return()
    endif()
  endif()
  file(WRITE "${path}" "${text}")
endfunction()

set(dir "${CMAKE_CURRENT_BINARY_DIR}/regressions/model")
file(MAKE_DIRECTORY "${dir}")
set(affine "module { func.func @f() attributes {m = affine_map<(d0) -> (")
set(tail "d0)>} { return } }\n")
# An affine expression of 60,000 unary minus signs, and one of 20,000 terms: recursion without
# brackets.
dp_write_repeated("${dir}/affine-60000-minus.mlir" "${affine}" "-" 60000 "" "" 0 "${tail}")
dp_write_repeated("${dir}/affine-20000-terms.mlir" "${affine}" "d0+" 19999 "" "" 0 "${tail}")
# 10,000 nested array attributes, and 5,000 nested modules.
dp_write_repeated("${dir}/nested-array-attr.mlir" "module attributes {a = " "[" 10000 "" "]" 10000
                  "} {}\n")
dp_write_repeated("${dir}/nested-modules-5000.mlir" "" "module {\n" 5000 "" "}\n" 5000 "")
