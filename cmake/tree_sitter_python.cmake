# tree-sitter-python: the grammar's generated C sources, fetched at setup time by
# scripts/fetch_tree_sitter_python.sh (pinned version, sha512-checked, git-ignored),
# compiled here into a static library and linked with Debian's libtree-sitter
# runtime (libtree-sitter-dev). Defines the target oomlens_tree_sitter_python.

set(OOMLENS_TS_PYTHON_DIR "${CMAKE_SOURCE_DIR}/third_party/tree-sitter-python"
    CACHE PATH "Folder holding the fetched tree-sitter-python grammar (src/parser.c, src/scanner.c)")

foreach(grammar_file src/parser.c src/scanner.c src/tree_sitter/parser.h)
  if(NOT EXISTS "${OOMLENS_TS_PYTHON_DIR}/${grammar_file}")
    message(FATAL_ERROR
      "The tree-sitter-python grammar is missing (${OOMLENS_TS_PYTHON_DIR}/${grammar_file}).\n"
      "It is fetched at setup time, never committed: run scripts/setup.sh "
      "(or scripts/fetch_tree_sitter_python.sh alone) and configure again.")
  endif()
endforeach()

# The grammar is C. With clang++ as the C++ compiler (the fuzz build), use the
# clang beside it for C too, so both take the same sanitizer flags.
if(NOT CMAKE_C_COMPILER AND NOT DEFINED ENV{CC} AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  string(REGEX REPLACE "clang\\+\\+([^/]*)$" "clang\\1" oomlens_c_compiler "${CMAKE_CXX_COMPILER}")
  if(EXISTS "${oomlens_c_compiler}")
    set(CMAKE_C_COMPILER "${oomlens_c_compiler}")
  endif()
endif()
enable_language(C)
pkg_check_modules(TREE_SITTER REQUIRED IMPORTED_TARGET tree-sitter)

add_library(oomlens_tree_sitter_python STATIC
  "${OOMLENS_TS_PYTHON_DIR}/src/parser.c"
  "${OOMLENS_TS_PYTHON_DIR}/src/scanner.c")
# The grammar's own tree_sitter/parser.h is for the generated code only; users
# of the library see the runtime's <tree_sitter/api.h>.
target_include_directories(oomlens_tree_sitter_python PRIVATE "${OOMLENS_TS_PYTHON_DIR}/src")
set_target_properties(oomlens_tree_sitter_python PROPERTIES
  C_STANDARD 11
  C_STANDARD_REQUIRED ON
  POSITION_INDEPENDENT_CODE ON)
# Generated code is not ours to fix: silence its warnings, for this target only
# (the project builds with -Wall -Wextra and, in CI, -Werror).
target_compile_options(oomlens_tree_sitter_python PRIVATE -w)
# libFuzzer's coverage flag exists only in clang; a C compiler without it
# builds the grammar uninstrumented for coverage (sanitizers still apply).
if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  get_target_property(oomlens_ts_options oomlens_tree_sitter_python COMPILE_OPTIONS)
  list(REMOVE_ITEM oomlens_ts_options -fsanitize=fuzzer-no-link)
  set_target_properties(oomlens_tree_sitter_python PROPERTIES COMPILE_OPTIONS "${oomlens_ts_options}")
endif()
target_link_libraries(oomlens_tree_sitter_python PUBLIC PkgConfig::TREE_SITTER)
