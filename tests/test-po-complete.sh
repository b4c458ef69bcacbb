#!/bin/sh
# test-po-complete.sh — every language in po/LINGUAS translates every message of the
# interface: no untranslated and no fuzzy entries (msgfmt --statistics counts them).
# Usage: test-po-complete.sh PO_DIR
set -u
po=$1
fails=0
for lang in $(grep -v '^#' "$po/LINGUAS"); do
  stats=$(LC_ALL=C msgfmt --statistics -o /dev/null "$po/$lang.po" 2>&1)
  echo "$lang: $stats"
  case "$stats" in
    *untranslated*|*fuzzy*) echo "FAIL: $lang.po is incomplete"; fails=$((fails + 1)) ;;
  esac
  # Every message of the interface is in the catalogue (none missing from the .po).
  if command -v xgettext >/dev/null && command -v msgcmp >/dev/null; then
    pot=$(mktemp)
    (cd "$po/.." && xgettext --from-code=UTF-8 --keyword=_ --keyword=N_ --keyword=C_:1c,2 \
      --keyword=NC_:1c,2 --add-comments=Translators --files-from=po/POTFILES.in \
      -o "$pot" 2>/dev/null)
    if ! msgcmp "$po/$lang.po" "$pot" 2>/tmp/msgcmp.$$; then
      echo "FAIL: $lang.po lacks messages of the sources:"; sed 's/^/  | /' /tmp/msgcmp.$$
      fails=$((fails + 1))
    fi
    rm -f "$pot" /tmp/msgcmp.$$
  fi
done
[ "$fails" -eq 0 ]
