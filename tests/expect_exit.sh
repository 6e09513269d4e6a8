#!/bin/sh
# expect_exit.sh CODE REGEX COMMAND [ARG...]: runs COMMAND and passes only
# when it exits with exactly CODE and its output (stdout and stderr together)
# matches the extended regular expression REGEX. CTest's WILL_FAIL passes on
# any non-zero exit (a mistyped flag too), and PASS_REGULAR_EXPRESSION ignores
# the exit code; this checks both.
#   add_test(NAME x COMMAND sh tests/expect_exit.sh 2 "no such file" tptriage repro /nonexistent)
set -u
want=$1
regex=$2
shift 2
out=$("$@" 2>&1)
got=$?
status=0
if [ "$got" -ne "$want" ]; then
  echo "expect_exit: exit code $got, want $want: $*" >&2
  status=1
fi
if ! printf '%s\n' "$out" | grep -Ezq -- "$regex"; then
  echo "expect_exit: the output does not match /$regex/: $*" >&2
  status=1
fi
if [ "$status" -ne 0 ]; then
  printf '%s\n' "$out" | tail -n 40 >&2
fi
exit "$status"
