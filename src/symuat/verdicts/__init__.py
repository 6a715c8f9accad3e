"""From checks to the papers' bottom lines: the roll-up rule, claim by claim
(:mod:`~symuat.verdicts.roll_up`), the headline counts (:mod:`~symuat.verdicts.headline`) and what each
reading tag means (:mod:`~symuat.verdicts.readings`). Above the claims (:mod:`symuat.claims`), below the
renderers (:mod:`symuat.render`); it composes the statuses the kernel's procedures produced and types none in."""
