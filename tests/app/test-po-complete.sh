#!/bin/sh
# test-po-complete.sh — the translations are complete:
#   - every C file under app/ and ui/ that marks strings (_(), N_(), C_()) and every .ui file
#     with translatable properties is listed in po/POTFILES.in;
#   - every language in po/LINGUAS translates every message those files hold: none missing
#     from its .po (msgcmp against a fresh xgettext), none untranslated or fuzzy.
# Usage: test-po-complete.sh PO_DIR
set -u
. "$(dirname "$0")/../lib.sh"
po=$1
src=$(cd "$po/.." && pwd)

cd "$src"
for f in $(grep -rl --include='*.c' -E '\b(N?C?_)\("' app ui | sort) \
         $(grep -rl --include='*.ui' 'translatable="yes"' app ui | sort); do
  grep -qx "$f" po/POTFILES.in || { echo "FAIL: $f has translatable strings but is not in po/POTFILES.in"; fails=$((fails + 1)); }
done

xgettext --from-code=UTF-8 --keyword=_ --keyword=N_ --keyword=C_:1c,2 --keyword=NC_:1c,2 \
  --add-comments=Translators --files-from=po/POTFILES.in -o "$tmp/messages.pot" \
  2> "$tmp/xgettext.err" || { cat "$tmp/xgettext.err"; exit 1; }

for lang in $(grep -v '^#' po/LINGUAS); do
  stats=$(LC_ALL=C msgfmt --statistics -o /dev/null "po/$lang.po" 2>&1)
  echo "$lang: $stats"
  case "$stats" in
    *untranslated*|*fuzzy*) echo "FAIL: $lang.po has untranslated or fuzzy messages"; fails=$((fails + 1)) ;;
  esac
  if ! msgcmp "po/$lang.po" "$tmp/messages.pot" 2> "$tmp/msgcmp.err"; then
    echo "FAIL: $lang.po lacks messages of the sources:"
    sed 's/^/  | /' "$tmp/msgcmp.err"
    fails=$((fails + 1))
  fi
done
[ "$fails" -eq 0 ]
