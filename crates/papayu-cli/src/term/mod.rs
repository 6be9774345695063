//! Output for people on a terminal: colour (anstyle styles written through anstream, which
//! drops them where colour is off), the progress spinner (indicatif) and tables (comfy-table).
//! It touches only stdout and stderr, and knows no command.

pub mod chart;
pub mod progress;
pub mod style;
pub mod table;

use std::io::IsTerminal as _;

use anstream::ColorChoice;

/// When to colour output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorWhen {
    /// On a terminal, unless `NO_COLOR` is set; `CLICOLOR_FORCE` colours a pipe too.
    #[default]
    Auto,
    /// Always, even into a pipe or a file (and despite `NO_COLOR`).
    Always,
    /// Never.
    Never,
}

/// The terminal flag every command accepts.
#[derive(Debug, Clone, clap::Args)]
pub struct TermArgs {
    /// Colour: auto (a terminal, unless NO_COLOR is set; CLICOLOR_FORCE=1 forces it), always,
    /// never.
    #[arg(long, global = true, value_name = "WHEN", value_enum, default_value_t)]
    pub color: ColorWhen,
}

impl ColorWhen {
    /// The `--color` value a raw command line asks for, for output produced before clap has
    /// parsed it (clap's own help and errors).
    pub fn from_args(args: &[std::ffi::OsString]) -> Option<ColorWhen> {
        let mut found = None;
        let mut iter = args.iter().skip(1).filter_map(|a| a.to_str());
        while let Some(a) = iter.next() {
            let value = match a {
                "--" => break,
                "--color" => iter.next(),
                _ => a.strip_prefix("--color="),
            };
            if let Some(v) = value {
                found = <ColorWhen as clap::ValueEnum>::from_str(v, true)
                    .ok()
                    .or(found);
            }
        }
        found
    }

    /// The same choice for clap's own output.
    pub fn for_clap(self) -> clap::ColorChoice {
        match self {
            ColorWhen::Auto => clap::ColorChoice::Auto,
            ColorWhen::Always => clap::ColorChoice::Always,
            ColorWhen::Never => clap::ColorChoice::Never,
        }
    }
}

/// Make `when` the choice of every stream this process writes through anstream. `Auto` leaves
/// the decision per stream to anstream: a terminal, `NO_COLOR`, `CLICOLOR_FORCE`, `TERM=dumb`.
pub fn init(when: ColorWhen) {
    ColorChoice::write_global(match when {
        ColorWhen::Auto => ColorChoice::Auto,
        ColorWhen::Always => ColorChoice::Always,
        ColorWhen::Never => ColorChoice::Never,
    });
}

/// Whether what goes to stderr is coloured (for writers that bypass anstream: the spinner,
/// the log).
pub fn stderr_colored() -> bool {
    anstream::AutoStream::choice(&std::io::stderr()) != ColorChoice::Never
}

/// Whether what goes to stdout is coloured (for text built before it is written, such as a
/// check line shared with the spinner).
pub fn stdout_colored() -> bool {
    anstream::AutoStream::choice(&std::io::stdout()) != ColorChoice::Never
}

/// Whether stderr is a terminal a spinner may draw on.
pub fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}
