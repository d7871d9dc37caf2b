"""The interactive viewer: a result as one self-contained HTML page (three.js, no
network), with a time slider, play and pause, the deformation scale and the colouring
field; ``flexmbs view RESULT -o view.html`` and ``result.show()`` in Jupyter
(docs/post_processing.md).

A stage of its own below the results (it reads a result's arrays and descriptions and
imports only the frame and modal stages), so that :class:`SimulationResult` can show it.
"""

from .page import notebook_view, page_html, view_html, write_view
from .scene import scene_data

__all__ = ["notebook_view", "page_html", "scene_data", "view_html", "write_view"]
