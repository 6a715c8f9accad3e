"""The NumPy side: lazy linear operators on flattened token matrices (:mod:`~symuat.numeric.operators`),
the reference Transformer and its exact rewrite into the DUAT form (:mod:`~symuat.numeric.transformer`),
LoRA and DUAT Eq. 18 on it (:mod:`~symuat.numeric.lora`), and the pictures drawn from them
(:mod:`~symuat.numeric.figures`). Above the papers' objects (:mod:`symuat.expr`), beside the real models
(:mod:`symuat.models`), which build on it."""
