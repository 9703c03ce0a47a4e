"""Figures for the book: one shared style, diagrams of an RBM and of CD-k's chain, image grids.

matplotlib is an optional dependency (``pip install 'rbm-book[plotting]'``); only this
module imports it, so the rest of the package works without it.

In a notebook, :func:`use_book_style` also chooses each figure's format when
it is shown: line art (curves, markers, text) as SVG, which stays sharp at
any zoom, and figures that hold pixels (``imshow``, ``pcolormesh``) as PNG,
whose pixels an SVG would only wrap (:func:`figure_format`).
"""

import base64
import io
import numbers

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.collections import QuadMesh
from matplotlib.figure import Figure

#: The book's figure style. A chapter's column is 832 px wide at 1280 px, so a
#: figure 6.6 in wide is shown at its natural size (634 px as SVG, at 96 px to
#: the inch; 660 px as PNG at 100 dpi), not scaled down, and fonts of 10-11 pt
#: (13-15 px) are as large as the body text. ``svg.hashsalt`` fixes the ids
#: inside an SVG, so that re-running a notebook rewrites the same figure.
BOOK_STYLE = {
    "figure.figsize": (6.6, 4.0),
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "font.size": 11,
    "axes.titlesize": 11,
    "axes.labelsize": 11,
    "legend.fontsize": 10,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "lines.linewidth": 1.8,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "svg.hashsalt": "rbm-book",
}


def use_book_style():
    """Apply :data:`BOOK_STYLE` to matplotlib's rcParams.

    Every chapter calls this once, after importing pyplot, so that all of the
    book's figures share one size, one font size and one layout engine.

    Examples
    --------
    >>> use_book_style()
    >>> import matplotlib as mpl
    >>> mpl.rcParams["font.size"]
    11.0

    In an IPython kernel it also registers :func:`figure_svg` and
    :func:`figure_png` as the display formatters of matplotlib figures, so
    that each figure is shown in the format :func:`figure_format` picks.
    """
    mpl.rcParams.update(BOOK_STYLE)
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with every notebook
        return
    shell = get_ipython()
    if shell is None:
        return
    if "inline" in str(mpl.get_backend(auto_select=False)):
        # The inline backend sets its own formatters the first time it is
        # loaded, which pyplot otherwise delays until the first figure: load
        # it now, so that it does not undo ours.
        import matplotlib_inline.backend_inline  # noqa: F401
    formatters = shell.display_formatter.formatters
    formatters["image/svg+xml"].for_type(Figure, figure_svg)
    formatters["image/png"].for_type(Figure, figure_png)


def figure_format(fig):
    """The format a figure is shown in: ``"png"`` if it holds pixels, else ``"svg"``.

    A figure holds pixels when any of its axes shows an image (``imshow``,
    ``matshow``) or a ``pcolormesh``, or when the figure itself does
    (``figimage``). Everything else is line art.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure to classify.

    Returns
    -------
    str
        ``"png"`` or ``"svg"``.

    Examples
    --------
    >>> fig, ax = plt.subplots()
    >>> _ = ax.plot([0, 1], [1, 0])
    >>> figure_format(fig)
    'svg'
    >>> _ = ax.imshow(np.eye(3))
    >>> figure_format(fig)
    'png'
    >>> plt.close(fig)
    """
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    if fig.images:
        return "png"
    for ax in fig.axes:
        if ax.images or any(isinstance(c, QuadMesh) for c in ax.collections):
            return "png"
    return "svg"


def _shown_as(fig, fmt):
    """The figure printed as `fmt` if :func:`figure_format` picks `fmt`, else None."""
    if figure_format(fig) != fmt:
        return None
    buffer = io.BytesIO()
    # As IPython's inline backend prints a figure: cropped to what is drawn,
    # on the figure's own background. No date in an SVG, so that it is
    # rewritten identically.
    metadata = {"Date": None} if fmt == "svg" else None
    fig.savefig(buffer, format=fmt, bbox_inches="tight", metadata=metadata,
                facecolor=fig.get_facecolor(), edgecolor=fig.get_edgecolor())
    return buffer.getvalue()


def figure_svg(fig):
    """The figure as SVG text if it is line art (see :func:`figure_format`), else None.

    Used by :func:`use_book_style` as a display formatter; returning None
    lets the PNG formatter (:func:`figure_png`) show the figure instead.

    Examples
    --------
    >>> fig, ax = plt.subplots()
    >>> _ = ax.plot([0, 1], [1, 0])
    >>> figure_svg(fig).startswith("<?xml")
    True
    >>> _ = ax.imshow(np.eye(3))
    >>> figure_svg(fig) is None
    True
    >>> figure_png(fig)[:8]  # base64 of the PNG signature
    'iVBORw0K'
    >>> plt.close(fig)
    """
    data = _shown_as(fig, "svg")
    return None if data is None else data.decode("utf-8")


def figure_png(fig):
    """The figure as base64 PNG if it holds pixels (see :func:`figure_format`), else None.

    The counterpart of :func:`figure_svg`, with the same use.
    """
    data = _shown_as(fig, "png")
    return None if data is None else base64.b64encode(data).decode("ascii")


def draw_rbm(n_visible=4, n_hidden=3, ax=None):
    """Draw an RBM as two layers of units joined by every visible-hidden weight.

    Visible units :math:`v_i` with biases :math:`b_i` form the bottom row,
    hidden units :math:`h_j` with biases :math:`c_j` the top row; each pair
    :math:`(v_i, h_j)` is joined by an edge for the weight :math:`W_{ij}`, and
    no edge joins two units of one layer. Arrows at the side name the two
    conditionals :math:`p(\\mathbf{h} \\mid \\mathbf{v})` and
    :math:`p(\\mathbf{v} \\mid \\mathbf{h})`.

    Parameters
    ----------
    n_visible : int, default 4
        Number of visible units drawn, between 1 and 8.
    n_hidden : int, default 3
        Number of hidden units drawn, between 1 and 8.
    ax : matplotlib.axes.Axes, optional
        Axes to draw into; a new 6.6 x 3.4 in figure when omitted.

    Returns
    -------
    matplotlib.figure.Figure
        The figure holding the diagram.

    Examples
    --------
    >>> fig = draw_rbm(3, 2)
    >>> len(fig.axes[0].lines)  # one line per weight
    6
    """
    for name, value in (("n_visible", n_visible), ("n_hidden", n_hidden)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an int, got {type(value).__name__}")
        if not 1 <= value <= 8:
            raise ValueError(f"{name} must be between 1 and 8 to stay legible, got {value}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6.6, 3.4))
    # Both rows are centred on x = 0 with unit spacing, so that the edges fan out symmetrically;
    # units are circles in data coordinates, so that they keep their size relative to the gaps.
    xv = np.arange(n_visible) - (n_visible - 1) / 2
    xh = np.arange(n_hidden) - (n_hidden - 1) / 2
    y_v, y_h, radius = 0.0, 2.0, 0.3
    for x0 in xv:
        for x1 in xh:
            ax.plot([x0, x1], [y_v, y_h], color="0.6", lw=1.0, zorder=1)
    ax.annotate("$W_{ij}$", xy=((3 * xv[0] + xh[0]) / 4, 0.5), xytext=(-30, 0),
                textcoords="offset points", ha="right", va="center", fontsize=13,
                arrowprops={"arrowstyle": "-", "color": "0.3", "lw": 0.8})
    for xs, y, name, bias, color in ((xv, y_v, "v", "b", "C0"), (xh, y_h, "h", "c", "C1")):
        below = name == "v"
        for k, x in enumerate(xs, start=1):
            ax.add_patch(mpl.patches.Circle((x, y), radius, facecolor=color,
                                            edgecolor="black", zorder=2))
            ax.text(x, y, f"${name}_{{{k}}}$", ha="center", va="center", fontsize=13,
                    color="white", zorder=3)
            ax.text(x, y - 0.4 if below else y + 0.4, f"${bias}_{{{k}}}$", ha="center",
                    va="top" if below else "bottom", fontsize=12)
    half = max(n_visible, n_hidden) / 2
    ax.text(-half - 0.2, y_h, "hidden", ha="right", va="center", fontsize=12)
    ax.text(-half - 0.2, y_v, "visible", ha="right", va="center", fontsize=12)
    x_arrow = half + 0.3
    ax.annotate("", xy=(x_arrow, y_h - 0.3), xytext=(x_arrow, y_v + 0.3),
                arrowprops={"arrowstyle": "-|>", "color": "C1", "lw": 1.8})
    ax.annotate("", xy=(x_arrow + 0.3, y_v + 0.3), xytext=(x_arrow + 0.3, y_h - 0.3),
                arrowprops={"arrowstyle": "-|>", "color": "C0", "lw": 1.8})
    ax.text(x_arrow - 0.1, 1.3, r"$p(\mathbf{h}\mid\mathbf{v})$", ha="right", va="center",
            fontsize=12, color="C1")
    ax.text(x_arrow + 0.4, 0.7, r"$p(\mathbf{v}\mid\mathbf{h})$", ha="left", va="center",
            fontsize=12, color="C0")
    ax.set_xlim(-half - 1.5, x_arrow + 1.7)
    ax.set_ylim(-0.9, 2.9)
    ax.set_aspect("equal")
    ax.axis("off")
    return ax.figure


def draw_cd_chain(k=2, ax=None):
    r"""Draw the Gibbs chain of CD-k and the two statistics its update compares.

    The chain starts at a training vector :math:`\mathbf{v}_0` and alternates
    :math:`\mathbf{h}_t \sim p(\mathbf{h} \mid \mathbf{v}_t)` and
    :math:`\mathbf{v}_{t+1} \sim p(\mathbf{v} \mid \mathbf{h}_t)` up to
    :math:`\mathbf{v}_k`.  The last hidden state is not sampled: its node, drawn
    dashed, is :math:`\tilde{\mathbf{h}}_k = p(\mathbf{h}{=}1 \mid \mathbf{v}_k)`,
    the probabilities.  The positive statistic
    :math:`\mathbf{v}_0 \tilde{\mathbf{h}}_0^\top` (the data term) is read at the
    start, the negative statistic :math:`\mathbf{v}_k \tilde{\mathbf{h}}_k^\top`
    (the estimate of the model term) at the end; CD-k's weight update is their
    difference.

    Parameters
    ----------
    k : int, default 2
        Number of Gibbs steps, at least 1; for ``k > 3`` the steps between
        the first and the last are elided.
    ax : matplotlib.axes.Axes, optional
        Axes to draw into; a new 4.6 x 2.2 in figure when omitted (narrow
        enough to be shown unscaled on a phone).

    Returns
    -------
    matplotlib.figure.Figure
        The figure holding the diagram.

    Examples
    --------
    >>> fig = draw_cd_chain(2)
    >>> texts = [t.get_text() for t in fig.axes[0].texts]
    >>> sorted(t for t in texts if t.startswith("$\\mathbf{v}"))
    ['$\\mathbf{v}_{0}$', '$\\mathbf{v}_{1}$', '$\\mathbf{v}_{2}$']
    >>> [t for t in texts if t.startswith("$\\tilde")]
    ['$\\tilde{\\mathbf{h}}_{2}$']
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k must be an int, got {type(k).__name__}")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if ax is None:
        _, ax = plt.subplots(figsize=(4.6, 2.2))
    steps = list(range(k + 1)) if k <= 3 else [0, 1, None, k]
    y_v, y_h, radius, gap = 0.0, 1.6, 0.34, 2.1
    xs = [gap * n for n in range(len(steps))]
    arrow = {"arrowstyle": "-|>", "lw": 1.4}
    for n, (x, t) in enumerate(zip(xs, steps)):
        if t is None:
            ax.text(x, (y_v + y_h) / 2, r"$\cdots$", ha="center", va="center", fontsize=14)
            continue
        last = n + 1 == len(xs)
        for y, name, color in ((y_v, "v", "C0"), (y_h, "h", "C1")):
            if last and name == "h":  # probabilities, not a sampled state
                ax.add_patch(mpl.patches.Circle((x, y), radius, facecolor="white",
                                                edgecolor=color, lw=1.6, ls="--", zorder=2))
                ax.text(x, y, rf"$\tilde{{\mathbf{{h}}}}_{{{t}}}$", ha="center",
                        va="center", fontsize=12, color="black", zorder=3)
                continue
            ax.add_patch(mpl.patches.Circle((x, y), radius, facecolor=color,
                                            edgecolor="black", zorder=2))
            ax.text(x, y, rf"$\mathbf{{{name}}}_{{{t}}}$", ha="center", va="center",
                    fontsize=12, color="white", zorder=3)
        ax.annotate("", xy=(x, y_h - radius), xytext=(x, y_v + radius),
                    arrowprops={**arrow, "color": "C1"})
        if n + 1 < len(xs):
            target = (xs[n + 1] - 0.25, y_v + 0.25) if steps[n + 1] is not None else (
                xs[n + 1] - 0.35, 0.8)
            ax.annotate("", xy=target, xytext=(x + 0.25, y_h - 0.25),
                        arrowprops={**arrow, "color": "C0"})
    for n in range(len(xs) - 1):
        if steps[n] is None:  # the elided steps lead on into the last visible state
            ax.annotate("", xy=(xs[n + 1] - 0.25, y_v + 0.25), xytext=(xs[n] + 0.3, 0.8),
                        arrowprops={**arrow, "color": "C0"})
    ax.text(xs[0] + gap / 2, 0.0, r"$p(\mathbf{v}\mid\mathbf{h})$", ha="center",
            va="center", fontsize=10, color="C0")
    ax.text(xs[0] - 0.1, 0.8, r"$p(\mathbf{h}\mid\mathbf{v})$", ha="right", va="center",
            fontsize=10, color="C1")
    ax.text(xs[0], y_v - 0.55, "data vector\n" + r"$+\,\mathbf{v}_0\tilde{\mathbf{h}}_0^\top$",
            ha="center", va="top", fontsize=10)
    ax.text(xs[-1], y_v - 0.55, f"after {k} step{'s' if k > 1 else ''}\n"
            + rf"$-\,\mathbf{{v}}_{{{k}}}\tilde{{\mathbf{{h}}}}_{{{k}}}^\top$",
            ha="center", va="top", fontsize=10)
    ax.set_xlim(xs[0] - 1.55, xs[-1] + 0.75)
    ax.set_ylim(-1.6, y_h + 0.5)
    ax.set_aspect("equal")
    ax.axis("off")
    return ax.figure


def show_images(images, image_shape, n_cols=10, *, titles=None, symmetric=False, frame=False,
                width=6.6):
    """Show flat images side by side in a grid of small panels.

    Parameters
    ----------
    images : array_like of shape (n_images, n_pixels)
        One image per row, ``n_pixels = image_shape[0] * image_shape[1]``.
    image_shape : tuple of int
        Height and width of one image.
    n_cols : int, default 10
        Images per row of the grid.
    titles : sequence of str, optional
        One short title per image.
    symmetric : bool, default False
        Scale each image's colours symmetrically about zero with a diverging
        map (for weights); otherwise black on white between 0 and 1.
    frame : bool, default False
        Draw a thin grey frame around each image, so that an image with white
        pixels at its border (or an all-white image) keeps its outline.
    width : float, default 6.6
        Width of the figure in inches (the book's column); a square grid of
        few columns reads better narrower. The height follows from the grid.

    Returns
    -------
    matplotlib.figure.Figure
        A new figure `width` inches wide, with one axes per grid cell.

    Examples
    --------
    >>> fig = show_images(np.eye(4), (2, 2), n_cols=2)
    >>> len(fig.axes)
    4
    """
    images = np.asarray(images, dtype=float)
    if images.ndim != 2 or images.shape[0] == 0:
        raise ValueError(f"images must be a non-empty 2-D array, got shape {images.shape}")
    if len(image_shape) != 2 or int(np.prod(image_shape)) != images.shape[1]:
        raise ValueError(f"image_shape {tuple(image_shape)} does not match "
                         f"{images.shape[1]} pixels per image")
    if isinstance(n_cols, bool) or not isinstance(n_cols, (int, np.integer)) or n_cols < 1:
        raise ValueError(f"n_cols must be a positive int, got {n_cols!r}")
    if titles is not None and len(titles) != len(images):
        raise ValueError(f"titles must have one entry per image ({len(images)}), "
                         f"got {len(titles)}")
    if isinstance(width, bool) or not isinstance(width, numbers.Real) or not 0 < width <= 8.6:
        raise ValueError(f"width must be a number of inches in (0, 8.6], got {width!r}")
    n_cols = min(n_cols, len(images))
    n_rows = -(-len(images) // n_cols)
    height = width / n_cols * n_rows * image_shape[0] / image_shape[1]
    if titles is not None:
        height += 0.25 * n_rows
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(width, height), squeeze=False,
                             layout="constrained")
    if not isinstance(frame, (bool, np.bool_)):
        raise TypeError(f"frame must be a bool, got {type(frame).__name__}")
    for k, axis in enumerate(axes.flat):
        axis.set_axis_off()
        if k >= len(images):
            continue
        if frame:  # the frame is the axes' spines, without ticks
            axis.set_axis_on()
            axis.set(xticks=[], yticks=[])
            for spine in axis.spines.values():
                spine.set(color="0.6", linewidth=0.8)
        picture = images[k].reshape(image_shape)
        if symmetric:
            limit = np.abs(picture).max() or 1.0
            axis.imshow(picture, cmap="RdBu_r", vmin=-limit, vmax=limit)
        else:
            axis.imshow(picture, cmap="gray_r", vmin=0.0, vmax=1.0)
        if titles is not None:
            axis.set_title(titles[k], fontsize=10)
    return fig
