//! papayu-validate: pure validation rules (SPEC §4) — being written.
