//! Issue #15, "never harm a project": each module reproduces one way a red-team pass found to
//! hurt a project (or a user's bytes) and checks the class of problem is closed.

mod displaced;
mod full_disk;
mod preview_time;
mod races;
mod rollback;
mod state_files;
mod trust;
