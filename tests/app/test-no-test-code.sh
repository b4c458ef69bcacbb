#!/bin/sh
# test-no-test-code.sh — the shipped binary holds no test code (issue 24): none of the window
# test driver's command names (tests/app/window-driver*.c: each `g_str_equal (cmd, "NAME")`
# with a '-' in NAME, which no product string is likely to be) appears among the strings of
# build/app/saccade, and app/ reads no SACCADE_TEST variable.
# Usage: test-no-test-code.sh PATH/TO/saccade SOURCE_ROOT
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
root=$2
need_tools strings

names=$(cat "$root"/tests/app/window-driver*.c | grep -o 'g_str_equal (cmd, "[a-z]*-[a-z-]*")' \
        | sed 's/.*"\(.*\)")/\1/' | sort -u)
n=$(printf '%s\n' "$names" | grep -c .)
[ "$n" -ge 20 ] || fail "found only $n driver command names: has window-driver*.c changed shape?"
strings "$saccade" > "$tmp/strings"
for name in $names; do
  if grep -qx -- "$name" "$tmp/strings"; then
    fail "the shipped binary holds the driver's command '$name'"
  else
    passes=$((passes + 1))
  fi
done
if grep -rn 'SACCADE_TEST' "$root/app" > "$tmp/env"; then
  fail "app/ reads a test variable:"; sed 's/^/  | /' "$tmp/env"
else
  passes=$((passes + 1))
fi
echo "$passes passed, $fails failed ($n command names)"
[ "$fails" -eq 0 ]
