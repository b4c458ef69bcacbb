/* sc-test-grad.c — see sc-test-grad.h. */
#include "sc-test-grad.h"

#include <math.h>

double
sc_test_grad_compare (const char *what, const float *got, const float *ref, gsize count)
{
  double scale = 0.0, worst = 0.0;
  gsize i;

  for (i = 0; i < count; i++)
    scale = fmax (scale, fabs (ref[i]));
  for (i = 0; i < count; i++)
    {
      const double d = fabs ((double) got[i] - ref[i]);
      if (!(d <= SC_TEST_GRAD_TOL * scale + 1e-3 * fabs (ref[i])))
        g_error ("%s[%zu]: got %.7g, reference %.7g (block scale %.3g)", what, i, got[i], ref[i],
                 scale);
      worst = fmax (worst, d);
    }
  g_assert_cmpfloat (worst, <=, SC_TEST_GRAD_TOL * scale);
  return worst / scale;
}
