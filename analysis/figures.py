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


# One legend for a figure's panels, drawn below them so that it hides no data: a legend inside
# each panel covered lines in some panel or other. save()'s bbox_inches="tight" keeps it.
def legend_below(fig, axes, ncol=5, fontsize=8):
    """Each label once, in the order the panels (and twin axes, when passed) first draw it."""
    entries = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if not label.startswith("_"):
                entries.setdefault(label, handle)
    if entries:
        fig.legend(list(entries.values()), list(entries.keys()), loc="upper center", bbox_to_anchor=(0.5, 0.0),
                   ncol=min(ncol, len(entries)), fontsize=fontsize, frameon=False)
    return bool(entries)
