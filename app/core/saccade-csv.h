/* saccade-csv.h — CSV as every export of Saccade writes it (the one writer): fields quoted
 * as RFC 4180 says, numbers in the C locale whatever the user's locale is.
 *
 * Numbers come in two forms, both kept because files people already parse use them:
 *   - saccade_csv_number: 9 significant digits (a float's worth), NaN as "nan";
 *   - saccade_csv_add_exact: 17 significant digits (the double exactly), NaN as an empty
 *     field — the ablation studies' columns, where "not measured" is empty.
 * The _add_ forms write the separating comma first.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* @v with 9 significant digits ("%.9g"), NaN as "nan". */
void saccade_csv_number (GString *out, double v);
/* A comma, then saccade_csv_number (@v). */
void saccade_csv_add_number (GString *out, double v);
/* A comma, then @v with 17 significant digits, or nothing when @v is NaN. */
void saccade_csv_add_exact (GString *out, double v);
/* @text, quoted ("" for a quote inside) only when it must be: it holds a comma, a quote or
 * a line break, or starts or ends with a space (which readers would trim). */
void saccade_csv_field (GString *out, const char *text);
/* @text always quoted ("" for a quote inside). */
void saccade_csv_quoted (GString *out, const char *text);

G_END_DECLS
