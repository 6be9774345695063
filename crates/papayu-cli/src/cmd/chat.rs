//! `papayu chat`: a REPL (rustyline) — describe a goal, read the plan, say "ok" (or "да"),
//! review the preview, confirm; `/undo` if you change your mind. The input history is kept per
//! project; Ctrl-C cancels the running step (or clears the line), Ctrl-D leaves.

use anyhow::Result;
use papayu_agent::{ApplyPreview, ChatTurn};
use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;

use crate::cmd::apply::confirm_and_apply;
use crate::cmd::plan::print_plan;
use crate::cmd::session::{ProgressLine, open_agent, report_agent_error, runtime};
use crate::exit::Exit;
use crate::global::Global;

/// Chat with the model about the project: plan → "ok" → preview → confirm → apply.
#[derive(Debug, clap::Args)]
pub struct Args {}

const HELP: &str = "Describe a goal to get a plan. \"ok\" / \"да\" applies the saved plan (preview first).\n\
Prefix \"plan:\" or \"apply:\" to choose the mode.\n\
Commands: /undo, /redo, /history, /diff (the last change shown), /help, /quit.\n\
Ctrl-C cancels the running step, Ctrl-D leaves; ↑/↓ recall earlier lines.";

/// What a line of input asks for.
#[derive(Debug, PartialEq, Eq)]
enum Input<'a> {
    Nothing,
    Quit,
    Help,
    Undo,
    Redo,
    History,
    Diff,
    Unknown(&'a str),
    Message(&'a str),
}

/// Read a line: a `/command` (the bare words of earlier versions still work), else a message.
fn parse(line: &str) -> Input<'_> {
    let line = line.trim();
    let lower = line.to_lowercase();
    let word = lower.strip_prefix('/').unwrap_or(&lower);
    match word {
        "" if line.is_empty() => Input::Nothing,
        "quit" | "exit" | "q" | "выход" => Input::Quit,
        "help" | "?" => Input::Help,
        "undo" | "отмена" => Input::Undo,
        "redo" => Input::Redo,
        "history" => Input::History,
        "diff" => Input::Diff,
        _ if line.starts_with('/') => Input::Unknown(line),
        _ => Input::Message(line),
    }
}

/// Run the loop until Ctrl-D, end of input or `/quit`; the exit code of the last turn.
pub fn run(_args: &Args, global: &Global) -> Result<Exit> {
    let mut agent = open_agent(global)?;
    let rt = runtime()?;
    let progress = ProgressLine::new(global);
    let mut editor = DefaultEditor::new()?;
    let history_file = agent.chat_history_file();
    // No history yet is the normal start.
    let _ = editor.load_history(history_file.as_std_path());
    println!("papayu chat — {}", agent.root());
    println!("{HELP}");
    let mut last = Exit::Ok;
    let mut shown: Option<Box<ApplyPreview>> = None;
    loop {
        let line = match editor.readline("> ") {
            Ok(line) => line,
            // Ctrl-C at the prompt drops the line being typed.
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(e.into()),
        };
        let input = parse(&line);
        if input != Input::Nothing {
            let _ = editor.add_history_entry(line.trim());
            save_history(&mut editor, &history_file);
        }
        match input {
            Input::Nothing => {}
            Input::Quit => break,
            Input::Help => println!("{HELP}"),
            Input::Unknown(cmd) => println!("unknown command {cmd}; /help lists them"),
            Input::Undo => {
                last = match agent.undo(false) {
                    Ok(r) => {
                        println!("Undone (transaction {}).", r.tx_id);
                        Exit::Ok
                    }
                    Err(e) => report_agent_error(&e, global)?,
                };
            }
            Input::Redo => {
                last = match agent.redo(false) {
                    Ok(r) => {
                        println!("Redone (transaction {}).", r.tx_id);
                        Exit::Ok
                    }
                    Err(e) => report_agent_error(&e, global)?,
                };
            }
            Input::History => match agent.history() {
                Ok(h) => {
                    for e in h.undo.iter().rev() {
                        println!("  {} {:?} {}", e.tx_id, e.kind, e.paths.join(", "));
                    }
                    if h.undo.is_empty() {
                        println!("  (nothing applied yet)");
                    }
                }
                Err(e) => last = report_agent_error(&e, global)?,
            },
            Input::Diff => match &shown {
                Some(p) => crate::cmd::apply_plan::print_preview(&p.preview),
                None => println!("(no change shown yet)"),
            },
            Input::Message(message) => {
                // Dropping the turn's future drops the model request (nothing is written
                // before the preview is confirmed).
                let show = |p: &papayu_agent::Progress| progress.show(p);
                let turn = rt.block_on(async {
                    tokio::select! {
                        turn = agent.handle_message(message, &show) => Some(turn),
                        _ = tokio::signal::ctrl_c() => None,
                    }
                });
                progress.done();
                last = match turn {
                    None => {
                        println!("cancelled; nothing was written");
                        Exit::Failure
                    }
                    Some(Ok(ChatTurn::Plan { outcome, .. })) => {
                        print_plan(&outcome);
                        println!("Say \"ok\" to apply this plan.");
                        Exit::Ok
                    }
                    Some(Ok(ChatTurn::Preview { preview, .. })) => {
                        let exit =
                            confirm_and_apply(&agent, &preview, false, None, global, &progress)?;
                        shown = Some(preview);
                        exit
                    }
                    Some(Err(e)) => report_agent_error(&e, global)?,
                };
            }
        }
    }
    println!();
    Ok(last)
}

/// Keep the history after every line, so a crash or a kill loses nothing typed before it.
fn save_history(editor: &mut DefaultEditor, file: &camino::Utf8Path) {
    if let Some(dir) = file.parent() {
        let _ = fs_err::create_dir_all(dir);
    }
    let _ = editor.save_history(file.as_std_path());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_commands_and_old_words_and_messages() {
        assert_eq!(parse("  "), Input::Nothing);
        assert_eq!(parse("/undo"), Input::Undo);
        assert_eq!(parse("undo"), Input::Undo);
        assert_eq!(parse("/DIFF"), Input::Diff);
        assert_eq!(parse("/help"), Input::Help);
        assert_eq!(parse("/nope"), Input::Unknown("/nope"));
        assert_eq!(parse("/"), Input::Unknown("/"));
        assert_eq!(parse(" make it 42 "), Input::Message("make it 42"));
        assert_eq!(parse("ok"), Input::Message("ok"));
    }
}
