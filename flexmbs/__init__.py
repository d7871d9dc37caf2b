"""flexmbs: flexible multibody dynamics with the floating frame of reference.

``import flexmbs as fm`` gives the whole workflow: the modal front end
(``fm.read_modal``, ``fm.straight_beam``, ``fm.solid_box``, ``fm.add_point_masses``,
``fm.clamped_modes``, ``fm.craig_bampton``, ``fm.free_free_modes``), the model
(``fm.ModelBuilder`` and the bodies, joints, drives, forces and sensors), ``fm.System``,
``fm.simulate``, ``fm.load_result``, the case files (``fm.load_case``, ``fm.run_case``),
URDF robots (``fm.load_urdf``), gradients of a run (``fm.gradient``,
``fm.sensitivities``, ``fm.Objective``, ``fm.fit``) and model updating against a modal
test (``fm.update``). The modal, model and solver names load on first use.
"""

from .errors import (
    ConvergenceError,
    FlexmbsError,
    ModelError,
    ReadError,
    ShapeError,
    UnitsWarning,
    ValidationError,
)

__version__ = "0.1.0"

#: Names of the top-level API loaded on first use (so that ``import flexmbs`` stays
#: light): name → (module, attribute).
_LAZY = {
    "SimulationResult": ("flexmbs.results", "SimulationResult"),
    "load_result": ("flexmbs.results", "load_result"),
    "FEModel": ("flexmbs.modal.femodel", "FEModel"),
    "ModalData": ("flexmbs.modal.data", "ModalData"),
    "ReferenceFrame": ("flexmbs.modal.kinds", "ReferenceFrame"),
    "clamped_modes": ("flexmbs.modal.reduction", "clamped_modes"),
    "craig_bampton": ("flexmbs.modal.reduction", "craig_bampton"),
    "free_free_modes": ("flexmbs.modal.reduction", "free_free_modes"),
    "read_modal": ("flexmbs.modal.io", "read_modal"),
    "write_modal": ("flexmbs.modal.io", "write_modal"),
    "ModelBuilder": ("flexmbs.model", "ModelBuilder"),
    "Model": ("flexmbs.model", "Model"),
    "RigidBody": ("flexmbs.model", "RigidBody"),
    "FlexibleBody": ("flexmbs.model.flexible", "FlexibleBody"),
    "Marker": ("flexmbs.model", "Marker"),
    "JointSpec": ("flexmbs.model.builder", "JointSpec"),
    "DriveSpec": ("flexmbs.model.builder", "DriveSpec"),
    "JOINT_KINDS": ("flexmbs.model.joints", "JOINT_EQUATIONS"),
    "Constant": ("flexmbs.model", "Constant"),
    "Polynomial": ("flexmbs.model", "Polynomial"),
    "SpinUp": ("flexmbs.model", "SpinUp"),
    "Table": ("flexmbs.model", "Table"),
    "PointToPoint": ("flexmbs.model", "PointToPoint"),
    "Sequence": ("flexmbs.model", "Sequence"),
    "Move": ("flexmbs.model", "Move"),
    "Dwell": ("flexmbs.model", "Dwell"),
    "Step5": ("flexmbs.model", "Step5"),
    "SpringDamperActuator": ("flexmbs.model.forces", "SpringDamperActuator"),
    "RotationalSpringDamper": ("flexmbs.model.forces", "RotationalSpringDamper"),
    "JointActuator": ("flexmbs.model.forces", "JointActuator"),
    "JointServo": ("flexmbs.model", "JointServo"),
    "Motor": ("flexmbs.model", "Motor"),
    "PointLoad": ("flexmbs.model.forces", "PointLoad"),
    "DistributedLoad": ("flexmbs.model.forces", "DistributedLoad"),
    "Bushing": ("flexmbs.model", "Bushing"),
    "Sensor": ("flexmbs.model.sensors", "Sensor"),
    "System": ("flexmbs.assembly", "System"),
    "simulate": ("flexmbs.integrators", "simulate"),
    "Simulation": ("flexmbs.cosim", "Simulation"),
    "Controller": ("flexmbs.cosim", "Controller"),
    "load_case": ("flexmbs.cases", "load_case"),
    "run_case": ("flexmbs.cases", "run_case"),
    "load_urdf": ("flexmbs.cases.urdf_model", "load_urdf"),
    "straight_beam": ("flexmbs.modal.fe.beam", "straight_beam"),
    "BeamSection": ("flexmbs.modal.fe.beam", "BeamSection"),
    "Material": ("flexmbs.modal.fe.beam", "Material"),
    "solid_box": ("flexmbs.modal.fe.solid", "box_mesh"),
    "PointMass": ("flexmbs.modal.preparation", "PointMass"),
    "add_point_masses": ("flexmbs.modal.preparation", "add_point_masses"),
    "gradient": ("flexmbs.gradients", "gradient"),
    "sensitivities": ("flexmbs.gradients", "sensitivities"),
    "Objective": ("flexmbs.gradients", "Objective"),
    "fit": ("flexmbs.gradients", "fit"),
    "update": ("flexmbs.gradients", "update"),
    "read_modal_test": ("flexmbs.gradients", "read_modal_test"),
}

#: Tables of case files read by a later stage than flexmbs.cases
#: (flexmbs.cases.tables): table → the module that registers its reader when imported.
_CASE_TABLES = {"controllers": "flexmbs.cosim.case_tables"}


def __getattr__(name):
    """The lazily loaded part of the top-level API (:data:`_LAZY`)."""
    if name in _LAZY:
        import importlib

        module, attribute = _LAZY[name]
        value = getattr(importlib.import_module(module), attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'flexmbs' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_LAZY])

__all__ = [
    "ConvergenceError",
    "FEModel",
    "FlexmbsError",
    "ModalData",
    "ModelError",
    "ReadError",
    "ReferenceFrame",
    "ShapeError",
    "SimulationResult",
    "UnitsWarning",
    "ValidationError",
    "__version__",
    "clamped_modes",
    "craig_bampton",
    "free_free_modes",
    "load_result",
    "read_modal",
    "write_modal",
    *_LAZY,
]
