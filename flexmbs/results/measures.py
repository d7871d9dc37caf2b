"""Measures of sampled histories: peak, RMS, row norms, the vibration about a slow
trend, the dominant frequency of an oscillation, the amplitude spectrum and the
principal direction of a 3-vector history.

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


#: A spectral line counts from this many periods in the record: the Blackman–Harris
#: window's main lobe is 4 bins wide on each side, so a slower line merges with the
#: record's mean and drift.
MIN_PERIODS = 4.0
#: The spectrum is evaluated on this many times the record's samples (zero padding: a
#: finer grid of the same spectrum, for the peak's location between bins).
ZERO_PADDING = 8
#: A line is genuine when it rises by at least this fraction of its height above the
#: higher of the lowest points that part it from higher ground on either side (its
#: prominence) ...
MIN_PROMINENCE = 0.5
#: ... and reaches at least this fraction of the spectrum's largest value above
#: MIN_PERIODS (the far tail's ripples are not vibrations) ...
MIN_HEIGHT = 1e-2
#: ... and this fraction (60 dB below) of the largest value of the whole spectrum:
#: the flank of a drift's main lobe and the window's sidelobes are not vibrations.
ABOVE_LEAKAGE = 1e-3


def dominant_frequency(t, x, min_periods: float = MIN_PERIODS) -> float:
    """Frequency [Hz] of the strongest genuine spectral line of x(t): the frequency of
    its real oscillation, not of its drift.

    x is resampled uniformly, its mean and linear trend are removed, and its amplitude
    spectrum is taken with a Blackman–Harris window (sidelobes 92 dB down: a smooth
    drift, such as a quasi-static deflection following the rigid motion, leaks only
    into the lowest few lines) on a grid :data:`ZERO_PADDING` times finer than the
    bins. Searched from ``min_periods`` periods per record up, the result is the
    highest peak that stands out of its surroundings and above the window's leakage
    (:data:`MIN_PROMINENCE`, :data:`MIN_HEIGHT`, :data:`ABOVE_LEAKAGE`) — never the
    lower end of the search, where a drift's falling tail is largest — refined by a
    parabola through the logarithms of the peak and its neighbours. A line is found
    reliably from about ``min_periods`` + 2 periods in the record. 0 for fewer than 16
    samples or a constant signal; NaN when the spectrum has no such peak (a record too
    short for its vibration, or no vibration at all)."""
    from scipy.signal import find_peaks
    from scipy.signal.windows import blackmanharris

    t = np.asarray(t, dtype=float)
    x = np.asarray(x, dtype=float)
    if t.size < 16 or np.ptp(x) == 0:
        return 0.0
    grid = np.linspace(t[0], t[-1], t.size)
    y = np.interp(grid, t, x)
    y = y - np.polyval(np.polyfit(grid - grid[0], y, 1), grid - grid[0])
    n_fft = ZERO_PADDING * y.size
    spec = np.abs(np.fft.rfft(y * blackmanharris(y.size), n_fft))
    step = 1.0 / (n_fft * (grid[1] - grid[0]))  # [Hz] between the padded lines
    first = int(np.ceil(min_periods / (t[-1] - t[0]) / step))
    band = spec[first:]
    if band.size < 3 or not np.any(band > 0):
        return float("nan")
    peaks, props = find_peaks(band, prominence=0.0)
    genuine = ((props["prominences"] >= MIN_PROMINENCE * band[peaks])
               & (band[peaks] >= MIN_HEIGHT * band.max())
               & (band[peaks] >= ABOVE_LEAKAGE * spec.max()))
    if not np.any(genuine):
        return float("nan")
    peaks = peaks[genuine]
    k = int(peaks[np.argmax(band[peaks])])
    a, b, c = np.log(np.maximum(band[k - 1:k + 2], np.finfo(float).tiny))
    curvature = a - 2 * b + c
    shift = 0.5 * (a - c) / curvature if curvature < 0 else 0.0
    return float((first + k + shift) * step)


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
