//! Personal automation: allow-listed commands the model proposes, each argument checked by its entry's rules and run without a shell, and `http(s)` URLs opened with the system opener.
//! May touch: runs those programs in the project root (timeout, output captured), appends their output to `.papa-yu/commands.log`, launches the opener; the caller asks the user first.

mod allow;
mod check;
mod open;
mod rules;
mod run;
mod split;
mod value;

pub use allow::{AllowList, BUILTIN};
pub use check::{CheckedCommand, check};
pub use open::{check_url, default_opener, open_url};
pub use run::{COMMANDS_LOG, CommandRun, log_text, run};
pub use split::split_line;
