"""The text of every core figure is legible on a phone: at least ``MIN_TEXT_PX`` pixels.

At 400 px the book's column is ``PHONE_COLUMN_PX`` wide (``_static/book.css``; the browser
test ``test_figures_scaled_to_the_column_on_a_phone`` measures figures scaled to it in
Chromium), and a figure wider than the column is scaled down to it. Matplotlib writes each
glyph run of an SVG figure as a path group scaled by ``font size / 100`` (``scale(0.1 -0.1)``
for 10 pt), and the figure's width in points; one point is 4/3 CSS pixels. So the size at
which a figure's smallest text appears on a phone is known from the committed notebook,
without a browser: ``points x min(4/3, column / width in points)``.

Figures stored as PNG (pixel images such as heat maps drawn with ``imshow``) carry no text
size; they are listed, not measured.
"""
import json
import re

import pytest

from test_page_format import CORE

PHONE_COLUMN_PX = 352
MIN_TEXT_PX = 9.0
HIDDEN_OUTPUT = {"remove-cell", "remove-output", "hide-cell", "hide-output"}


def smallest_text_px(svg, column=PHONE_COLUMN_PX):
    """The smallest text of a matplotlib SVG as shown in a column `column` px wide."""
    width = float(re.search(r'<svg[^>]*\bwidth="([0-9.]+)pt"', svg).group(1))
    sizes = [100 * float(s) for s in re.findall(r"scale\(([0-9.]+) -[0-9.]+\)", svg)]
    if not sizes:
        return None
    return min(sizes) * min(4 / 3, column / width)


def shown_svgs(path):
    cells = json.loads(path.read_text())["cells"]
    for n, cell in enumerate(cells):
        if cell["cell_type"] != "code" or HIDDEN_OUTPUT & set(
                cell.get("metadata", {}).get("tags", [])):
            continue
        for out in cell.get("outputs", []):
            svg = out.get("data", {}).get("image/svg+xml")
            if svg:
                yield n, "".join(svg)


@pytest.mark.parametrize("path", CORE, ids=lambda p: p.stem)
def test_figure_text_legible_on_a_phone(path):
    small = [(n, round(px, 1)) for n, svg in shown_svgs(path)
             if (px := smallest_text_px(svg)) is not None and px < MIN_TEXT_PX]
    assert not small, (f"{path.name}: figures whose smallest text is under {MIN_TEXT_PX} px "
                       f"at 400 px (cell, px): {small}; narrow the figure or enlarge its text")


def test_the_measure_can_fail():
    def svg(width_pt, scale):
        return (f'<svg width="{width_pt}pt" height="100pt"><g transform="translate(1 2) '
                f'scale({scale} -{scale})"></g></svg>')
    assert smallest_text_px(svg(528, 0.1)) == pytest.approx(10 * 352 / 528)   # 6.67 px
    assert smallest_text_px(svg(200, 0.1)) == pytest.approx(10 * 4 / 3)       # not enlarged
    assert smallest_text_px('<svg width="10pt"></svg>') is None
