//! `papayu chat`: a REPL (rustyline) — describe a goal, read the plan, say "ok" (or "да"),
//! review the preview, confirm; `/undo` if you change your mind. The input history is kept per
//! project; Ctrl-C cancels the running step (or clears the line), Ctrl-D leaves. The saved plan
//! (`.papa-yu/state.json`) outlives the process: a restarted chat says which plan is pending,
//! and refuses to apply one whose files changed since.

use anyhow::Result;
use papayu_agent::{Agent, ApplyPreview, ChatTurn, SavedPlan};
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
    Discard,
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
        "discard" => Input::Discard,
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
    println!(
        "{}",
        crate::tr!("chat-title", root = agent.root().to_string())
    );
    println!("{}", crate::tr!("chat-help"));
    if let Some(saved) = agent.saved_plan().ok().flatten() {
        println!(
            "{}",
            crate::tr!(
                "chat-restored",
                mode = saved.llm_mode.clone(),
                protocol = saved.protocol,
                goal = saved.goal.clone()
            )
        );
        say_if_stale(&agent, &saved);
    }
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
            Input::Help => println!("{}", crate::tr!("chat-help")),
            Input::Unknown(cmd) => {
                println!("{}", crate::tr!("chat-unknown-command", command = cmd))
            }
            Input::Discard => match agent.saved_plan() {
                Ok(Some(_)) => match agent.discard_saved_plan() {
                    Ok(()) => println!("{}", crate::tr!("chat-discarded")),
                    Err(e) => last = report_agent_error(&e, global)?,
                },
                Ok(None) => println!("{}", crate::tr!("chat-nothing-to-discard")),
                Err(e) => last = report_agent_error(&e, global)?,
            },
            Input::Undo => {
                last = match agent.undo(false) {
                    Ok(r) => {
                        println!("{}", crate::tr!("chat-undone", tx = r.tx_id.to_string()));
                        Exit::Ok
                    }
                    Err(e) => report_agent_error(&e, global)?,
                };
            }
            Input::Redo => {
                last = match agent.redo(false) {
                    Ok(r) => {
                        println!("{}", crate::tr!("chat-redone", tx = r.tx_id.to_string()));
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
                        println!("{}", crate::tr!("chat-nothing-applied"));
                    }
                }
                Err(e) => last = report_agent_error(&e, global)?,
            },
            Input::Diff => match &shown {
                Some(p) => crate::cmd::apply_plan::print_preview(&p.preview),
                None => println!("{}", crate::tr!("chat-no-diff")),
            },
            Input::Message(message) if refuses_stale(&agent, message) => last = Exit::RolledBack,
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
                        println!("{}", crate::tr!("chat-cancelled"));
                        Exit::Failure
                    }
                    Some(Ok(ChatTurn::Plan { outcome, .. })) => {
                        print_plan(&outcome);
                        println!("{}", crate::tr!("chat-say-ok"));
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

/// Say so when the files the saved plan was based on changed since; whether they did.
fn say_if_stale(agent: &Agent, saved: &SavedPlan) -> bool {
    let changed = saved.changed_files(agent.root());
    if changed.is_empty() {
        return false;
    }
    println!(
        "{}",
        crate::tr!(
            "chat-restored-stale",
            count = changed.len(),
            paths = changed.join(", ")
        )
    );
    true
}

/// A message that would apply a stale saved plan is refused (said, never sent to the model):
/// its answer would be judged against files the plan never saw.
fn refuses_stale(agent: &Agent, message: &str) -> bool {
    let applies_saved = agent
        .resolve(message)
        .is_ok_and(|decision| decision.apply_saved_plan);
    applies_saved
        && agent
            .saved_plan()
            .ok()
            .flatten()
            .is_some_and(|saved| say_if_stale(agent, &saved))
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
        assert_eq!(parse("/discard"), Input::Discard);
        assert_eq!(parse("/nope"), Input::Unknown("/nope"));
        assert_eq!(parse("/"), Input::Unknown("/"));
        assert_eq!(parse(" make it 42 "), Input::Message("make it 42"));
        assert_eq!(parse("ok"), Input::Message("ok"));
    }
}
