/* saccade-models.c — the fetched model files (saccade-models.h). */
#define G_LOG_DOMAIN "saccade"

#include "app/core/saccade-models.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <stdlib.h>

#include "app/core/saccade-paths.h"
#include "engine/model/sc-model.h"

void
saccade_model_file_free (SaccadeModelFile *file)
{
  if (file == NULL)
    return;
  g_free (file->path);
  g_free (file->name);
  g_free (file->arch);
  g_free (file->error);
  g_free (file);
}

char **
saccade_model_dirs (void)
{
  char **dirs = g_new0 (char *, 3);

  dirs[0] = g_path_get_dirname (SACCADE_SOURCE_MODEL);
  dirs[1] = g_build_filename (g_get_user_data_dir (), "saccade", "models", NULL);
  return dirs;
}

/* The real path of @path (links resolved), to list a file reached twice once; @path itself
 * when it cannot be resolved. */
static char *
real_path (const char *path)
{
  char *canonical = g_canonicalize_filename (path, NULL);
  char *resolved = realpath (canonical, NULL); /* malloc'd: g_free is free here */

  if (resolved == NULL)
    return canonical;
  g_free (canonical);
  return resolved;
}

static SaccadeModelFile *
peek_file (const char *path, const char *default_real)
{
  SaccadeModelFile *f = g_new0 (SaccadeModelFile, 1);
  ScModelInfo info;
  ScError err = { 0 };
  GStatBuf st;
  g_autofree char *real = real_path (path);

  f->path = g_strdup (path);
  f->bytes = g_stat (path, &st) == 0 ? (gint64) st.st_size : -1;
  f->is_default = default_real != NULL && g_strcmp0 (real, default_real) == 0;
  if (sc_model_peek (path, &info, &err) == SC_OK)
    {
      f->name = g_strdup (info.name);
      f->arch = g_strdup (info.arch_name);
      f->n_layers = info.n_layers;
      f->n_heads = info.n_heads;
    }
  else
    f->error = g_strdup (err.message);
  return f;
}

static int
compare_files (gconstpointer a, gconstpointer b)
{
  const SaccadeModelFile *x = *(SaccadeModelFile *const *) a;
  const SaccadeModelFile *y = *(SaccadeModelFile *const *) b;

  if ((x->name == NULL) != (y->name == NULL))
    return x->name == NULL ? 1 : -1;
  if (x->name != NULL)
    {
      g_autofree char *fx = g_utf8_casefold (x->name, -1);
      g_autofree char *fy = g_utf8_casefold (y->name, -1);
      int c = g_utf8_collate (fx, fy);
      if (c != 0)
        return c;
    }
  return g_strcmp0 (x->path, y->path);
}

GPtrArray *
saccade_model_files (void)
{
  GPtrArray *files = g_ptr_array_new_with_free_func ((GDestroyNotify) saccade_model_file_free);
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_auto (GStrv) dirs = saccade_model_dirs ();
  const char *def = saccade_model_path (NULL);
  g_autofree char *default_real = g_file_test (def, G_FILE_TEST_EXISTS) ? real_path (def) : NULL;

  for (guint d = 0; dirs[d] != NULL; d++)
    {
      g_autoptr (GDir) dir = g_dir_open (dirs[d], 0, NULL);
      const char *entry;

      if (dir == NULL)
        continue;
      while ((entry = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *path = NULL;
          char *real;

          if (!g_str_has_suffix (entry, ".gguf"))
            continue;
          path = g_build_filename (dirs[d], entry, NULL);
          if (!g_file_test (path, G_FILE_TEST_IS_REGULAR))
            continue;
          real = real_path (path);
          if (g_hash_table_contains (seen, real))
            {
              g_free (real);
              continue;
            }
          g_hash_table_add (seen, real);
          g_ptr_array_add (files, peek_file (path, default_real));
        }
    }
  g_ptr_array_sort (files, compare_files);
  return files;
}

char *
saccade_model_particulars (const ScModel *model)
{
  const ScModelInfo *in = sc_model_info (model);
  const ScLayerWeights *l0 = in->n_layers > 0 ? &sc_model_weights_packed (model)->layers[0] : NULL;
  g_autoptr (GPtrArray) parts = g_ptr_array_new_with_free_func (g_free);

  if (in->sliding_window > 0)
    {
      g_autoptr (GString) global = g_string_new ("");
      guint n_local = 0;
      for (guint l = 0; l < in->n_layers; l++)
        if (sc_model_layer_window (in, (int) l) > 0)
          n_local++;
        else
          g_string_append_printf (global, "%s%u", global->len > 0 ? ", " : "", l);
      if (n_local == in->n_layers)
        /* Translators: a model's particulars (Mistral): every layer's query sees only the
         * last 4096 keys. */
        g_ptr_array_add (parts, g_strdup_printf (_("every layer local (window %u)"),
                                                 in->sliding_window));
      else
        /* Translators: a model's particulars: "15 local layers (window 512, RoPE base 10000),
         * 3 global (5, 11, 17)": local layers attend to the last 512 keys only. */
        g_ptr_array_add (parts, g_strdup_printf (_("%u local layers (window %u, RoPE base %g), "
                                                   "%u global (%s)"),
                                                 n_local, in->sliding_window,
                                                 (double) in->rope_base_local,
                                                 in->n_layers - n_local, global->str));
    }
  if (in->attn_softcap > 0 || in->final_softcap > 0)
    /* Translators: a model's particulars (Gemma 2): attention scores s become
     * 50 tanh(s / 50) before the softmax, the logits 30 tanh(l / 30); 0 = not capped. */
    g_ptr_array_add (parts, g_strdup_printf (_("soft-capped: attention scores at %g, logits at "
                                               "%g"),
                                             (double) in->attn_softcap,
                                             (double) in->final_softcap));
  if (!in->learned_positions && in->n_rot < in->head_dim)
    /* Translators: a model's particulars (Phi-4-mini): RoPE turns only the first 96 of each
     * head's 128 dimensions; the others carry no position. */
    g_ptr_array_add (parts, g_strdup_printf (_("partial RoPE: %u of %u dimensions per head "
                                               "rotated"),
                                             in->n_rot, in->head_dim));
  if (in->n_rope_freq > 0)
    {
      guint n_scaled = 0;
      float most = 1.0f;
      for (guint c = 0; c < in->n_rope_freq; c++)
        {
          n_scaled += in->rope_freq[c] != 1.0f;
          most = MAX (most, in->rope_freq[c]);
        }
      /* Translators: a model's particulars (Llama 3): RoPE turns 6 of its 8 frequency pairs
       * more slowly, the slowest 8 times, so that it reaches further than it was trained. */
      g_ptr_array_add (parts, g_strdup_printf (_("RoPE frequencies scaled (Llama 3): %u of %u "
                                                 "pairs slowed, by up to %g×"),
                                               n_scaled, in->n_rope_freq, (double) most));
    }
  if (in->learned_positions)
    /* Translators: a model's particulars (GPT-2): a learned vector per position is added to
     * each token's embedding; no rotary position encoding. */
    g_ptr_array_add (parts, g_strdup (_("learned absolute positions (no RoPE)")));
  if (in->layer_norm)
    /* Translators: a model's particulars (GPT-2): its norms subtract the mean and add a
     * bias (LayerNorm, not RMSNorm), and every projection has a bias. */
    g_ptr_array_add (parts, g_strdup (_("LayerNorm with biases; a bias on every projection")));
  else if (l0 != NULL && l0->bq != NULL)
    /* Translators: a model's particulars (Qwen2): constant vectors added to every query,
     * key and value, so part of each attention score does not depend on the tokens. */
    g_ptr_array_add (parts, g_strdup (_("query, key and value biases (added before RoPE)")));
  if (l0 != NULL && l0->attn_q_norm != NULL)
    /* Translators: a model's particulars (Gemma 3): an RMSNorm of each head's queries and
     * keys before the scores. */
    g_ptr_array_add (parts, g_strdup (_("per-head query and key norms")));
  if (l0 != NULL && l0->post_attn_norm != NULL)
    /* Translators: a model's particulars (Gemma 3): norms after the attention and the
     * feed-forward blocks as well as before them. */
    g_ptr_array_add (parts, g_strdup (_("post-attention and post-feed-forward norms")));
  if (in->embd_scale > 0)
    /* Translators: a model's particulars (Gemma 3): the token embeddings are multiplied by
     * this (√640 = 25.3) before the first layer. */
    g_ptr_array_add (parts, g_strdup_printf (_("embeddings scaled by %.1f"),
                                             (double) in->embd_scale));
  if (parts->len == 0)
    return NULL;
  g_ptr_array_add (parts, NULL);
  return g_strjoinv ("; ", (char **) parts->pdata);
}
