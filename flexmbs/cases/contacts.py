"""The [[contacts]] tables of a case file: contact pairs and clearance joints with their
normal law and friction (docs/case_files.md, docs/contact.md)."""

from __future__ import annotations

from .entry import _Table

#: Keys each normal law of a [[contacts]] entry takes.
LAW_KEYS = {"penalty": {"k", "c"}, "hertz": {"K", "n"}, "hunt-crossley": {"K", "n", "e"},
            "lankarani-nikravesh": {"K", "n", "e"}, "impulse": {"e", "v_rest"}}
#: Keys a law cannot do without (the rest have documented defaults).
LAW_REQUIRED = {"penalty": {"k"}, "hertz": {"K"}, "hunt-crossley": {"K", "e"},
                "lankarani-nikravesh": {"K", "e"}, "impulse": {"e"}}


def _contact_law(t: _Table):
    from ..contact import NORMAL_LAWS

    value = t.get("law", required=True)
    if not isinstance(value, dict):
        raise t.error("law", f"must be a table with 'type', got {value!r}")
    kind = value.get("type")
    if kind is None:
        raise t.error("law", f"missing key 'type' (one of {sorted(NORMAL_LAWS)}) in "
                             f"{value!r}")
    if not isinstance(kind, str) or kind not in NORMAL_LAWS:
        raise t.error("law", f"type must be one of {sorted(NORMAL_LAWS)}, got {kind!r}")
    sub = _Table(t.path, f"{t.where} law", value, {"type"} | LAW_KEYS[kind])
    for key in sorted(LAW_REQUIRED[kind]):
        sub.get(key, required=True)
    args = {k: sub.number(k) for k in LAW_KEYS[kind] if k in value}
    return NORMAL_LAWS[kind](**args)


def _friction(t: _Table):
    from ..contact import Friction

    value = t.get("friction")
    if value is None:
        return None
    if not isinstance(value, dict):
        raise t.error("friction", f"must be a table, got {value!r}")
    keys = {"mu_static", "mu_kinetic", "stribeck_velocity", "v_reg", "model",
            "stick_stiffness", "stick_damping"}
    sub = _Table(t.path, f"{t.where} friction", value, keys)
    args = {k: (sub.get(k) if k == "model" else sub.number(k)) for k in keys if k in value}
    if "mu_static" not in args:
        raise sub.error("mu_static", "is required (the friction coefficient)")
    return Friction(**args)


def _add_contact(path, b, k, entry):
    t = _Table(path, f"[[contacts]] #{k} {entry.get('name', '')!r}", entry,
               {"name", "type", "a", "b", "radius_a", "radius_b", "law", "friction",
                "bearing", "journal", "clearance", "journal_radius", "keep_in_plane"})
    name, kind = t.text("name", required=True), t.get("type", required=True)
    clearance_keys = {"bearing", "journal", "clearance", "journal_radius", "keep_in_plane"}
    wrong = sorted(set(t.data) & ({"a", "b", "radius_a", "radius_b"}
                                  if kind == "clearance-revolute" else clearance_keys))
    if wrong:  # (a key of the other contact types: it was read by nothing, silently)
        raise t.error(wrong[0], f"does not apply to type {kind!r}")
    law, friction = _contact_law(t), _friction(t)
    if friction is not None and law.impulsive:
        raise t.error("friction", "does not apply to the impulse law (it has no contact "
                                  "force to scale the friction with)")
    keep = t.get("keep_in_plane", True)
    if not isinstance(keep, bool):
        raise t.error("keep_in_plane", f"must be true or false, got {keep!r}")
    if kind == "clearance-revolute":
        b.add_clearance_revolute(name, t.text("bearing", required=True),
                                 t.text("journal", required=True),
                                 clearance=t.number("clearance", required=True, positive=True),
                                 journal_radius=t.number("journal_radius", required=True,
                                                         positive=True),
                                 law=law, friction=friction,
                                 keep_in_plane=keep)
    else:
        b.add_contact(name, kind, t.text("a", required=True), t.text("b", required=True), law,
                      friction=friction, radius_a=t.number("radius_a", 0.0),
                      radius_b=t.number("radius_b", 0.0))
