"""Markers: frames fixed on a body (position and orientation in the body frame)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class Marker:
    """A frame fixed on body ``body``.

    Attributes
    ----------
    body : str
        Name of the body carrying it (``"ground"`` for the ground).
    name : str
        Marker name, unique on its body; referred to as ``"body.marker"``.
    position : ndarray, shape (3,)
        Origin in the body frame [m].
    orientation : ndarray, shape (3, 3)
        Columns are the marker's x, y, z axes in body-frame components (orthonormal,
        right-handed). Joints use z as their axis (revolute, prismatic, cylindrical).
    """

    body: str
    name: str
    position: np.ndarray
    orientation: np.ndarray
    node: int | None = None
    """Flexible bodies: node index the marker rides on (position = that node)."""
    node_set: str | None = None
    """Flexible bodies: node set of an RBE3-like interface marker (its name, the list of
    node labels ``"[37, 38]"``, or the geometric spec ``"plane:point=..;normal=.."``)."""

    @property
    def full_name(self) -> str:
        """``"body.marker"``."""
        return f"{self.body}.{self.name}"
