/* sc-test-tokens.h — what the tokenizer oracle tests (test-tokenizer.c for SmolLM2,
 * test-gemma-tokenizer.c for Gemma 3) both need to read llama.cpp's fixture and compare
 * with it: a source-tree path, the fixture's hex bytes, ids as text, ids decoded back.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/text/sc-tokenizer.h"

/* @rel under $SC_TEST_SOURCE_DIR (the current folder when unset). Free with g_free(). */
char *sc_test_source_path (const char *rel);

/* The bytes a fixture's lower- or upper-case hex string @hex spells (an odd last digit is
 * ignored). Free with g_bytes_unref(). */
GBytes *sc_test_hex_to_bytes (const char *hex);

/* @ids (n) as "1 2 3", for assertion messages. Free with g_free(). */
char *sc_test_ids_to_string (const int32_t *ids, gsize n);

/* The concatenated sc_token_to_bytes (@tok, id, @special) of @ids (n); asserts every id's
 * length is what the size query said. Free with g_bytes_unref(). */
GBytes *sc_test_decode_all (const ScTokenizer *tok, const int32_t *ids, gsize n, bool special);

/* TRUE when @b is valid UTF-8 (embedded NULs allowed). */
gboolean sc_test_is_valid_utf8 (GBytes *b);

/* llama.cpp's test-tokenizer-0 cases for @family ("qwen2", "gpt-2"):
 * tests/reference/ggml-vocab-<family>.gguf.inp holds texts, each followed by
 * "\n__ggml_vocab_test__\n", and .out one line of ids per text. Tokenizes each text with
 * @tok as that test does (add_special=false, parse_special=false), prints a "#" line with
 * the counts (@what says which vocabulary) and fails the test naming every case whose ids
 * differ. Returns the number of cases. */
guint sc_test_llama_vocab_cases (const ScTokenizer *tok, const char *family, const char *what);
