"""Line charts (PNG, drawn with Pillow) of a measured series, such as a periodic timer's interval
at every activation: the picture Gandalf shows for its 1 ms timer.

The layout is fixed: WIDTH x HEIGHT pixels, the plot area inside the margins; a point (x, y) is
drawn at x_pixel(x) and y_pixel(y) of the chart's ranges, which tests rely on.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

WIDTH, HEIGHT = 1000, 420
LEFT, RIGHT, TOP, BOTTOM = 110, 30, 40, 50
BACKGROUND = (255, 255, 255)
FRAME = (0, 0, 0)
GRID = (210, 210, 210)
LINE = (30, 90, 200)
FONT_SIZE = 12


@dataclass(frozen=True)
class Chart:
    title: str
    x_label: str
    y_label: str
    points: tuple[tuple[float, float], ...]

    def x_range(self) -> tuple[float, float]:
        xs = [x for x, _ in self.points]
        low, high = min(xs), max(xs)
        return low, high if high > low else low + 1

    def y_range(self) -> tuple[float, float]:
        """The values' range with a margin; a flat series is centred in a band of ±1 % of its
        value (±1 if it is 0), so a constant reads as a flat line in the middle."""
        ys = [y for _, y in self.points]
        low, high = min(ys), max(ys)
        pad = (high - low) / 10 if high > low else (abs(low) / 100 or 1)
        return low - pad, high + pad

    def x_pixel(self, x: float) -> int:
        low, high = self.x_range()
        return round(LEFT + (x - low) / (high - low) * (WIDTH - LEFT - RIGHT))

    def y_pixel(self, y: float) -> int:
        low, high = self.y_range()
        return round(HEIGHT - BOTTOM - (y - low) / (high - low) * (HEIGHT - TOP - BOTTOM))


def _label(value: float) -> str:
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"


def render(chart: Chart) -> Image.Image:
    if not chart.points:
        raise ValueError(f"chart '{chart.title}' has no points")
    image = Image.new("RGB", (WIDTH, HEIGHT), BACKGROUND)
    draw = ImageDraw.Draw(image)
    face = ImageFont.load_default()
    draw.text((LEFT, 12), chart.title, font=face, fill=FRAME)
    (x_low, x_high), (y_low, y_high) = chart.x_range(), chart.y_range()
    for i in range(5):  # grid and axis labels at quarters
        y = y_low + (y_high - y_low) * i / 4
        x = x_low + (x_high - x_low) * i / 4
        draw.line((LEFT, chart.y_pixel(y), WIDTH - RIGHT, chart.y_pixel(y)), fill=GRID)
        draw.text((8, chart.y_pixel(y) - FONT_SIZE // 2), _label(y), font=face, fill=FRAME)
        draw.text((chart.x_pixel(x) - 10, HEIGHT - BOTTOM + 6), _label(x), font=face, fill=FRAME)
    draw.rectangle((LEFT, TOP, WIDTH - RIGHT, HEIGHT - BOTTOM), outline=FRAME)
    draw.text((LEFT, HEIGHT - 20), chart.x_label, font=face, fill=FRAME)
    draw.text((8, TOP - 16), chart.y_label, font=face, fill=FRAME)
    line = [(chart.x_pixel(x), chart.y_pixel(y)) for x, y in chart.points]
    if len(line) == 1:
        draw.point(line, fill=LINE)
    else:
        draw.line(line, fill=LINE, width=1)
    return image


def save(chart: Chart, path: str | Path) -> None:
    render(chart).save(path, format="PNG")
