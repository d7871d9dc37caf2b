"""Regenerate the shipped modal data files: ``python modal_data/build.py [FILE ...]`` (all by
default)."""

from pathlib import Path

from flexmbs.modal import write_modal
from flexmbs.modal.shipped import arm_steel_beam, kane_beam, seed_tip_beam, steel_cantilever

HERE = Path(__file__).parent

if __name__ == "__main__":
    import sys

    only = set(sys.argv[1:])  # file names to rebuild (default: all)
    for name, data in (("steel_cantilever.fmd.h5", steel_cantilever()),
                       ("seed_tip_beam.fmd.h5", seed_tip_beam()),
                       ("arm_steel_beam.fmd.h5", arm_steel_beam()),
                       ("kane_beam.fmd.h5", kane_beam())):
        if only and name not in only:
            continue
        write_modal(data, HERE / name)
        print(f"wrote {name}: {data.n_nodes} nodes, {data.n_modes} modes, "
              f"f = {', '.join(f'{f:.4g}' for f in data.frequencies[:6])} ... Hz")
