"""bulkhead.chart: line charts of a measured series (the timer interval plot of the system tests)."""

import pytest

from bulkhead import chart


def test_points_are_drawn_where_the_ranges_put_them():
    c = chart.Chart("t", "x", "y", ((0, 10), (50, 10), (51, 30), (100, 30)))
    image = chart.render(c)
    assert image.size == (chart.WIDTH, chart.HEIGHT)
    assert image.getpixel((c.x_pixel(25), c.y_pixel(10))) == chart.LINE   # the low level
    assert image.getpixel((c.x_pixel(75), c.y_pixel(30))) == chart.LINE   # the high level
    assert image.getpixel((c.x_pixel(75), c.y_pixel(10))) != chart.LINE   # nothing below it
    low, high = c.y_range()
    assert low < 10 and high > 30


def test_a_flat_series_is_a_line_in_the_middle():
    c = chart.Chart("t", "x", "y", tuple((i, 1_000_000) for i in range(1, 100)))
    low, high = c.y_range()
    assert (low, high) == (990_000, 1_010_000)
    middle = (chart.TOP + chart.HEIGHT - chart.BOTTOM) / 2
    assert abs(c.y_pixel(1_000_000) - middle) <= 1
    assert chart.render(c).getpixel((c.x_pixel(50), c.y_pixel(1_000_000))) == chart.LINE


def test_no_points_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="no points"):
        chart.save(chart.Chart("empty", "x", "y", ()), tmp_path / "empty.png")
