"""辽宁 and 锦州 (the northeastern rules): conditions, doubling items, the per-payer settlement."""
