"""Element kinds: one home per kind (docs/compiled.md, "Adding an element kind").

Each kind (a package or module here) keeps together what the rest of flexmbs needs to
know about it: its table declaration for the compiled engine, its residual, tangent and
output kernels, and its NumPy reference as plain array functions. The model stage only
declares; the engine stage dispatches over the kinds registered here.
"""
