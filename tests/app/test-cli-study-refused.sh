#!/bin/sh
# test-cli-study-refused.sh — stored studies edited to lie (issue 25, items 4 and 7) are
# refused, said so on stderr before they are computed again, and never crash a printer.
# Each case edits the database with sqlite3 as the issue did, then runs the verb again:
#   tokens-count-edited      ablate --tokens after the clean token count is set to 40
#   erasure-count-edited     ablate --erasure after the same edit
#   faithfulness-extra-positions
#                            faithfulness with a token count of 9 and positions 6 and 7
#                            added for a 7-token run (a SIGSEGV in print_run_text before)
#   induction-missing-heads  induction with the heads of layers >= 5 deleted (reused as
#                            complete before: the top induction head changed)
#   induction-prefix-7.5, induction-duplicate-minus-4, induction-loss-minus-3
#                            induction scores and a loss outside their ranges
# Usage: test-cli-study-refused.sh PATH/TO/saccade   (needs the default model and sqlite3)
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
need_model
need_tools sqlite3
export SACCADE_MODEL="$model"
db="$tmp/r.sqlite"

ran_ok () { # name, rc: the command exited 0 (a crash is 139)
  if [ "$2" -eq 0 ]; then passes=$((passes + 1)); else
    echo "FAIL: $1 exited $2"; fails=$((fails + 1)); fi
}

# Refused on stderr, with the kind and the reason, then computed and stored again.
refused () { # name, kind, reason pattern
  check "$1-said" "$tmp/$1.err" "stored $2 study .*is refused (.*$3.*); computing it again"
  check "$1-computed" "$tmp/$1.out" "computed now"
}

"$saccade" capture --db "$db" "The cat sat on the mat." > "$tmp/cap" 2>&1
check capture "$tmp/cap" "^1$"

# 1. ablate --tokens (the issue: a null pointer in display_width from print_tokens)
"$saccade" ablate 1 --db "$db" --tokens > "$tmp/t0.out" 2>&1
check tokens-stored "$tmp/t0.out" "stored as study 1 "
sqlite3 "$db" "UPDATE study_series SET value = 40 WHERE study_id = 1 AND series = 'clean' AND pos = 4"
"$saccade" ablate 1 --db "$db" --tokens > "$tmp/tokens-count-edited.out" 2> "$tmp/tokens-count-edited.err"
ran_ok tokens-count-edited $?
refused tokens-count-edited ablate-tokens "lacks position 7 of its 40"

# 2. ablate --erasure (the issue: a heap-use-after-free in print_erasure)
"$saccade" ablate 1 --db "$db" --erasure --seeds 1 > "$tmp/e0.out" 2>&1
eid=$(sqlite3 "$db" "SELECT max(id) FROM studies WHERE kind = 'ablate-erasure'")
sqlite3 "$db" "UPDATE study_series SET value = 40 WHERE study_id = $eid AND series = 'clean' AND pos = 4"
"$saccade" ablate 1 --db "$db" --erasure --seeds 1 > "$tmp/erasure-count-edited.out" 2> "$tmp/erasure-count-edited.err"
ran_ok erasure-count-edited $?
check erasure-count-edited-said "$tmp/erasure-count-edited.err" "ablate-erasure study .*is refused (.*); computing it again"
check erasure-count-edited-computed "$tmp/erasure-count-edited.out" "computed now"

# 3. faithfulness (the issue: the same in print_run_text)
"$saccade" faithfulness 1 --db "$db" > "$tmp/f0.out" 2>&1
fid=$(sqlite3 "$db" "SELECT max(id) FROM studies WHERE kind = 'faithfulness'")
sqlite3 "$db" "UPDATE study_series SET value = 9 WHERE study_id = $fid AND series = 'clean' AND pos = 2;
  INSERT INTO study_series SELECT study_id, series, 6, value FROM study_series
    WHERE study_id = $fid AND pos = 5 AND (series = 'loo' OR series LIKE 'attn.%');
  INSERT INTO study_series SELECT study_id, series, 7, value FROM study_series
    WHERE study_id = $fid AND pos = 5 AND (series = 'loo' OR series LIKE 'attn.%')"
"$saccade" faithfulness 1 --db "$db" > "$tmp/faithfulness-extra-positions.out" 2> "$tmp/faithfulness-extra-positions.err"
ran_ok faithfulness-extra-positions $?
refused faithfulness-extra-positions faithfulness "describes 9 tokens, run 1 has 7"

# 4. induction: heads missing, scores and a loss out of range
ind () { # name: runs the detector (short: 8 tokens, one seed), output in $tmp/NAME.{out,err}
  "$saccade" induction --db "$db" --len 8 --seeds 1 > "$tmp/$1.out" 2> "$tmp/$1.err"
  ran_ok "$1" $?
}
ind i0
iid () { sqlite3 "$db" "SELECT max(id) FROM studies WHERE kind = 'induction'"; }
ind i1
check induction-reused "$tmp/i1.out" "reused"
i=$(iid); sqlite3 "$db" "DELETE FROM study_heads WHERE study_id = $i AND layer >= 5"
ind induction-missing-heads
check induction-missing-heads-said "$tmp/induction-missing-heads.err" "stored induction study $i is refused (.*head L5.H0's .* is missing); computing it again"
i=$(iid); sqlite3 "$db" "UPDATE study_heads SET value = 7.5 WHERE study_id = $i AND layer = 3 AND head = 2 AND metric = 'prefix_matching'"
ind induction-prefix-7.5
check induction-prefix-7.5-said "$tmp/induction-prefix-7.5.err" "study $i is refused (.*head L3.H2's 'prefix_matching' is 7.5, outside"
i=$(iid); sqlite3 "$db" "UPDATE study_heads SET value = -4 WHERE study_id = $i AND layer = 1 AND head = 0 AND metric = 'duplicate_token'"
ind induction-duplicate-minus-4
check induction-duplicate-minus-4-said "$tmp/induction-duplicate-minus-4.err" "study $i is refused (.*head L1.H0's 'duplicate_token' is -4, outside"
i=$(iid); sqlite3 "$db" "UPDATE study_series SET value = -3 WHERE study_id = $i AND series = 'loss' AND pos = 4"
ind induction-loss-minus-3
check induction-loss-minus-3-said "$tmp/induction-loss-minus-3.err" "study $i is refused (.*the loss at 4 is -3"
ind i9
check induction-reused-after "$tmp/i9.out" "reused"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
