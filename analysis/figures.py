"""Saving the report's figures: one place for formats and reproducible files.

Every figure goes out as PNG (the Markdown embeds it) and PDF (the print copy). The PDF's
CreationDate and the PNG's Software tag are left out so that redrawing a figure from the same
results writes the same bytes and `git status` shows only figures whose data changed.
"""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

FORMATS = ("png", "pdf")
_METADATA = {"png": {"Software": None}, "pdf": {"CreationDate": None, "Creator": None, "Producer": None}}


def save(fig, figures_dir, stem, dpi=130, tight=True):
    """Writes figures_dir/stem.png and .pdf, closes the figure and returns the Markdown link
    of the PNG relative to the report (figures/stem.png)."""
    os.makedirs(figures_dir, exist_ok=True)
    for ext in FORMATS:
        path = os.path.join(figures_dir, f"{stem}.{ext}")
        kwargs = {"dpi": dpi, "metadata": _METADATA[ext]}
        if tight:
            kwargs["bbox_inches"] = "tight"
        fig.savefig(path, **kwargs)
    plt.close(fig)
    return f"figures/{stem}.png"
