"""The ``[model]`` table of a case file that starts from a URDF robot
(docs/case_files.md, "A robot from a URDF file")::

    [model]
    urdf = "robot.urdf"          # relative to the case file
    base = "fixed"               # or "floating"
    gravity = [0, 0, -9.81]      # the default with a URDF

    [model.flexible.forearm]     # a link replaced by a flexible body
    beam = { section = { kind = "box", width = 0.03, height = 0.015, wall = 0.002 },
             modes = 4, material = "aluminium" }

The case's other tables then use the URDF's names: bodies are links, joints keep their
names, and markers ``<body>.<joint>`` and ``<body>.<link>`` exist
(:mod:`flexmbs.cases.urdf_model`).
"""

from __future__ import annotations

from ..errors import FlexmbsError
from .case import CaseError
from .entry import _Table, modal_options

#: Keys of [model] besides gravity when it has ``urdf``.
URDF_KEYS = ("urdf", "base", "merge_fixed", "visuals", "package_dirs", "flexible")
#: Keys of one [model.flexible.<link>] table.
FLEXIBLE_KEYS = {"beam", "modal_data", "modes", "damping_ratio"}


def _flag(t: _Table, key: str, default: bool) -> bool:
    value = t.get(key, default)
    if not isinstance(value, bool):
        raise t.error(key, f"must be true or false, got {value!r}")
    return value


def _flexible(path, robot_file, table, inputs, reader=None) -> dict:
    """Link → ModalData of [model.flexible]: a built-in ``beam`` along the link, or a
    ``modal_data`` file (relative to the case), with ``modes`` and ``damping_ratio``."""
    from .. import read_modal
    from .urdf_model import beam_along_link
    from .urdf_robot import read_urdf

    if not isinstance(table, dict):
        raise CaseError(f"{path.name}: [model] key 'flexible' must be a table of links "
                        f"([model.flexible.<link>]), got {table!r}")
    robot = read_urdf(robot_file) if table else None
    out = {}
    for link, entry in table.items():
        t = _Table(path, f"[model.flexible.{link}]", entry if isinstance(entry, dict)
                   else {}, FLEXIBLE_KEYS)
        if not isinstance(entry, dict) or ("beam" in entry) == ("modal_data" in entry):
            raise CaseError(f"{path.name}: [model.flexible.{link}] must give one of 'beam' "
                            f"or 'modal_data'")
        if link not in robot.links:
            raise CaseError(f"{path.name}: [model.flexible.{link}]: {link!r} is not a link "
                            f"of {robot_file.name} (links: {list(robot.links)})")
        try:
            if "beam" in entry:
                data = beam_along_link(robot, link, t.get("beam"))
            else:
                file = (path.parent / t.text("modal_data")).resolve()
                inputs.append(file)
                data = (reader or read_modal)(file)
        except FlexmbsError as exc:
            key = "beam" if "beam" in entry else "modal_data"
            raise t.error(key, str(exc)) from None
        out[link] = modal_options(t, data)
    return out


def urdf_builder(path, model_t: _Table, inputs, reader=None):
    """The builder of a [model] table with ``urdf`` (gravity default (0, 0, −9.81))."""
    from .urdf_model import load_urdf

    robot_file = (path.parent / model_t.text("urdf", required=True)).resolve()
    inputs.append(robot_file)
    dirs = model_t.get("package_dirs", [])
    if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):
        raise model_t.error("package_dirs", f"must be a list of folders, got {dirs!r}")
    base = model_t.get("base", "fixed")
    if base not in ("fixed", "floating"):
        raise model_t.error("base", f"must be 'fixed' or 'floating', got {base!r}")
    try:
        flexible = _flexible(path, robot_file, model_t.get("flexible", {}), inputs, reader)
        return load_urdf(robot_file, gravity=model_t.vector("gravity", [0.0, 0.0, -9.81]),
                         flexible=flexible, base=base,
                         merge_fixed=_flag(model_t, "merge_fixed", True),
                         visuals=_flag(model_t, "visuals", True),
                         package_dirs=[path.parent / d for d in dirs])
    except CaseError:
        raise
    except ImportError as exc:  # the optional extra is missing
        raise CaseError(f"{path.name}: [model] urdf: {exc}") from None
    except FlexmbsError as exc:
        raise CaseError(f"{path.name}: [model] urdf {model_t.get('urdf')!r}: {exc}") from None
