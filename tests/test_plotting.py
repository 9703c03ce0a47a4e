"""The book's figure helpers: shared style, the RBM diagram and image grids."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import base64  # noqa: E402

from rbm.plotting import (  # noqa: E402
    BOOK_STYLE,
    draw_rbm,
    figure_format,
    figure_png,
    figure_svg,
    show_images,
    use_book_style,
)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_book_style_sets_a_column_wide_figure_with_body_text_fonts():
    with matplotlib.rc_context():
        use_book_style()
        fig = plt.figure()
        width_px = fig.get_figwidth() * fig.dpi
        assert 600 <= width_px <= 672  # shown unscaled: the column is 832 px at 1280 px
        for key in ("font.size", "axes.labelsize", "legend.fontsize", "xtick.labelsize"):
            assert float(matplotlib.rcParams[key]) >= 10
    assert BOOK_STYLE["figure.dpi"] == BOOK_STYLE["savefig.dpi"]


def test_rbm_diagram_joins_every_visible_unit_to_every_hidden_unit_only():
    fig = draw_rbm(4, 3)
    ax = fig.axes[0]
    edges = {(tuple(np.round(line.get_xdata(), 6)), tuple(line.get_ydata())) for line in ax.lines}
    assert len(edges) == 12
    # every edge runs from the visible row (y = 0) to the hidden row (y = 2)
    assert all(ys == (0.0, 2.0) for _, ys in edges)
    assert len(ax.patches) == 7  # one circle per unit
    labels = {t.get_text() for t in ax.texts}
    assert {"$v_{1}$", "$v_{4}$", "$h_{1}$", "$h_{3}$", "$b_{1}$", "$c_{3}$"} <= labels
    assert r"$p(\mathbf{h}\mid\mathbf{v})$" in labels
    assert r"$p(\mathbf{v}\mid\mathbf{h})$" in labels


@pytest.mark.parametrize("bad, error", [(0, ValueError), (9, ValueError), (2.0, TypeError),
                                        (True, TypeError)])
def test_rbm_diagram_refuses_unit_counts_it_cannot_draw(bad, error):
    with pytest.raises(error, match="n_hidden"):
        draw_rbm(3, bad)


def test_image_grid_shows_each_image_in_its_own_panel_with_its_pixels():
    images = np.arange(12, dtype=float).reshape(3, 4) / 11
    fig = show_images(images, (2, 2), n_cols=2, titles=["a", "b", "c"])
    assert len(fig.axes) == 4  # a 2 x 2 grid, the last cell empty
    shown = [ax.images[0].get_array() for ax in fig.axes if ax.images]
    assert len(shown) == 3
    np.testing.assert_array_equal(shown[1], images[1].reshape(2, 2))
    assert [ax.get_title() for ax in fig.axes[:3]] == ["a", "b", "c"]
    assert fig.get_figwidth() == pytest.approx(6.6)


def test_image_grid_of_a_given_width_keeps_its_images_square():
    fig = show_images(np.zeros((16, 64)), (8, 8), n_cols=4, width=4.0)
    assert fig.get_figwidth() == pytest.approx(4.0)
    assert fig.get_figheight() == pytest.approx(4.0)  # 4 x 4 square images


def test_symmetric_image_grid_centres_the_colour_scale_on_zero():
    fig = show_images(np.array([[-1.0, 0.5, 0.0, 2.0]]), (2, 2), symmetric=True)
    image = fig.axes[0].images[0]
    assert image.get_clim() == (-2.0, 2.0)


@pytest.mark.parametrize("args, kwargs, match", [
    ((np.zeros((2, 5)), (2, 2)), {}, "image_shape"),
    ((np.zeros(4), (2, 2)), {}, "images"),
    ((np.zeros((2, 4)), (2, 2)), {"n_cols": 0}, "n_cols"),
    ((np.zeros((2, 4)), (2, 2)), {"titles": ["one"]}, "titles"),
    ((np.zeros((2, 4)), (2, 2)), {"width": 0}, "width"),
    ((np.zeros((2, 4)), (2, 2)), {"width": 9.0}, "width"),
])
def test_image_grid_refuses_inconsistent_input_by_name(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        show_images(*args, **kwargs)


def line_art():
    fig, ax = plt.subplots()
    ax.plot([0, 1, 2], [2, 0, 1], "o-", label="a line")
    ax.set_title(r"$\lambda_2^{k-1}$")
    ax.legend()
    return fig


def with_pixels(kind):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    if kind == "imshow":
        ax.imshow(np.eye(3))
    elif kind == "pcolormesh":
        ax.pcolormesh(np.eye(3))
    else:
        fig.figimage(np.eye(3))
    return fig


@pytest.mark.parametrize("kind", ["imshow", "pcolormesh", "figimage"])
def test_a_figure_with_pixels_is_shown_as_png_and_line_art_as_svg(kind):
    assert figure_format(line_art()) == "svg"
    assert figure_format(draw_rbm(3, 2)) == "svg"
    fig = with_pixels(kind)
    assert figure_format(fig) == "png"
    assert figure_svg(fig) is None
    assert base64.b64decode(figure_png(fig)).startswith(b"\x89PNG\r\n\x1a\n")


def test_figure_format_names_a_wrong_argument():
    with pytest.raises(TypeError, match="fig must be a matplotlib Figure"):
        figure_format(plt.gca())


def test_an_svg_is_written_identically_each_time_without_a_date():
    with matplotlib.rc_context():
        use_book_style()
        first, second = figure_svg(line_art()), figure_svg(line_art())
    assert first == second
    assert first.lstrip().startswith("<?xml") and first.rstrip().endswith("</svg>")
    assert "<dc:date>" not in first
    assert figure_png(line_art()) is None


def test_in_ipython_the_book_style_shows_each_figure_in_one_format():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        with matplotlib.rc_context():
            use_book_style()
            for fig, wanted in [(line_art(), "image/svg+xml"), (with_pixels("imshow"), "image/png")]:
                data, _ = shell.display_formatter.format(fig)
                images = {k for k in data if k.startswith("image/")}
                assert images == {wanted}
    finally:
        InteractiveShell.clear_instance()


def test_nbval_compares_an_svg_figure_by_its_presence_only():
    """tests/nbval_sanitize.cfg turns a whole SVG, and only it, into one marker."""
    import re
    from pathlib import Path

    lines = (Path(__file__).parent / "nbval_sanitize.cfg").read_text().splitlines()
    rules = list(zip([ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("regex:")],
                     [ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("replace:")]))
    with matplotlib.rc_context():
        use_book_style()
        svg = figure_svg(line_art())
    for text, expected in [(svg, "<SVG-FIGURE>"), ("holds within 1e-12", "holds within 1e-12")]:
        for regex, replace in rules:
            text = re.sub(regex, replace, text)
        assert text == expected


def test_cd_chain_diagram_draws_every_step_or_elides_the_middle():
    from rbm.plotting import draw_cd_chain

    def states(fig):
        return sorted(t.get_text() for t in fig.axes[0].texts if "mathbf{v}_" in t.get_text()
                      and t.get_text().startswith("$"))

    assert states(draw_cd_chain(3)) == [f"$\\mathbf{{v}}_{{{t}}}$" for t in range(4)]
    assert states(draw_cd_chain(10)) == ["$\\mathbf{v}_{0}$", "$\\mathbf{v}_{10}$",
                                         "$\\mathbf{v}_{1}$"]
    with pytest.raises(ValueError, match="k must be at least 1"):
        draw_cd_chain(0)
    with pytest.raises(TypeError, match="k must be an int"):
        draw_cd_chain(2.0)
    plt.close("all")


def test_show_images_frames_each_image_when_asked():
    from rbm.plotting import show_images

    framed = show_images(np.zeros((2, 4)), (2, 2), frame=True)
    plain = show_images(np.zeros((2, 4)), (2, 2))
    assert all(ax.axison for ax in framed.axes)
    assert not any(ax.axison for ax in plain.axes)
    with pytest.raises(TypeError, match="frame must be a bool"):
        show_images(np.zeros((2, 4)), (2, 2), frame="yes")
    plt.close("all")
