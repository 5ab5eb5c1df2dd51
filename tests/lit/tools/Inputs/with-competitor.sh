#!/bin/sh
# Runs "$@" while a busy loop holds CPU 0 (a competing process), then stops
# the loop. For the adaptive-threads lit test.
taskset -c 0 sh -c 'while :; do :; done' &
LOOP=$!
sleep 0.3
"$@"
STATUS=$?
kill $LOOP 2>/dev/null
wait $LOOP 2>/dev/null
exit $STATUS
