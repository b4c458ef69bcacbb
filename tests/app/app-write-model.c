/* app-write-model.c — writes one of the tests' tiny GGUF models to a file, so that a
 * command-line test can load it as a user's model: `app-write-model tiny|induction PATH`.
 *   tiny       the tiny llama of tests/engine/sc-test-gguf.h (seed 11: 2 layers, 4 query
 *              heads over 2 KV heads, a byte-level vocabulary, context 64)
 *   induction  the two-layer model with a previous-token head (0.0) and an induction head
 *              (1.0) by construction (docs/metrics.md), context 128
 * Exit status 0, or 1 with a message. */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "tests/engine/sc-test-gguf.h"

/* The induction model's context: its previous-token head is sharp up to 127 positions. */
#define INDUCTION_CTX 128

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) bytes = NULL;
  gsize len;
  const char *data;

  if (argc != 3 || (strcmp (argv[1], "tiny") != 0 && strcmp (argv[1], "induction") != 0))
    {
      fprintf (stderr, "usage: app-write-model tiny|induction PATH\n");
      return 1;
    }
  bytes = strcmp (argv[1], "tiny") == 0 ? g_bytes_ref (sc_test_tiny_bytes ())
                                        : sc_test_gguf_induction_llama (INDUCTION_CTX);
  data = g_bytes_get_data (bytes, &len);
  if (!g_file_set_contents (argv[2], data, (gssize) len, &error))
    {
      fprintf (stderr, "app-write-model: %s\n", error->message);
      return 1;
    }
  return 0;
}
