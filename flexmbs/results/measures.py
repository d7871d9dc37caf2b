"""Measures of sampled histories: peak, RMS, row norms, the vibration about a slow
trend, its dominant frequency, the amplitude spectrum and the principal direction of a
3-vector history.

Plain array functions (no plotting, no result object): ``t`` are sample times [s],
frequencies are in [Hz], and every other value keeps the units of the signal it is
computed from (a tip displacement in [m] in body axes gives peaks in [m] and directions
in those body axes).
"""

from __future__ import annotations

import numpy as np

from ..errors import ValidationError


def peak(x) -> float:
    """max |x| (0 for an empty signal)."""
    x = np.asarray(x)
    return float(np.max(np.abs(x))) if x.size else 0.0


def rms(x, axis=None):
    """Root mean square over the samples (uniform output times assumed)."""
    x = np.asarray(x, dtype=float)
    return np.sqrt(np.mean(x * x, axis=axis)) if x.size else 0.0


def norm_rows(x) -> np.ndarray:
    """‖x_t‖ of each row of an (n_t, 3) history."""
    return np.linalg.norm(np.asarray(x, dtype=float), axis=-1)


def vibration(t, x, trend_window: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(uniform times, x − its slow trend): the quasi-static part that follows the
    rigid motion is removed by a Savitzky–Golay fit (quadratic) over ``trend_window``
    seconds (default a tenth of the record), leaving the vibration."""
    from scipy.signal import savgol_filter

    t = np.asarray(t, dtype=float)
    x = np.asarray(x, dtype=float)
    grid = np.linspace(t[0], t[-1], t.size)
    y = np.interp(grid, t, x)
    span = (t[-1] - t[0]) / 10 if trend_window is None else trend_window
    n = max(5, round(float(span / (grid[1] - grid[0]))) | 1)  # odd window length
    if n >= y.size:
        return grid, y - np.polyval(np.polyfit(grid, y, 2), grid)
    return grid, y - savgol_filter(y, n, 2)


def dominant_frequency(t, x, trend_window: float | None = None) -> float:
    """Frequency [Hz] of the largest peak of the amplitude spectrum of the vibration of
    x(t) (:func:`vibration`; bins below 2/``trend_window`` — what the trend removal
    cannot separate — are ignored). 0 for fewer than 16 samples or a constant signal."""
    t = np.asarray(t, dtype=float)
    x = np.asarray(x, dtype=float)
    if t.size < 16 or np.ptp(x) == 0:
        return 0.0
    span = (t[-1] - t[0]) / 10 if trend_window is None else trend_window
    grid, y = vibration(t, x, span)
    spec = np.abs(np.fft.rfft(y * np.hanning(y.size)))
    freqs = np.fft.rfftfreq(y.size, grid[1] - grid[0])
    keep = freqs >= 2.0 / span
    if not np.any(keep) or not np.any(spec[keep]):
        return 0.0
    return float(freqs[keep][int(np.argmax(spec[keep]))])


def amplitude_spectrum(t, x) -> tuple[np.ndarray, np.ndarray]:
    """(frequencies [Hz], amplitudes [units of x]) of a signal sampled at times ``t``
    (resampled uniformly, mean removed, Hann window; amplitude corrected for the
    window, so a sine of amplitude a peaks near a). At least 4 samples."""
    t = np.asarray(t, dtype=float)
    x = np.asarray(x, dtype=float)
    if t.size < 4:
        raise ValidationError("a spectrum needs at least 4 samples")
    grid = np.linspace(t[0], t[-1], t.size)
    y = np.interp(grid, t, x)
    window = np.hanning(y.size)
    amp = 2 * np.abs(np.fft.rfft((y - y.mean()) * window)) / window.sum()
    freqs = np.fft.rfftfreq(y.size, grid[1] - grid[0])
    return freqs, amp


def principal_direction(history) -> np.ndarray:
    """Unit direction of largest variance of an (n_t, 3) history, signed so that its
    largest excursion is positive (e_y for an identically zero history)."""
    history = np.asarray(history, dtype=float)
    if not np.any(history):
        return np.array([0.0, 1.0, 0.0])
    d = np.linalg.svd(history, full_matrices=False)[2][0]
    proj = history @ d
    return d if proj[np.argmax(np.abs(proj))] >= 0 else -d
