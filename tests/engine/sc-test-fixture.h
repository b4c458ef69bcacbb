/* sc-test-fixture.h — reading a reference fixture (tests/reference/: a JSON of metadata and
 * a raw little-endian float32 file, as tests/reference/README.md lays them out) from the
 * folder $SC_TEST_REFERENCE_DIR that meson test sets. The model tests read their fixtures
 * through it (test-ablation-reference, test-patch-reference and test-qk-reference still
 * read their one fixture each by hand).
 */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdint.h>

#include "engine/backend/sc-backend.h"
#include "engine/model/sc-model.h"
#include "engine/study/sc-qk-study.h"

/* $SC_TEST_REFERENCE_DIR/@name; aborts the test when the variable is unset. Free with
 * g_free(). */
char *sc_test_reference_path (const char *name);

/* The root object of the reference JSON @name; *@parser_out owns it (g_object_unref). */
JsonObject *sc_test_fixture_json (const char *name, JsonParser **parser_out);

/* The reference file @name mapped read-only; its float32 values at element @offset of
 * g_mapped_file_get_contents(). Free with g_mapped_file_unref(). */
GMappedFile *sc_test_fixture_map (const char *name);

/* The ints of @a as token ids; *@n their count. Free with g_free(). */
int32_t *sc_test_fixture_ids (JsonArray *a, int *n);

/* The SHA-256 of the file at @path, hex. Free with g_free(). */
char *sc_test_file_sha256 (const char *path);

/* An architecture fixture (tests/reference/arch_ref_*.py: "ids", "logits" (n, V) and
 * "probs" (L, H, n, n) at their "offset"s of @data) against @model on @b: the fixture's ids
 * run whole (@n_past 0) or in two calls through the KV cache (the first @n_past ids, then the
 * rest); *@logit_err and *@prob_err are the worst absolute differences over the rows the last
 * call computed. Asserts that every probability above the diagonal is exactly 0. */
void sc_test_arch_compare (ScModel *model, ScBackend *b, JsonObject *fixture, GMappedFile *data,
                           int n_past, double *logit_err, double *prob_err);

/* sc_test_arch_compare on @b whole and through the KV cache from id @n_past, each error
 * within @bound; prints them under @name ("llama3"). */
void sc_test_arch_check (const char *name, ScModel *model, ScBackend *b, JsonObject *fixture,
                         GMappedFile *data, int n_past, double bound);

/* A tiny architecture's test data (tests/reference/arch_ref_<arch>.py): the fixture @json_name
 * parsed (*@parser holds it) and its data file mapped, the GGUF it names checked by sha256
 * against it (g_error when it is another file) and opened on one thread. */
void sc_test_arch_open (const char *json_name, JsonParser **parser, JsonObject **fixture,
                        GMappedFile **data, char **model_path, ScModel **model);

/* Registers /@name/model/vs-transformers-reference-backend and /@name/model/vs-transformers-cpu:
 * sc_test_arch_check of @model against @fixture and @data from id 61 through the KV cache,
 * on cpu-ref within @ref_bound and on a two-thread cpu backend within @cpu_bound. The
 * arguments must outlive g_test_run(). */
void sc_test_arch_add_vs_transformers (const char *name, ScModel *model, JsonObject *fixture,
                                       GMappedFile *data, double ref_bound, double cpu_bound);

/* llama.cpp's logits on an architecture's file (tests/reference/llamacpp_arch.py:
 * arch-llamacpp.json's entry @name, whose file and ids must be @fixture's) against @model on
 * @b, the fixture's ids run whole; returns the worst |dlogit| over rows @first..@last. */
double sc_test_arch_llamacpp_error (const char *name, ScModel *model, ScBackend *b,
                                    JsonObject *fixture, int first, int last);

/* sc_test_arch_llamacpp_error over every row on cpu-ref and cpu, each within @bound; prints
 * them and what llama.cpp measured against transformers. */
void sc_test_arch_check_llamacpp (const char *name, ScModel *model, JsonObject *fixture,
                                  double bound);

/* The backward against the fixture's "grad" (torch autograd through transformers in float64:
 * d log p(its target at the last position) / d input embeddings, its "value" the log p) on
 * cpu-ref and cpu: the gradient within @grad_bound of its largest component, log p within
 * @ref_bound (cpu-ref) and @cpu_bound (cpu). */
void sc_test_arch_check_gradients (const char *name, ScModel *model, JsonObject *fixture,
                                   GMappedFile *data, double grad_bound, double ref_bound,
                                   double cpu_bound);

/* QK attribution on cpu-ref over the fixture's ids for each of @cases: a score of some size
 * whose parts sum to it within @bound (relative). */
void sc_test_arch_check_qk (const char *name, ScModel *model, JsonObject *fixture,
                            const ScQkParams *cases, int n_cases, double bound);

/* The bytes of the file at @path with @from replaced by @to (@n bytes; the match must be
 * unique), written to a temporary file named after @tmpl ("llama3-XXXXXX.gguf"); returns
 * its path (g_free; the caller unlinks it). */
char *sc_test_edited_copy (const char *path, const char *tmpl, const void *from, const void *to,
                           gsize n);

/* Opens @path, which must be refused with @status and a message holding @a and @b. */
void sc_test_assert_refused (const char *path, ScStatus status, const char *a, const char *b);
