"""Reduce FE mass and stiffness matrices (Matrix Market or Abaqus text .mtx) to modal data:
free–free modes, clamped modes or Craig–Bampton, written in the native format."""

from __future__ import annotations

import argparse

from ..modal.io import check_writable
from ._reduction_args import add_reduction_args, reduce_from_args, write_and_report

HELP = "reduce FE mass/stiffness matrices to a modal data file"


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mass", required=True, help="FE mass matrix file (.mtx)")
    p.add_argument("--stiffness", required=True, help="FE stiffness matrix file (.mtx)")
    p.add_argument("--nodes", required=True,
                   help="node coordinates: CSV 'id,x,y,z' (or an Abaqus .inp *NODE block)")
    p.add_argument("--input-format", choices=["matrix-market", "abaqus"],
                   default="matrix-market",
                   help="matrix file flavour: Matrix Market (default) or Abaqus "
                        "*MATRIX GENERATE text output")
    p.add_argument("--units", help="unit system of the inputs (default SI; e.g. mm-t-s)")
    p.add_argument("--dofs-per-node", type=int, choices=[3, 6],
                   help="DOFs per node (default: inferred from the sizes)")
    add_reduction_args(p)
    p.add_argument("-o", "--output", required=True, help="output modal data file (.fmd.h5)")
    p.add_argument("--json", action="store_true", help="machine-readable summary")


def run(args: argparse.Namespace) -> int:
    check_writable(args.output)  # fail before the reduction, not after
    from ..modal.io import fe_matrices

    if args.input_format == "abaqus":
        fe = fe_matrices.read_abaqus(args.mass, args.stiffness, args.nodes, units=args.units)
    else:
        fe = fe_matrices.read_matrix_market(args.mass, args.stiffness, args.nodes,
                                            units=args.units,
                                            dofs_per_node=args.dofs_per_node)
    return write_and_report(reduce_from_args(fe, args), args)
