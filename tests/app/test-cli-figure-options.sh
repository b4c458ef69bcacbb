#!/bin/sh
# test-cli-figure-options.sh — the figure export options (--preset, --width-mm, --dpi,
# --font, --font-size, --title, --no-title, --labels) on `saccade export --figure`: a
# heatmap and a grid with the journal presets as PNG (the pHYs chunk's resolution and the
# pixel size read back), SVG (token labels as <text>, the width in points, the cells as
# vector rectangles) and PDF (the text extracted by pdftotext, the MediaBox), and bad
# values refused with a message.
# Usage: test-cli-figure-options.sh PATH/TO/saccade   (fails without the default model or
# pdftotext: tools/setup.sh installs poppler-utils)
set -u
. "$(dirname "$0")/../lib.sh"
saccade=$1
need_model
need_tools pdftotext od awk
export SACCADE_MODEL="$model"
db="$tmp/runs.sqlite"

"$saccade" capture --db "$db" -t "The cat chased the ball because it was tired." > "$tmp/cap" 2>&1
check capture "$tmp/cap" "^1$"

# A big-endian 32-bit number at byte offset $2 of file $1.
be32 () {
  od -An -tu1 -j "$2" -N4 "$1" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }'
}

# The same figures as --preset gives them, by name: NAME, width in mm.
for preset in journal-single:89 journal-double:183; do
  name=${preset%%:*}
  mm=${preset#*:}
  px=$(awk -v mm="$mm" 'BEGIN { printf "%d", mm / 25.4 * 300 + 0.5 }')
  pt=$(awk -v mm="$mm" 'BEGIN { printf "%.2f", mm / 25.4 * 72 }')
  for fig in heatmap grid; do
    args="--figure $fig"
    [ "$fig" = heatmap ] && args="$args --layer 3 --head 2"
    for ext in png svg pdf; do
      out="$tmp/$name-$fig.$ext"
      # shellcheck disable=SC2086 # $args is several words
      if ! "$saccade" export 1 --db "$db" $args --preset "$name" -o "$out" > "$tmp/e" 2>&1; then
        fail "$name $fig $ext:"; sed 's/^/  | /' "$tmp/e"
        continue
      fi
      case $ext in
        png)
          # pHYs right after IHDR (offset 33): 300 dpi = 11811 pixels per metre, unit 1
          [ "$(od -An -c -j37 -N4 "$out" | tr -d ' ')" = pHYs ] \
            || fail "$name $fig.png has no pHYs chunk after IHDR"
          [ "$(be32 "$out" 41)" = 11811 ] && [ "$(be32 "$out" 45)" = 11811 ] \
            || fail "$name $fig.png is not 300 dpi: $(be32 "$out" 41) pixels per metre"
          [ "$(be32 "$out" 16)" = "$px" ] \
            || fail "$name $fig.png is $(be32 "$out" 16) pixels wide, not $px ($mm mm at 300 dpi)"
          ;;
        svg)
          grep -q "width=\"$pt" "$out" || fail "$name $fig.svg is not $pt pt ($mm mm) wide: $(grep -o 'width="[^"]*"' "$out" | head -1)"
          grep -q "<text[^>]*>“The cat chased" "$out" \
            || fail "$name $fig.svg has no title as <text>"
          ;;
        pdf)
          pdftotext "$out" "$tmp/text" 2> "$tmp/e" || { fail "pdftotext $name $fig.pdf"; sed 's/^/  | /' "$tmp/e"; }
          grep -q "The cat chased" "$tmp/text" || fail "$name $fig.pdf: pdftotext finds no title"
          w=$(grep -a -o '/MediaBox \[ 0 0 [0-9.]*' "$out" | awk '{ printf "%.2f", $5 }')
          [ "$w" = "$pt" ] || fail "$name $fig.pdf's MediaBox is $w pt wide, not $pt"
          ;;
      esac
      passes=$((passes + 1))
    done
  done
  # the heatmap's token labels: text in both vector formats
  grep -q '<text[^>]*>␣cat</text>' "$tmp/$name-heatmap.svg" \
    || fail "$name heatmap.svg has no token label ␣cat as <text>"
  # a head of 10 tokens: its cells are vector rectangles, no embedded image
  ! grep -q '<image' "$tmp/$name-heatmap.svg" || fail "$name heatmap.svg embeds an image"
  pdftotext "$tmp/$name-heatmap.pdf" "$tmp/text" 2> /dev/null
  grep -q '␣cat' "$tmp/text" || fail "$name heatmap.pdf: pdftotext finds no token label ␣cat"
done

# Each option on its own: width in inches, resolution, font, size, title, labels.
"$saccade" export 1 --db "$db" --figure heatmap --layer 3 --head 2 --width-in 3.5 --dpi 600 \
  --font "DejaVu Serif" --font-size 9 --title "Head 3.2 on one sentence" --labels plain \
  -o "$tmp/own.svg" > "$tmp/e" 2>&1 || { fail "own options:"; sed 's/^/  | /' "$tmp/e"; }
grep -q 'width="252' "$tmp/own.svg" || fail "--width-in 3.5 is not 252 pt"
grep -q 'font-family="DejaVu Serif"' "$tmp/own.svg" || fail "--font is not the SVG's font"
grep -q 'font-size="9.000"' "$tmp/own.svg" || fail "--font-size 9 gives no 9 pt text"
grep -q '>Head 3.2 on one sentence</text>' "$tmp/own.svg" || fail "--title is not the title"
grep -q '> cat</text>' "$tmp/own.svg" || fail "--labels plain still marks spaces"
! grep -q '␣' "$tmp/own.svg" || fail "--labels plain left a ␣"
"$saccade" export 1 --db "$db" --figure grid --dpi 600 --no-title -o "$tmp/own.png" > "$tmp/e" 2>&1 \
  || { fail "--dpi 600:"; sed 's/^/  | /' "$tmp/e"; }
[ "$(be32 "$tmp/own.png" 41)" = 23622 ] || fail "--dpi 600 wrote $(be32 "$tmp/own.png" 41) pixels per metre"
"$saccade" export 1 --db "$db" --figure grid --no-title -o "$tmp/nt.svg" > /dev/null 2>&1
! grep -q '>“The cat' "$tmp/nt.svg" || fail "--no-title drew the title"
passes=$((passes + 1))

# Refusals, each naming what was wrong.
refuse () { # name, pattern, options...
  _n=$1; _p=$2; shift 2
  "$saccade" export 1 --db "$db" "$@" > "$tmp/r" 2>&1
  expect_fail "$_n" "$tmp/r" "$_p" $?
}
refuse preset "Unknown figure preset “poster”" --figure grid --preset poster -o "$tmp/x.png"
refuse dpi "--dpi 0 is outside" --figure grid --dpi 0 -o "$tmp/x.png"
refuse width "--width-mm 5 is outside" --figure grid --width-mm 5 -o "$tmp/x.png"
refuse font-size "--font-size 200 is outside" --figure grid --font-size 200 -o "$tmp/x.png"
refuse labels "Unknown label style “odd”" --figure grid --labels odd -o "$tmp/x.png"
refuse widths "--width-mm and --width-in" --figure grid --width-mm 80 --width-in 3 -o "$tmp/x.png"
refuse titles "--title and --no-title" --figure grid --title a --no-title -o "$tmp/x.png"
refuse data "go with --figure" --layer 1 --head 1 --dpi 300 -o "$tmp/x.csv"
[ ! -e "$tmp/x.png" ] || fail "a refused export wrote a file"

# The other verbs that write a figure take the same options (one shared table and parser).
"$saccade" induction --len 10 --seeds 1 --preset journal-single -o "$tmp/ind.png" > "$tmp/e" 2>&1 \
  || { fail "induction --preset:"; sed 's/^/  | /' "$tmp/e"; }
[ "$(be32 "$tmp/ind.png" 16)" = 1051 ] && [ "$(be32 "$tmp/ind.png" 41)" = 11811 ] \
  || fail "induction --preset journal-single is not 1051 px at 300 dpi"
for verb in "ablate 1 --heads --db $db" "attribute 1 --db $db" \
            "adversarial 1 --layer 3 --db $db" "faithfulness 1 --db $db" "patch --file $tmp/none"; do
  out=-o
  [ "${verb%% *}" = patch ] && out=--figure
  # shellcheck disable=SC2086 # $verb is several words
  "$saccade" $verb --dpi 300 > "$tmp/r" 2>&1
  expect_fail "${verb%% *} without a figure" "$tmp/r" "figure options go with" $?
  # shellcheck disable=SC2086
  "$saccade" $verb --preset poster $out "$tmp/x.png" > "$tmp/r" 2>&1
  expect_fail "${verb%% *} --preset poster" "$tmp/r" "Unknown figure preset" $?
done

echo "$passes checks passed, $fails failed"
[ "$fails" -eq 0 ]
