/* saccade-csv.c — the one CSV writer (saccade-csv.h). */
#include "app/core/saccade-csv.h"

#include <math.h>
#include <string.h>

void
saccade_csv_number (GString *out, double v)
{
  char num[G_ASCII_DTOSTR_BUF_SIZE];

  if (isnan (v))
    g_string_append (out, "nan");
  else
    g_string_append (out, g_ascii_formatd (num, sizeof num, "%.9g", v));
}

void
saccade_csv_add_number (GString *out, double v)
{
  g_string_append_c (out, ',');
  saccade_csv_number (out, v);
}

void
saccade_csv_add_exact (GString *out, double v)
{
  char num[G_ASCII_DTOSTR_BUF_SIZE];

  g_string_append_c (out, ',');
  if (!isnan (v))
    g_string_append (out, g_ascii_formatd (num, sizeof num, "%.17g", v));
}

void
saccade_csv_quoted (GString *out, const char *text)
{
  g_string_append_c (out, '"');
  for (const char *p = text; *p != '\0'; p++)
    {
      if (*p == '"')
        g_string_append_c (out, '"');
      g_string_append_c (out, *p);
    }
  g_string_append_c (out, '"');
}

void
saccade_csv_field (GString *out, const char *text)
{
  const size_t len = strlen (text);

  if (strpbrk (text, ",\"\r\n") == NULL
      && (len == 0 || (text[0] != ' ' && text[len - 1] != ' ')))
    g_string_append (out, text);
  else
    saccade_csv_quoted (out, text);
}
