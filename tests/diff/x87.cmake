# The x87 differential test (tests/diff/README-x87.md), kept apart from the
# integer one's CMake lines:
#   x87gen       a 64-bit host program (x86-64 only) running every template
#                on the host's x87, writing x87-records.bin;
#   test_x87diff replays the records through the interpreter.
set(NICEMU_X87_SEED 20261207 CACHE STRING "Seed of the x87 differential test inputs")
set(NICEMU_X87_PERCENT 100 CACHE STRING "Scale of the x87 differential case counts, in percent")
set(X87_SRC ${CMAKE_CURRENT_LIST_DIR})
set(X87_RECORDS ${CMAKE_CURRENT_BINARY_DIR}/x87-records.bin)

if(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  message(WARNING "tests/diff: not an x86-64 host: the x87 differential test is skipped")
  return()
endif()

add_executable(x87gen ${X87_SRC}/x87gen.c ${X87_SRC}/x87_table.c)
add_executable(test_x87diff ${X87_SRC}/test_x87diff.c ${X87_SRC}/x87_table.c ${X87_SRC}/diff_machine.c)
target_include_directories(test_x87diff PRIVATE ${X87_SRC})
target_link_libraries(test_x87diff PRIVATE nicemu_core)

add_test(NAME x87diff/generate
         COMMAND x87gen ${NICEMU_X87_SEED} ${X87_RECORDS} ${NICEMU_X87_PERCENT})
set_tests_properties(x87diff/generate PROPERTIES FIXTURES_SETUP x87_records)
foreach(group arith compare load store unary trans control)
  add_test(NAME x87diff/${group} COMMAND test_x87diff -p /x87/${group})
  set_tests_properties(x87diff/${group} PROPERTIES FIXTURES_REQUIRED x87_records
                       ENVIRONMENT NICEMU_X87_RECORDS=${X87_RECORDS})
endforeach()
