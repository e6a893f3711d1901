"""Timeline pictures (PNG, drawn with Pillow): one lane per core, boxes on a time axis.

`bulkhead plan` and `bulkhead trace` both describe what they show as a Timeline and render it
here, so a plan and a trace of the same system look alike (same layout, same partition colours).
The layout is fixed: the picture is WIDTH pixels wide and height() pixels high, and a time t is
drawn at x_of(t); tests rely on these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

Color = tuple[int, int, int]

# Partition colours, by partition id: distinct, and light enough for black labels.
PALETTE: tuple[Color, ...] = (
    (102, 153, 255), (255, 128, 102), (110, 200, 120), (255, 200, 70), (190, 130, 230), (80, 200, 210),
    (240, 150, 190), (170, 190, 80), (150, 160, 240), (230, 170, 110), (120, 210, 170), (220, 120, 150),
    (180, 180, 180), (140, 200, 250), (250, 220, 140), (200, 150, 130),
)
BACKGROUND: Color = (255, 255, 255)
LANE_COLOR: Color = (238, 238, 238)   # a lane where nothing is drawn: idle
TEXT: Color = (0, 0, 0)
GRID: Color = (200, 200, 200)
HM_COLOR: Color = (220, 0, 0)
PLAN_SWITCH_COLOR: Color = (0, 70, 220)
BUDGET_COLOR: Color = (230, 120, 0)

WIDTH = 1200
LEFT = 170          # lane labels left of the plot
RIGHT = 30
TOP = 34            # the title above the lanes
LANE_HEIGHT = 36
LANE_GAP = 10
STRIP_HEIGHT = 8    # a lane's strip (slots of a trace) below its boxes
AXIS_HEIGHT = 30
LINE_HEIGHT = 16    # legend rows and notes
BOTTOM = 8
PLOT_WIDTH = WIDTH - LEFT - RIGHT
FONT_SIZE = 12


def partition_color(partition_id: int) -> Color:
    return PALETTE[partition_id % len(PALETTE)]


def darker(color: Color) -> Color:
    """The shade of a colour used for strips, so they stand out from boxes of the same colour."""
    return tuple(value * 3 // 5 for value in color)


@dataclass
class Box:
    start: int  # ns
    end: int
    color: Color
    label: str = ""
    hatched: bool = False  # diagonal stripes in the darker shade: a best-effort vCPU in a core's idle time


@dataclass
class Marker:
    time: int  # ns
    color: Color


@dataclass
class Lane:
    label: str  # may have a second line after "\n"
    boxes: list[Box] = field(default_factory=list)
    strip: list[Box] = field(default_factory=list)  # a thin band under the boxes
    markers: list[Marker] = field(default_factory=list)


@dataclass
class Timeline:
    title: str
    start: int  # ns at the left edge of the plot
    end: int    # ns at the right edge
    lanes: list[Lane]
    legend: list[tuple[str, Color]] = field(default_factory=list)  # swatch, then name
    notes: list[str] = field(default_factory=list)  # caption lines under the legend
    axis: bool = True  # False: no time axis (boxes are proportions, not times)
    origin: int | None = None  # the time the axis labels count from; None = start


def font() -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size=FONT_SIZE)
    except (TypeError, ValueError, OSError, ImportError):  # Pillow without FreeType: the bitmap font
        return ImageFont.load_default()


def lane_top(index: int) -> int:
    return TOP + index * (LANE_HEIGHT + LANE_GAP)


def x_of(timeline: Timeline, time: int) -> float:
    span = max(timeline.end - timeline.start, 1)
    return LEFT + (time - timeline.start) * PLOT_WIDTH / span


def legend_rows(timeline: Timeline) -> list[list[tuple[str, Color]]]:
    rows: list[list[tuple[str, Color]]] = [[]]
    used, face = 0, font()
    for name, color in timeline.legend:
        width = 16 + int(face.getlength(name)) + 14
        if rows[-1] and LEFT + used + width > WIDTH - RIGHT:
            rows.append([])
            used = 0
        rows[-1].append((name, color))
        used += width
    return [row for row in rows if row]


def height(timeline: Timeline) -> int:
    lanes = len(timeline.lanes) * (LANE_HEIGHT + LANE_GAP)
    axis = AXIS_HEIGHT if timeline.axis else 0
    captions = (len(legend_rows(timeline)) + len(timeline.notes)) * LINE_HEIGHT
    return TOP + lanes + axis + captions + BOTTOM


def tick_step(span: int) -> int:
    """A 1-2-5 step (ns) giving at most about 10 ticks over span ns."""
    target = max(span / 10, 1)
    for exponent in range(20):
        for mantissa in (1, 2, 5):
            step = mantissa * 10 ** exponent
            if step >= target:
                return step
    return 10 ** 20


def tick_label(offset: int, step: int) -> str:
    """offset ns as ms when the step is a whole ms or more, else in us."""
    unit, factor = ("ms", 1_000_000) if step >= 1_000_000 else ("us", 1_000)
    if offset == 0:
        return "0"
    text = f"{offset / factor:.3f}".rstrip("0").rstrip(".")
    return f"{text}{unit}"


def ticks(timeline: Timeline) -> list[tuple[int, str]]:
    """(x, label) of each tick of the time axis."""
    origin = timeline.start if timeline.origin is None else timeline.origin
    step = tick_step(timeline.end - timeline.start)
    first = origin - (origin - timeline.start) // step * step  # the first origin + k*step at or after start
    return [(round(x_of(timeline, tick)), tick_label(tick - origin, step))
            for tick in range(first, timeline.end + 1, step)]


def render(timeline: Timeline) -> Image.Image:
    image = Image.new("RGB", (WIDTH, height(timeline)), BACKGROUND)
    draw = ImageDraw.Draw(image)
    face = font()
    draw.text((8, 9), timeline.title, font=face, fill=TEXT)
    grid = ticks(timeline) if timeline.axis else []
    for index, lane in enumerate(timeline.lanes):
        _draw_lane(draw, face, timeline, lane, lane_top(index), grid)
    y = lane_top(len(timeline.lanes))
    if timeline.axis:
        _draw_axis(draw, face, grid, y)
        y += AXIS_HEIGHT
    for row in legend_rows(timeline):
        x = LEFT
        for name, color in row:
            draw.rectangle((x, y + 2, x + 11, y + 13), fill=color, outline=TEXT)
            draw.text((x + 16, y + 1), name, font=face, fill=TEXT)
            x += 16 + int(face.getlength(name)) + 14
        y += LINE_HEIGHT
    for note in timeline.notes:
        draw.text((LEFT, y + 1), note, font=face, fill=TEXT)
        y += LINE_HEIGHT
    return image


def save(timeline: Timeline, path: str | Path) -> None:
    render(timeline).save(path, format="PNG")


def _text_color(color: Color) -> Color:
    luminance = 0.299 * color[0] + 0.587 * color[1] + 0.114 * color[2]
    return TEXT if luminance > 110 else BACKGROUND


def _draw_lane(draw: ImageDraw.ImageDraw, face, timeline: Timeline, lane: Lane, top: int,
               grid: list[tuple[int, str]]) -> None:
    bottom = top + LANE_HEIGHT
    draw.multiline_text((8, top + 3), lane.label, font=face, fill=TEXT, spacing=2)
    draw.rectangle((LEFT, top, LEFT + PLOT_WIDTH, bottom), fill=LANE_COLOR)
    for x, _ in grid:
        draw.line((x, top, x, bottom), fill=GRID)
    box_bottom = bottom - STRIP_HEIGHT - 2 if lane.strip else bottom
    for box in lane.boxes:
        _draw_box(draw, face, timeline, box, top, box_bottom)
    for box in lane.strip:
        _draw_box(draw, face, timeline, box, bottom - STRIP_HEIGHT, bottom)
    for marker in lane.markers:
        x = round(x_of(timeline, marker.time))
        draw.line((x, top - 3, x, bottom), fill=marker.color, width=2)
        draw.polygon(((x - 4, top - 7), (x + 4, top - 7), (x, top - 1)), fill=marker.color)


def _draw_box(draw: ImageDraw.ImageDraw, face, timeline: Timeline, box: Box, top: int, bottom: int) -> None:
    left = max(x_of(timeline, box.start), LEFT)
    right = min(x_of(timeline, box.end), LEFT + PLOT_WIDTH)
    if right < left:
        return
    x0, x1 = round(left), max(round(right) - 1, round(left))
    draw.rectangle((x0, top, x1, bottom), fill=box.color)
    if box.hatched:
        _hatch(draw, x0, top, x1, bottom, darker(box.color))
    if box.label and bottom - top >= FONT_SIZE + 2:
        width = face.getlength(box.label)
        if width + 6 <= x1 - x0:
            y = top + (bottom - top - FONT_SIZE) / 2 - 1
            draw.text(((x0 + x1 - width) / 2, y), box.label, font=face, fill=_text_color(box.color))


HATCH_STEP = 6  # pixels between the stripes of a hatched box


def _hatch(draw: ImageDraw.ImageDraw, x0: int, top: int, x1: int, bottom: int, color: Color) -> None:
    """Stripes from bottom left to top right, HATCH_STEP apart, clipped to the box."""
    height = bottom - top
    for start in range(x0 - height, x1 + 1, HATCH_STEP):  # the x where a stripe meets the bottom edge
        a = (max(start, x0), bottom - (max(start, x0) - start))
        b = (min(start + height, x1), bottom - (min(start + height, x1) - start))
        if a[0] <= b[0]:
            draw.line((a, b), fill=color, width=2)


def _draw_axis(draw: ImageDraw.ImageDraw, face, grid: list[tuple[int, str]], y: int) -> None:
    draw.line((LEFT, y, LEFT + PLOT_WIDTH, y), fill=TEXT)
    for x, label in grid:
        draw.line((x, y, x, y + 5), fill=TEXT)
        width = face.getlength(label)
        draw.text((min(max(x - width / 2, 2), WIDTH - width - 2), y + 8), label, font=face, fill=TEXT)
