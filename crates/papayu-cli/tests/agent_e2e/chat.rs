//! `papayu chat` through a pseudo-terminal: goal → plan → "ok" → preview → "y" → applied →
//! "undo" → restored → "quit". On a terminal papayu streams the answers, so the scripted
//! model answers with server-sent events here.

use std::io::ErrorKind;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use expectrl::Expect;
use expectrl::process::unix::WaitStatus;
use expectrl::session::OsSession;
use wiremock::{Request, Respond, ResponseTemplate};

use crate::support::*;

/// The longest any single step of a conversation may take.
const STEP_TIMEOUT: Duration = Duration::from_secs(30);

/// A `papayu chat` session on a pseudo-terminal, keeping everything it printed.
struct Chat {
    session: OsSession,
    transcript: Vec<u8>,
    seen: usize,
}

impl Chat {
    fn start(project: &Project, model: &Model) -> Chat {
        Chat::start_on(project, model, "dumb")
    }

    /// `papayu chat` on a terminal of type `term` (`dumb`: no line editing; `xterm`: keys).
    fn start_on(project: &Project, model: &Model, term: &str) -> Chat {
        Chat::start_with(project, model, &[("TERM", term)])
    }

    /// `papayu chat` with `env` set.
    fn start_with(project: &Project, model: &Model, env: &[(&str, &str)]) -> Chat {
        let mut cmd = project.command(model, env, &["chat"]);
        cmd.env("PAPAYU_TRACE", "1");
        let session = expectrl::Session::spawn(cmd).expect("spawn papayu chat on a pty");
        Chat {
            session,
            transcript: Vec::new(),
            seen: 0,
        }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.transcript).into_owned()
    }

    /// Read until `needle` appears after what earlier calls matched; fail after
    /// [`STEP_TIMEOUT`] or at end of output, showing the whole transcript.
    #[track_caller]
    fn expect(&mut self, needle: &str) {
        let started = Instant::now();
        let mut buf = [0u8; 4096];
        loop {
            if let Some(i) = find(&self.transcript[self.seen..], needle.as_bytes()) {
                self.seen += i + needle.len();
                return;
            }
            assert!(
                started.elapsed() < STEP_TIMEOUT,
                "no {needle:?} after {STEP_TIMEOUT:?}; transcript:\n{}",
                self.text()
            );
            match self.session.try_read(&mut buf) {
                Ok(0) => panic!(
                    "papayu chat ended before {needle:?}; transcript:\n{}",
                    self.text()
                ),
                Ok(n) => self.transcript.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                // EIO: the child closed the terminal.
                Err(e) => panic!(
                    "papayu chat ended ({e}) before {needle:?}; transcript:\n{}",
                    self.text()
                ),
            }
        }
    }

    fn send(&mut self, line: &str) {
        self.session.send_line(line).unwrap();
    }

    /// Send raw keys (a line editor reads Enter as `\r`).
    fn keys(&mut self, keys: &str) {
        self.session.send(keys).unwrap();
    }

    /// Wait (bounded) for the process to end; its exit code.
    fn exit_code(mut self) -> i32 {
        let started = Instant::now();
        let mut buf = [0u8; 4096];
        loop {
            // Drain the terminal so the child never blocks writing to it.
            while let Ok(n) = self.session.try_read(&mut buf) {
                if n == 0 {
                    break;
                }
                self.transcript.extend_from_slice(&buf[..n]);
            }
            match self.session.get_process().status() {
                Ok(WaitStatus::StillAlive) => {}
                Ok(WaitStatus::Exited(_, code)) => return code,
                other => panic!("papayu chat: {other:?}; transcript:\n{}", self.text()),
            }
            assert!(
                started.elapsed() < STEP_TIMEOUT,
                "papayu chat did not exit; transcript:\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// One goal → plan → `trigger` → preview → "y" → applied → "undo" → restored round.
fn plan_confirm_undo(chat: &mut Chat, project: &Project, trigger: &str, before: &Tree) {
    chat.send("make answer() return 42");
    chat.expect("Diagnosis: answer() returns 41.");
    chat.expect("Say \"ok\" to apply this plan.");
    chat.expect("> ");
    assert_tree(project, before, &chat.text());

    chat.send(trigger);
    chat.expect("[0] PATCH_FILE src/lib.rs");
    chat.expect("+    42");
    chat.expect("Apply these changes? [y/N]");
    assert_tree(project, before, &"the preview wrote something");

    chat.send("y");
    chat.expect("Applied (transaction");
    chat.expect("> ");
    let mut applied = before.clone();
    applied.insert("src/lib.rs".into(), LIB_RS_42.into());
    applied.insert("docs/".into(), Vec::new());
    applied.insert("docs/NOTES.md".into(), NOTES_MD.into());
    assert_tree(project, &applied, &chat.text());

    chat.send("undo");
    chat.expect("Undone (transaction");
    chat.expect("> ");
    assert_tree(project, before, &chat.text());
}

fn script() -> Vec<serde_json::Value> {
    vec![
        read_request("src/lib.rs"),
        plan_answer("Diagnosis: answer() returns 41.\n1) return 42\n2) note it"),
        change_answer(&sha(LIB_RS.as_bytes())),
    ]
}

#[test]
fn chat_plan_ok_confirm_undo_quit() {
    let project = Project::new(&[("src/lib.rs", LIB_RS)]);
    let before = project.tree();
    let model = Model::start(&script());
    let mut chat = Chat::start(&project, &model);
    chat.expect("papayu chat");
    chat.expect("> ");
    plan_confirm_undo(&mut chat, &project, "ok", &before);
    chat.send("quit");
    assert_eq!(chat.exit_code(), 0);
    assert!(
        model.requests().iter().all(|r| r["stream"] == true),
        "a terminal streams"
    );
    let modes: Vec<String> = project
        .traces()
        .iter()
        .map(|t| t["mode"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(modes, ["PLAN", "APPLY"]);
}

#[test]
fn chat_da_triggers_the_saved_plan_and_no_declines() {
    let project = Project::new(&[("src/lib.rs", LIB_RS)]);
    let before = project.tree();
    let mut answers = script();
    // A second change, declined.
    answers.push(read_request("src/lib.rs"));
    answers.push(change_answer(&sha(LIB_RS.as_bytes())));
    let model = Model::start(&answers);
    let mut chat = Chat::start(&project, &model);
    chat.expect("> ");
    plan_confirm_undo(&mut chat, &project, "да", &before);

    // "apply:" asks for changes directly; "n" leaves everything as it is.
    chat.send("apply: make answer() return 42");
    chat.expect("Apply these changes? [y/N]");
    chat.send("n");
    chat.expect("not applied");
    chat.expect("> ");
    assert_tree(&project, &before, &chat.text());
    chat.send("quit");
    // The last turn was declined: the exit code says so.
    assert_eq!(chat.exit_code(), 1);
}

/// A scripted model whose answers each come after their own delay.
struct Slow {
    answers: Vec<(serde_json::Value, Duration)>,
    next: AtomicUsize,
}

impl Respond for Slow {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let i = self.next.fetch_add(1, Ordering::SeqCst);
        match self.answers.get(i) {
            Some((answer, delay)) => answer_response(req, &answer.to_string()).set_delay(*delay),
            None => ResponseTemplate::new(400).set_body_string("the script has no more answers"),
        }
    }
}

/// On a real terminal: Ctrl-C while the model works cancels that step and returns to the
/// prompt, ↑ recalls the goal, /help and /history answer, Ctrl-D leaves with the history kept.
#[test]
fn chat_repl_cancels_with_ctrl_c_recalls_with_arrows_and_leaves_with_ctrl_d() {
    let project = Project::new(&[("src/lib.rs", LIB_RS)]);
    let before = project.tree();
    let quick = Duration::ZERO;
    let model = Model::with(Slow {
        answers: vec![
            // The first request hangs far longer than the test waits: only Ctrl-C ends it.
            (read_request("src/lib.rs"), Duration::from_secs(60)),
            (read_request("src/lib.rs"), quick),
            (
                plan_answer("Diagnosis: answer() returns 41.\n1) return 42"),
                quick,
            ),
        ],
        next: AtomicUsize::new(0),
    });
    let mut chat = Chat::start_on(&project, &model, "xterm");
    chat.expect("> ");
    chat.keys("/help\r");
    chat.expect("/undo");
    chat.expect("> ");

    chat.keys("make answer() return 42\r");
    // Wait until the model has the request, then interrupt.
    let asked = Instant::now();
    while model.received().is_empty() {
        assert!(
            asked.elapsed() < STEP_TIMEOUT,
            "no request; transcript:\n{}",
            chat.text()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    chat.keys("\x03");
    chat.expect("cancelled; nothing was written");
    chat.expect("> ");
    assert_tree(&project, &before, &chat.text());

    // ↑ brings the goal back; Enter sends it again.
    chat.keys("\x1b[A");
    chat.keys("\r");
    chat.expect("Diagnosis: answer() returns 41.");
    chat.expect("> ");
    let goals: Vec<bool> = model
        .requests()
        .iter()
        .map(|r| r.to_string().contains("make answer() return 42"))
        .collect();
    assert_eq!(
        goals,
        [true, true, true],
        "every request carries the recalled goal"
    );

    chat.keys("/history\r");
    chat.expect("(nothing applied yet)");
    chat.expect("> ");
    chat.keys("\x04");
    assert_eq!(chat.exit_code(), 0);
    let history = std::fs::read_to_string(project.root().join(".papa-yu/chat-history")).unwrap();
    assert!(history.contains("make answer() return 42"), "{history}");
    assert!(history.contains("/history"), "{history}");
}

/// The saved plan's part of the state file (`null` when none).
fn saved_plan(project: &Project) -> serde_json::Value {
    let text = std::fs::read_to_string(project.root().join(".papa-yu/state.json")).unwrap();
    let state: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(state["version"], 1, "the state file is versioned");
    state["saved_plan"].clone()
}

/// Make a plan in one chat and leave.
fn plan_then_quit(project: &Project, model: &Model) {
    let mut chat = Chat::start(project, model);
    chat.expect("> ");
    chat.send("make answer() return 42");
    chat.expect("Say \"ok\" to apply this plan.");
    chat.expect("> ");
    chat.send("/quit");
    assert_eq!(chat.exit_code(), 0);
}

/// Session state (seed 000, issue #21): a plan made in one chat is pending in the next, with
/// its mode; "ok" there applies it, and applying clears it.
#[test]
fn r_chat_restart_restores_the_pending_plan() {
    let project = Project::new(&[("src/lib.rs", LIB_RS)]);
    let model = Model::start(&script());
    plan_then_quit(&project, &model);
    assert_eq!(saved_plan(&project)["goal"], "make answer() return 42");

    let mut chat = Chat::start(&project, &model);
    chat.expect("Restored the pending plan (");
    chat.expect("\"ok\" applies it): make answer() return 42");
    chat.expect("> ");
    chat.send("ok");
    chat.expect("[0] PATCH_FILE src/lib.rs");
    chat.expect("Apply these changes? [y/N]");
    chat.send("y");
    chat.expect("Applied (transaction");
    chat.expect("> ");
    chat.send("/quit");
    assert_eq!(chat.exit_code(), 0);
    assert_eq!(
        std::fs::read_to_string(project.root().join("src/lib.rs")).unwrap(),
        LIB_RS_42
    );
    assert!(saved_plan(&project).is_null(), "an applied plan is cleared");
}

/// A plan whose file changed after it was made is shown as stale after a restart, and "ok"
/// never sends it to the model; /discard forgets it.
#[test]
fn r_chat_restart_shows_a_stale_plan_and_never_applies_it() {
    let project = Project::new(&[("src/lib.rs", LIB_RS)]);
    let model = Model::start(&script());
    plan_then_quit(&project, &model);
    let asked = model.requests().len();
    std::fs::write(
        project.root().join("src/lib.rs"),
        "pub fn answer() -> u32 { 7 }\n",
    )
    .unwrap();
    let after_edit = project.tree();

    let mut chat = Chat::start(&project, &model);
    chat.expect("Restored the pending plan (");
    chat.expect("The saved plan is stale: 1 file(s) it was based on changed since (src/lib.rs)");
    chat.expect("> ");
    chat.send("ok");
    chat.expect("It will not be applied");
    chat.expect("> ");
    assert_eq!(model.requests().len(), asked, "a stale plan is never sent");
    chat.send("/discard");
    chat.expect("The saved plan is forgotten.");
    chat.expect("> ");
    chat.send("/quit");
    assert_eq!(
        chat.exit_code(),
        4,
        "the refused apply is the last turn's outcome"
    );
    assert!(saved_plan(&project).is_null());
    let mut now = project.tree();
    now.retain(|path, _| !path.starts_with(".papa-yu"));
    let mut expected = after_edit.clone();
    expected.retain(|path, _| !path.starts_with(".papa-yu"));
    assert_eq!(now, expected, "nothing was written");
}

/// `PAPAYU_LANG=ru`: the chat speaks Russian (its help and its answers to commands).
#[test]
fn chat_speaks_russian_with_papayu_lang_ru() {
    let project = Project::new(&[("src/lib.rs", LIB_RS)]);
    let model = Model::start(&[]);
    let mut chat = Chat::start_with(&project, &model, &[("TERM", "dumb"), ("PAPAYU_LANG", "ru")]);
    chat.expect("Опишите цель — получите план.");
    chat.expect("> ");
    chat.send("/discard");
    chat.expect("Сохранённого плана нет.");
    chat.expect("> ");
    chat.send("/nope");
    chat.expect("неизвестная команда /nope");
    chat.send("/quit");
    assert_eq!(chat.exit_code(), 0);
}
