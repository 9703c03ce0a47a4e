"""The book's figure helpers: shared style, the RBM diagram and image grids."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rbm.plotting import BOOK_STYLE, draw_rbm, show_images, use_book_style  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_book_style_sets_a_column_wide_figure_with_body_text_fonts():
    with matplotlib.rc_context():
        use_book_style()
        fig = plt.figure()
        width_px = fig.get_figwidth() * fig.dpi
        assert 600 <= width_px <= 672  # the column is 672 px at 1280 px
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


def test_symmetric_image_grid_centres_the_colour_scale_on_zero():
    fig = show_images(np.array([[-1.0, 0.5, 0.0, 2.0]]), (2, 2), symmetric=True)
    image = fig.axes[0].images[0]
    assert image.get_clim() == (-2.0, 2.0)


@pytest.mark.parametrize("args, kwargs, match", [
    ((np.zeros((2, 5)), (2, 2)), {}, "image_shape"),
    ((np.zeros(4), (2, 2)), {}, "images"),
    ((np.zeros((2, 4)), (2, 2)), {"n_cols": 0}, "n_cols"),
    ((np.zeros((2, 4)), (2, 2)), {"titles": ["one"]}, "titles"),
])
def test_image_grid_refuses_inconsistent_input_by_name(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        show_images(*args, **kwargs)
