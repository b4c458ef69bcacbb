#!/usr/bin/env python3
"""gen_colormaps.py — writes ui/figures/saccade-colormap-tables.c from matplotlib's colour maps.

viridis, magma and cividis are matplotlib's ListedColormaps: 256 sRGB samples each, the
published data of van der Walt & Smith (viridis, magma) and Nuñez et al. 2018 (cividis),
copied here unchanged. The diverging map is ColorBrewer's RdBu as matplotlib interpolates it
(its 11 anchor colours, linear in sRGB), reversed so that negative values are blue and
positive ones red, sampled at 256 points.

Usage (needs matplotlib; any recent version has the same data):
    python3 -m venv /tmp/mpl && /tmp/mpl/bin/pip install matplotlib
    /tmp/mpl/bin/python tools/gen_colormaps.py > ui/figures/saccade-colormap-tables.c
"""
import sys

import matplotlib
import numpy as np


def table(name):
    cmap = matplotlib.colormaps[name]
    if hasattr(cmap, "colors") and len(cmap.colors) == 256:
        rgb = np.asarray(cmap.colors, dtype=np.float64)[:, :3]
    else:
        rgb = cmap(np.linspace(0.0, 1.0, 256))[:, :3]
    assert rgb.shape == (256, 3)
    return rgb


def emit(out, c_name, rgb, comment):
    out.write(f"/* {comment} */\n")
    out.write(f"const float {c_name}[256][3] = {{\n")
    for r, g, b in rgb:
        out.write(f"  {{ {r:.8f}f, {g:.8f}f, {b:.8f}f }},\n")
    out.write("};\n\n")


def main():
    out = sys.stdout
    out.write(
        "/* saccade-colormap-tables.c — colour map samples, written by tools/gen_colormaps.py\n"
        f" * from matplotlib {matplotlib.__version__}; do not edit by hand.\n"
        " * Each table: 256 sRGB colours, components in 0..1, for t = i / 255.\n"
        " */\n"
        "#include \"ui/figures/saccade-colormap-private.h\"\n\n"
    )
    emit(out, "saccade_colormap_viridis_table", table("viridis"),
         "viridis (van der Walt & Smith 2015)")
    emit(out, "saccade_colormap_magma_table", table("magma"),
         "magma (van der Walt & Smith 2015)")
    emit(out, "saccade_colormap_cividis_table", table("cividis"),
         "cividis (Nuñez, Anderton & Renslow 2018)")
    emit(out, "saccade_colormap_rdbu_table", table("RdBu_r"),
         "ColorBrewer RdBu, reversed: blue (t = 0) - white - red (t = 1)")


if __name__ == "__main__":
    main()
