"""The contact element kind in compiled code (docs/contact.md, docs/compiled.md): the
table of contact pairs (:mod:`.table`) and the kernels of their forces, tangents and
samples (:mod:`.kernels`). What a contact is — its geometry, normal law, friction and
the open/stick/slip state that changes between steps — is :mod:`flexmbs.contact`, which
is also the NumPy reference these kernels follow term by term."""
