/* saccade-learn-sizes.c — the Learn page's four calculators of sizes
 * (saccade-learn-private.h): why scores are divided by √d_k (2), the heads' share of the
 * model's width (3), the KV cache's bytes and read time with presets (4), and
 * FlashAttention's HBM traffic against standard attention's with GPU presets (5). Each
 * section is built once and recomputed on every edit by engine/analysis/sc-learn.h; the
 * worked example (1) and the page itself are saccade-learn-page.c's.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-learn-private.h"

#include <glib/gi18n.h>

#include "app/core/saccade-capture-task.h"
#include "engine/model/sc-model.h"

/* FlashAttention's counts are at fp16/bf16, the precision of Dao et al. 2022's runs. */
#define FLASH_BYTES_PER_ELEM 2

/* ---- 2. why √d_k ----------------------------------------------------------------------- */

void
learn_update_sqrt_dk (SaccadeLearnPage *self)
{
  ScLearnSqrtDk s;
  ScError err = { 0 };
  g_autofree char *std = NULL, *unscaled = NULL, *scaled = NULL;

  if (sc_learn_sqrt_dk ((int) learn_spin_int (self->dk_spin),
                        gtk_spin_button_get_value (self->gap_spin), 2, &s, &err))
    {
      learn_set_result (self->std_label, err.message, TRUE);
      learn_set_result (self->unscaled_label, "", FALSE);
      learn_set_result (self->scaled_label, "", FALSE);
      return;
    }
  std = g_strdup_printf (_("%.4g without scaling, %.4g with"), s.std_unscaled, s.std_scaled);
  unscaled = g_strdup_printf (_("gap %.4g: largest weight %.10f, p (1 − p) = %.4g"), s.gap,
                              s.p_unscaled, s.jacobian_unscaled);
  scaled = g_strdup_printf (_("gap %.4g: largest weight %.10f, p (1 − p) = %.4g"),
                            s.gap / s.std_unscaled, s.p_scaled, s.jacobian_scaled);
  learn_set_result (self->std_label, std, FALSE);
  learn_set_result (self->unscaled_label, unscaled, FALSE);
  learn_set_result (self->scaled_label, scaled, FALSE);
}

void
learn_build_sqrt_dk (SaccadeLearnPage *self, GtkBox *column)
{
  AdwPreferencesGroup *g = learn_add_group (column, _("Why divide by √d_k"),
                                      _("For random q, k with N(0, 1) entries q·k has variance "
                                        "d_k. Two scores a gap apart: how saturated is the "
                                        "softmax, and how much gradient is left (p (1 − p), "
                                        "its Jacobian's diagonal)?"));

  /* d_k = 64 and a gap of two standard deviations, 2√64 = 16: article 004's numbers. */
  self->dk_spin = learn_add_spin (self, g, _("d_k"), NULL, 1, 16384, 1, 0, 64,
                            G_CALLBACK (learn_update_sqrt_dk));
  self->gap_spin = learn_add_spin (self, g, _("Score gap"), _("Between the top score and the next"),
                             0, 1000, 1, 2, 16, G_CALLBACK (learn_update_sqrt_dk));
  self->std_label = learn_add_result (g, _("Standard deviation of the scores"));
  self->unscaled_label = learn_add_result (g, _("Without scaling"));
  self->scaled_label = learn_add_result (g, _("Divided by √d_k"));
}

/* ---- 3. heads and budget --------------------------------------------------------------- */

void
learn_update_heads (SaccadeLearnPage *self)
{
  gint64 d_model = learn_spin_int (self->d_model_spin), heads = learn_spin_int (self->heads_spin), d_k;
  ScError err = { 0 };
  g_autofree char *text = NULL;

  if (sc_learn_head_dim (d_model, heads, &d_k, &err))
    {
      learn_set_result (self->d_k_label, err.message, TRUE);
      return;
    }
  text = g_strdup_printf (_("%lld / %lld = %lld per head"), (long long) d_model,
                          (long long) heads, (long long) d_k);
  learn_set_result (self->d_k_label, text, FALSE);
}

void
learn_build_heads (SaccadeLearnPage *self, GtkBox *column)
{
  AdwPreferencesGroup *g = learn_add_group (column, _("Heads and budget"),
                                      _("h heads share the model's width: each gets "
                                        "d_k = d_model / h dimensions."));

  /* 512 and 8: the base Transformer of Vaswani et al. 2017 (d_k = 64). */
  self->d_model_spin = learn_add_spin (self, g, _("d_model"), NULL, 1, 65536, 1, 0, 512,
                                 G_CALLBACK (learn_update_heads));
  self->heads_spin = learn_add_spin (self, g, _("Heads h"), NULL, 1, 1024, 1, 0, 8,
                               G_CALLBACK (learn_update_heads));
  self->d_k_label = learn_add_result (g, _("d_k"));
}

/* ---- 4. the KV cache ------------------------------------------------------------------- */

void
learn_update_kv (SaccadeLearnPage *self)
{
  ScLearnKvCache c;
  ScError err = { 0 };
  g_autofree char *size = NULL, *bytes = NULL, *time = NULL;

  if (self->filling)
    return;
  if (sc_learn_kv_cache (learn_spin_int (self->layers_spin), learn_spin_int (self->kv_heads_spin),
                         learn_spin_int (self->head_dim_spin), learn_spin_int (self->len_spin),
                         learn_spin_int (self->bytes_spin),
                         gtk_spin_button_get_value (self->bandwidth_spin), &c, &err))
    {
      learn_set_result (self->kv_bytes_label, err.message, TRUE);
      learn_set_result (self->kv_time_label, "", FALSE);
      return;
    }
  size = g_format_size_full ((guint64) c.bytes, G_FORMAT_SIZE_IEC_UNITS);
  bytes = g_strdup_printf (_("%s (%lld bytes, %lld per token)"), size, (long long) c.bytes,
                           (long long) c.bytes_per_token);
  time = c.bandwidth_gbs > 0 ? g_strdup_printf (_("%.3f ms"), c.read_seconds * 1e3)
                             : g_strdup ("—");
  learn_set_result (self->kv_bytes_label, bytes, FALSE);
  learn_set_result (self->kv_time_label, time, FALSE);
}

static void
kv_preset_chosen (SaccadeLearnPage *self)
{
  int n;
  const ScLearnKvPreset *presets = sc_learn_kv_presets (&n);
  guint i = gtk_drop_down_get_selected (self->kv_dd);
  SaccadeLoadedModel *model = saccade_page_get_model (SACCADE_PAGE (self));
  gint64 layers, kv_heads, head_dim;

  if (i < (guint) n)
    {
      layers = presets[i].layers;
      kv_heads = presets[i].kv_heads;
      head_dim = presets[i].head_dim;
    }
  else if (i == (guint) n && model != NULL)
    {
      const ScModelInfo *info = sc_model_info (saccade_loaded_model_get_model (model));
      layers = info->n_layers;
      kv_heads = info->n_kv_heads;
      head_dim = info->head_dim;
    }
  else
    return;
  self->filling = TRUE;
  gtk_spin_button_set_value (self->layers_spin, layers);
  gtk_spin_button_set_value (self->kv_heads_spin, kv_heads);
  gtk_spin_button_set_value (self->head_dim_spin, head_dim);
  self->filling = FALSE;
  learn_update_kv (self);
}

void
learn_build_kv (SaccadeLearnPage *self, GtkBox *column)
{
  AdwPreferencesGroup *g = learn_add_group (column, _("KV cache"),
                                      _("2 (K and V) × layers × KV heads × head dim × length × "
                                        "bytes per element, read once for every generated "
                                        "token."));
  int n;
  const ScLearnKvPreset *presets = sc_learn_kv_presets (&n);

  self->kv_names = learn_preset_names (&presets[0].name, n, sizeof presets[0]);
  self->kv_dd = learn_add_dropdown (self, g, _("Preset"), NULL, self->kv_names,
                                    G_CALLBACK (kv_preset_chosen));
  self->layers_spin = learn_add_spin (self, g, _("Layers"), NULL, 1, 1024, 1, 0, presets[0].layers,
                                G_CALLBACK (learn_update_kv));
  self->kv_heads_spin = learn_add_spin (self, g, _("KV heads"), NULL, 1, 1024, 1, 0,
                                  presets[0].kv_heads, G_CALLBACK (learn_update_kv));
  self->head_dim_spin = learn_add_spin (self, g, _("Head dimension"), NULL, 1, 4096, 1, 0,
                                  presets[0].head_dim, G_CALLBACK (learn_update_kv));
  /* 4096 tokens, fp16 and the A100 80GB's 2039 GB/s: the command line's defaults. */
  self->len_spin = learn_add_spin (self, g, _("Length (tokens)"), NULL, 0, 1 << 24, 256, 0, 4096,
                             G_CALLBACK (learn_update_kv));
  self->bytes_spin = learn_add_spin (self, g, _("Bytes per element"), _("2 for fp16, 1 for 8-bit"),
                               1, 8, 1, 0, 2, G_CALLBACK (learn_update_kv));
  self->bandwidth_spin = learn_add_spin (self, g, _("Memory bandwidth (GB/s)"), _("0: no time"), 0,
                                   100000, 100, 0, 2039, G_CALLBACK (learn_update_kv));
  self->kv_bytes_label = learn_add_result (g, _("Cache size"));
  self->kv_time_label = learn_add_result (g, _("Read once"));
}

/* ---- 5. FlashAttention's IO ------------------------------------------------------------ */

static const ScLearnGpuPreset *
gpu_chosen (SaccadeLearnPage *self)
{
  int n;
  const ScLearnGpuPreset *presets = sc_learn_gpu_presets (&n);
  guint i = gtk_drop_down_get_selected (self->gpu_dd);

  return i < (guint) n ? &presets[i] : &presets[0];
}

void
learn_update_flash (SaccadeLearnPage *self)
{
  ScLearnFlash f;
  ScError err = { 0 };
  g_autofree char *score = NULL, *traffic = NULL, *ratio = NULL, *size = NULL;

  if (self->filling)
    return;
  if (sc_learn_flash (learn_spin_int (self->n_spin), learn_spin_int (self->d_spin),
                      learn_spin_int (self->sram_spin) * 1024, FLASH_BYTES_PER_ELEM,
                      gpu_chosen (self)->hbm_gbs, &f, &err))
    {
      learn_set_result (self->score_label, err.message, TRUE);
      learn_set_result (self->traffic_label, "", FALSE);
      learn_set_result (self->ratio_label, "", FALSE);
      return;
    }
  size = g_format_size_full ((guint64) f.score_bytes, G_FORMAT_SIZE_IEC_UNITS);
  score = g_strdup_printf (_("%s per head and layer"), size);
  traffic = g_strdup_printf (_("standard %lld elements (%.3f ms), tiled %lld (%.3f ms; "
                               "blocks of %lld keys, %lld passes)"),
                             (long long) f.standard_elems, f.standard_seconds * 1e3,
                             (long long) f.flash_elems, f.flash_seconds * 1e3,
                             (long long) f.block_c, (long long) f.t_c);
  ratio = g_strdup_printf (_("%.2f× less"), f.ratio);
  learn_set_result (self->score_label, score, FALSE);
  learn_set_result (self->traffic_label, traffic, FALSE);
  learn_set_result (self->ratio_label, ratio, FALSE);
}

static void
gpu_preset_chosen (SaccadeLearnPage *self)
{
  self->filling = TRUE;
  gtk_spin_button_set_value (self->sram_spin, (double) (gpu_chosen (self)->sram_bytes_per_sm
                                                        / 1024));
  self->filling = FALSE;
  learn_update_flash (self);
}

void
learn_build_flash (SaccadeLearnPage *self, GtkBox *column)
{
  AdwPreferencesGroup *g = learn_add_group (column, _("FlashAttention's memory traffic"),
                                      _("Standard attention writes the n × n scores to HBM and "
                                        "reads them back; FlashAttention keeps tiles in SRAM. "
                                        "HBM accesses of one head at fp16 (Dao et al. 2022)."));
  int n;
  const ScLearnGpuPreset *presets = sc_learn_gpu_presets (&n);
  g_autoptr (GtkStringList) names = learn_preset_names (&presets[0].name, n, sizeof presets[0]);

  self->gpu_dd = learn_add_dropdown (self, g, _("GPU"), _("Its SRAM per SM and HBM bandwidth"),
                                     names, G_CALLBACK (gpu_preset_chosen));
  /* 4096 tokens at d = 64: the command line's defaults. */
  self->n_spin = learn_add_spin (self, g, _("Sequence length N"), NULL, 1, 1 << 20, 256, 0, 4096,
                           G_CALLBACK (learn_update_flash));
  self->d_spin = learn_add_spin (self, g, _("Head dimension d"), NULL, 1, 1024, 1, 0, 64,
                           G_CALLBACK (learn_update_flash));
  self->sram_spin = learn_add_spin (self, g, _("SRAM (KiB)"), NULL, 1, 1 << 20, 1, 0,
                              (double) (presets[0].sram_bytes_per_sm / 1024),
                              G_CALLBACK (learn_update_flash));
  self->score_label = learn_add_result (g, _("Score matrix"));
  self->traffic_label = learn_add_result (g, _("HBM accesses"));
  self->ratio_label = learn_add_result (g, _("Tiled against standard"));
}
