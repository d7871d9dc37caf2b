"""The layout of a snapshot strip (docs/post_processing.md, "Snapshot strips"): frames
side by side in rows of at most :data:`STRIP_COLUMNS`, sized so that the whole strip is
at most :data:`MAX_STRIP_WIDTH` pixels wide, and one colour bar for all of them on the
right (the frames are rendered without one, in the same colour range).
"""

from __future__ import annotations

import numpy as np

#: The widest strip [pixels] made by default: it fits a report page or a screen at
#: full resolution.
MAX_STRIP_WIDTH = 1800
#: Frames per row; more times continue on further rows.
STRIP_COLUMNS = 4
#: The largest frame of a strip [pixels] (that of a single render) and the frames' shape.
MAX_PANEL = (800, 600)
#: White pixels between frames and before the colour bar.
GAP = 8


def colour_bar_width(height: int) -> int:
    """Width [pixels] of the strip's colour bar for frames ``height`` pixels high."""
    return int(np.clip(round(0.2 * height), 90, 130))


def strip_layout(count: int, window_size=None) -> tuple[int, int, tuple[int, int]]:
    """(columns, rows, frame size (width, height)) of a strip of ``count`` frames: rows
    of at most :data:`STRIP_COLUMNS`; frames of ``window_size`` when given, else the
    largest of the 4:3 shape of :data:`MAX_PANEL` that keeps the strip, with its gaps
    and colour bar, within :data:`MAX_STRIP_WIDTH`."""
    columns = max(1, min(int(count), STRIP_COLUMNS))
    rows = -(-int(count) // columns)
    if window_size is not None:
        return columns, rows, (int(window_size[0]), int(window_size[1]))
    width = MAX_PANEL[0]
    while width > 160:
        height = round(width * MAX_PANEL[1] / MAX_PANEL[0])
        total = columns * width + columns * GAP + colour_bar_width(height)
        if total <= MAX_STRIP_WIDTH:
            break
        width -= 8
    return columns, rows, (width, round(width * MAX_PANEL[1] / MAX_PANEL[0]))


def colour_bar_image(clim, title: str, height: int, width: int | None = None,
                     cmap: str = "viridis") -> np.ndarray:
    """(height, width, 3) uint8 image of a vertical colour bar over ``clim`` (low, high)
    with its ``title`` (units included) above and ticks in the 3-significant-digit
    format of the frames' own bars."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure
    from matplotlib.ticker import FormatStrFormatter

    width = colour_bar_width(height) if width is None else int(width)
    dpi = 100.0
    fig = Figure(figsize=(width / dpi, height / dpi), dpi=dpi, facecolor="white")
    FigureCanvasAgg(fig)
    # the bar [pixels]: 70 % of the height, at most 420, leaving 25 above it for the
    # title and below it for the lowest tick label
    bar = min(0.7 * height, 420.0, height - 50.0)
    bottom = 0.5 * (height - bar)
    axes = fig.add_axes((0.12, bottom / height, 0.2, bar / height))
    mappable = ScalarMappable(Normalize(float(clim[0]), float(clim[1])), cmap)
    fig.colorbar(mappable, cax=axes, format=FormatStrFormatter("%.3g"))
    axes.tick_params(labelsize=9)
    fig.text(0.5, (bottom + bar + 6.0) / height, title, ha="center", va="bottom",
             fontsize=10)
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()


def compose(images, columns: int, bar: np.ndarray | None = None) -> np.ndarray:
    """One white image of ``images`` (each (h, w, 3), all alike) in rows of ``columns``
    with :data:`GAP` pixels between them, and ``bar`` (a :func:`colour_bar_image` as
    high as the rows) on the right."""
    h, w = images[0].shape[:2]
    rows = -(-len(images) // columns)
    height = rows * h + (rows - 1) * GAP
    width = columns * w + (columns - 1) * GAP
    if bar is not None:
        width += GAP + bar.shape[1]
    out = np.full((height, width, 3), 255, dtype=np.uint8)
    for n, img in enumerate(images):
        r, c = divmod(n, columns)
        out[r * (h + GAP):r * (h + GAP) + h, c * (w + GAP):c * (w + GAP) + w] = img[..., :3]
    if bar is not None:
        out[:bar.shape[0], width - bar.shape[1]:] = bar
    return out
