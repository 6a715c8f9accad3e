"""The model families, one module each, every one declaring ``FAMILY``
(a :class:`symuat.models.family.Family`: what it reads and what it can do).

:func:`symuat.models.family.families` finds them here by listing this package: adding a family is
adding one module to this folder. The components they are built from stay in :mod:`symuat.models`:
the decoder layer and its checkpoint reader, the lifts, QK-norm, post-norms, soft-caps, the
LayerNorm decoder, Gemma's shared reader.

>>> from symuat.models.family import families
>>> [f.name for f in families()][:3]
['bert', 'gemma2', 'gemma3']
"""
