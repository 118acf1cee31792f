# Run at build time (cmake -P), before streamlab_core compiles: writes the source that says which
# commit the binary was built from. configure_file() leaves the file alone when its text would not
# change, so a build with nothing new recompiles nothing; a new commit, or a tree that became dirty
# or clean, rewrites it and relinks the programs.
#   cmake -DSOURCE_DIR=... -DOUTPUT=.../version.cpp -DVERSION=0.1.0 -P cmake/version.cmake
set(STREAMLAB_COMMIT unknown)
set(STREAMLAB_COMMIT_DATE "")
find_program(GIT_EXECUTABLE git)
if(GIT_EXECUTABLE)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} log -1 --format=%h%x20%cs --abbrev=8
                  OUTPUT_VARIABLE head RESULT_VARIABLE head_rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  # A source tarball has no .git of its own, but may sit inside another repository's tree: only a
  # repository whose top is SOURCE_DIR names this tree's commit.
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} rev-parse --show-toplevel
                  OUTPUT_VARIABLE top RESULT_VARIABLE top_rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  file(REAL_PATH "${SOURCE_DIR}" source_real)
  if(head_rc EQUAL 0 AND top_rc EQUAL 0 AND head MATCHES "^([0-9a-f]+) (.+)$")
    file(REAL_PATH "${top}" top_real)
    if(top_real STREQUAL source_real)
      set(STREAMLAB_COMMIT ${CMAKE_MATCH_1})
      set(STREAMLAB_COMMIT_DATE ${CMAKE_MATCH_2})
      # Changes to tracked files, staged or not; untracked files (a build folder, notes) are not
      # part of what was built from the commit's sources.
      execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} diff-index --quiet HEAD --
                      RESULT_VARIABLE dirty ERROR_QUIET)
      if(NOT dirty EQUAL 0)
        string(APPEND STREAMLAB_COMMIT -dirty)
      endif()
    endif()
  endif()
endif()
configure_file(${SOURCE_DIR}/runner/core/version.cpp.in ${OUTPUT} @ONLY)
