"""Remembered URDF readings (docs/urdf.md, "Reading once").

Importing yourdfpy takes 0.6–0.9 s in a fresh process on the reference machine (it
imports trimesh, which imports SciPy's spatial and optimization modules and networkx),
where the rest of reading a two-link arm takes milliseconds. So a robot read and
checked through yourdfpy (:func:`flexmbs.cases.urdf_robot.read_urdf`) is remembered as
JSON under a hash of

- the URDF file's bytes,
- :data:`REVISION` (the entries' layout),
- every flexmbs source file (:func:`flexmbs.cases.remembered.package_digest`: a change
  to the reader or its checks reads afresh), and
- the size and modification time of the installed yourdfpy's parser
  (``yourdfpy/urdf.py``: another yourdfpy version reads afresh),

and a later reading of the same bytes takes it from there without importing yourdfpy,
as Python takes a module's bytecode from ``__pycache__``. Only readings without
problems are remembered (a faulty URDF is read, and reported, every time); the numbers
go through JSON unchanged (Python writes each float's shortest exact form). The
entries live in ``~/.cache/flexmbs/urdf`` (:func:`flexmbs.cases.remembered.folder`:
``FLEXMBS_CACHE`` names another folder, or ``off`` reads every time), written
atomically and sealed with a hash of its contents; an entry that cannot be read, does
not match its seal or does not hold a robot is read afresh and written again, and a
folder that cannot be written is left alone (nothing is remembered).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from .remembered import folder, installed_file, package_digest, prune

#: The revision of the entries' layout: entries of another revision are not used.
REVISION = 2


def key(data: bytes) -> str | None:
    """The name of the entry of a URDF file's bytes ``data``, or None when yourdfpy is
    not installed (the reader then says how to install it) or the flexmbs sources cannot
    be read (nothing is remembered)."""
    stamp = installed_file("yourdfpy", "urdf.py")
    sources = None if stamp is None else package_digest()
    if sources is None:
        return None
    digest = hashlib.sha256(data)
    digest.update(f"\0{REVISION}\0{sources}\0{stamp}".encode())
    return digest.hexdigest()


def _seal(robot_entry: dict) -> str:
    return hashlib.sha256(json.dumps(robot_entry, sort_keys=True).encode()).hexdigest()


def recall(name: str, path: Path):
    """The Robot remembered under ``name`` (read from ``path``), or None when there is
    none or it cannot be used."""
    where = folder("urdf")
    if where is None:
        return None
    try:
        entry = json.loads((where / f"{name}.json").read_text(encoding="utf-8"))
        robot = entry["robot"]
        if entry.get("revision") != REVISION or entry.get("seal") != _seal(robot):
            return None
        return _robot(robot, path)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def remember(name: str, robot) -> None:
    """Keep ``robot`` under ``name`` (atomically; nothing when the folder cannot be
    written)."""
    where = folder("urdf")
    if where is None:
        return
    from .._files import write_text

    try:
        where.mkdir(parents=True, exist_ok=True)
        robot_entry = _entry(robot)
        write_text(where / f"{name}.json", json.dumps(
            {"revision": REVISION, "seal": _seal(robot_entry), "robot": robot_entry}),
            "URDF cache entry")
        prune(where, "*.json")
    except (OSError, ValueError):
        pass


# ----------------------------------------------------------------------- JSON form
def _entry(robot) -> dict:
    def inertial(link):
        i = link.inertial
        return None if i is None else {"mass": i.mass, "com": i.com.tolist(),
                                       "inertia": i.inertia.tolist()}

    def visual(v):
        return {"origin": v.origin.tolist(), "kind": v.kind, "filename": v.filename,
                "scale": v.scale.tolist(), "size": list(v.size)}

    def joint(j):
        limit = None if j.limit is None else [j.limit.lower, j.limit.upper, j.limit.effort,
                                              j.limit.velocity]
        return {"name": j.name, "kind": j.kind, "parent": j.parent, "child": j.child,
                "origin": j.origin.tolist(), "axis": j.axis.tolist(), "limit": limit,
                "mimic": None if j.mimic is None else list(j.mimic)}

    return {"name": robot.name, "root": robot.root,
            "links": [{"name": link.name, "inertial": inertial(link),
                       "visuals": [visual(v) for v in link.visuals]}
                      for link in robot.links.values()],
            "joints": [joint(j) for j in robot.joints]}


def _robot(entry: dict, path: Path):
    from .urdf_robot import Inertial, Joint, JointLimit, Link, Robot, Visual

    def array(values, shape):
        out = np.asarray(values, dtype=float)
        if out.shape != shape:
            raise ValueError(f"an array of shape {out.shape}, expected {shape}")
        return out

    links = {}
    for item in entry["links"]:
        i = item["inertial"]
        inertial = None if i is None else Inertial(float(i["mass"]), array(i["com"], (3,)),
                                                   array(i["inertia"], (3, 3)))
        visuals = tuple(Visual(array(v["origin"], (4, 4)), str(v["kind"]),
                               filename=v["filename"], scale=array(v["scale"], (3,)),
                               size=tuple(float(s) for s in v["size"]))
                        for v in item["visuals"])
        links[str(item["name"])] = Link(str(item["name"]), inertial, visuals)
    joints = tuple(
        Joint(str(j["name"]), str(j["kind"]), str(j["parent"]), str(j["child"]),
              array(j["origin"], (4, 4)), array(j["axis"], (3,)),
              None if j["limit"] is None else JointLimit(*j["limit"]),
              None if j["mimic"] is None else (str(j["mimic"][0]), float(j["mimic"][1]),
                                               float(j["mimic"][2])))
        for j in entry["joints"])
    return Robot(str(entry["name"]), path, links, joints, str(entry["root"]))
