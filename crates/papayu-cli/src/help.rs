//! The command line as people read it: `papayu --help` lists the commands in groups and the
//! global options once; a command's `--help` lists only its own options and points to the
//! global ones. clap 4 has neither subcommand groups nor per-command hiding of globals, so the
//! root's help template carries the grouped list, and every command gets a hidden copy of each
//! global flag (clap then propagates nothing to it, and the flag still parses there).

use clap::{Arg, Command, CommandFactory as _, FromArgMatches as _};

use crate::Cli;

/// The groups of `papayu --help`, in order. A command no group names is listed under
/// [`OTHER`], so a new command is never hidden.
const GROUPS: &[(&str, &[&str])] = &[
    (
        "Plan and apply",
        &["plan", "apply", "run", "chat", "batch", "commands", "ask"],
    ),
    (
        "Plan files",
        &["validate", "preview", "apply-plan", "apply-patch", "schema"],
    ),
    ("History", &["undo", "redo", "history", "recover"]),
    (
        "Context and traces",
        &["context", "trace", "report", "memory"],
    ),
    (
        "Research and analysis",
        &["research", "trends", "findings", "analyze"],
    ),
    (
        "Setup",
        &["config", "doctor", "model", "ui", "mcp", "completions"],
    ),
];

/// The heading of commands no group names.
const OTHER: &str = "Other commands";

/// The width help fits into when stdout is not a terminal (clap's own default).
const PIPE_WIDTH: usize = 100;

/// Parse the command line (`args[0]` is the program), with clap's own output coloured as
/// `color` says when given.
pub fn parse(
    args: &[std::ffi::OsString],
    color: Option<crate::term::ColorWhen>,
) -> Result<Cli, clap::Error> {
    let mut cmd = command();
    if let Some(when) = color {
        cmd = cmd.color(when.for_clap());
    }
    let matches = cmd.try_get_matches_from_mut(args)?;
    Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))
}

/// The command line with papayu's help layout.
pub fn command() -> Command {
    let cmd = Cli::command();
    let globals: Vec<Arg> = cmd
        .get_arguments()
        .filter(|a| a.is_global_set())
        .cloned()
        .collect();
    let note = format!(
        "Global options ({}) work here too; `papayu --help` describes them.",
        globals.iter().map(flag_name).collect::<Vec<_>>().join(", ")
    );
    let template = root_template(&cmd);
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    let mut cmd = cmd.help_template(template);
    for name in names {
        cmd = cmd.mut_subcommand(name, |sub| hide_globals(sub, &globals, &note));
    }
    cmd
}

/// `sub` with a hidden copy of every global flag (and so of its subcommands, which inherit
/// the copies), and `note` after its help.
fn hide_globals(mut sub: Command, globals: &[Arg], note: &str) -> Command {
    for arg in globals {
        sub = sub.arg(arg.clone().hide(true));
    }
    sub.after_help(note.to_owned())
}

/// `--project`, `-v/--verbose`.
fn flag_name(arg: &Arg) -> String {
    match (arg.get_short(), arg.get_long()) {
        (Some(s), Some(l)) => format!("-{s}/--{l}"),
        (None, Some(l)) => format!("--{l}"),
        (Some(s), None) => format!("-{s}"),
        (None, None) => arg.get_id().to_string(),
    }
}

/// The root's help: about, usage, the grouped commands, the options once.
fn root_template(cmd: &Command) -> String {
    let styles = cmd.get_styles();
    let header = styles.get_header();
    let literal = styles.get_literal();
    let width = crate::term::table::stdout_width().map_or(PIPE_WIDTH, usize::from);
    let visible: Vec<&Command> = cmd.get_subcommands().filter(|s| !s.is_hide_set()).collect();
    let name_width = visible
        .iter()
        .map(|s| s.get_name().len())
        .chain(["help".len()])
        .max()
        .unwrap_or(4);
    let mut groups: Vec<(&str, Vec<(&str, String)>)> = Vec::new();
    for (title, names) in GROUPS {
        let rows = names
            .iter()
            .filter_map(|n| visible.iter().find(|s| s.get_name() == *n))
            .map(|s| (s.get_name(), about(s)))
            .collect();
        groups.push((title, rows));
    }
    let other: Vec<(&str, String)> = visible
        .iter()
        .filter(|s| {
            !GROUPS
                .iter()
                .any(|(_, names)| names.contains(&s.get_name()))
        })
        .map(|s| (s.get_name(), about(s)))
        .collect();
    groups.push((OTHER, other));
    if let Some((_, setup)) = groups.iter_mut().find(|(t, _)| *t == "Setup") {
        setup.push((
            "help",
            "Print this message or the help of the given command".into(),
        ));
    }
    let mut out = String::from("{before-help}{about-with-newline}\n{usage-heading} {usage}\n");
    for (title, rows) in groups.iter().filter(|(_, rows)| !rows.is_empty()) {
        out.push_str(&format!("\n{header}{title}:{header:#}\n"));
        for (name, about) in rows {
            let pad = " ".repeat(name_width - name.len());
            let indent = 2 + name_width + 2;
            out.push_str(&format!("  {literal}{name}{literal:#}{pad}  "));
            out.push_str(&wrap(about, indent, width));
            out.push('\n');
        }
    }
    out.push_str(&format!(
        "\n{header}Options:{header:#}\n{{options}}{{after-help}}"
    ));
    out
}

/// A command's one-line description. clap's template has no escape for braces, and an unknown
/// `{tag}` is written as it is, so a description is safe unless it names a template tag.
fn about(cmd: &Command) -> String {
    cmd.get_about().map(|a| a.to_string()).unwrap_or_default()
}

/// `text` wrapped at word boundaries to `width` columns, continuation lines indented by
/// `indent` (the first line starts there already).
fn wrap(text: &str, indent: usize, width: usize) -> String {
    let room = width.saturating_sub(indent).max(20);
    let mut out = String::new();
    let mut line_len = 0;
    for word in text.split_whitespace() {
        let len = word.chars().count();
        if line_len > 0 && line_len + 1 + len > room {
            out.push('\n');
            out.push_str(&" ".repeat(indent));
            line_len = 0;
        } else if line_len > 0 {
            out.push(' ');
            line_len += 1;
        }
        out.push_str(word);
        line_len += len;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_is_in_a_group() {
        let cmd = Cli::command();
        let loose: Vec<&str> = cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .map(Command::get_name)
            .filter(|n| !GROUPS.iter().any(|(_, names)| names.contains(n)))
            .collect();
        assert!(loose.is_empty(), "add {loose:?} to a group in GROUPS");
    }

    #[test]
    fn the_layout_is_a_valid_command() {
        command().debug_assert();
    }

    #[test]
    fn globals_parse_after_the_command_and_in_nested_ones() {
        let args: Vec<std::ffi::OsString> = ["papayu", "trace", "list", "--json", "-vv"]
            .iter()
            .map(Into::into)
            .collect();
        let cli = parse(&args, None).unwrap_or_else(|e| panic!("{e}"));
        assert!(cli.global.json);
        assert_eq!(cli.global.verbose, 2);
    }

    #[test]
    fn wrapping_keeps_every_word_and_the_indent() {
        let text = "one two three four five six seven eight nine ten";
        let w = wrap(text, 4, 24);
        assert_eq!(
            w,
            "one two three four\n    five six seven eight\n    nine ten"
        );
    }
}
