//! Personal automation: commands the model proposes, run only when an allow-list entry
//! (`git status`, `npm run`, `cargo test`, …) names them and every argument passes that
//! entry's rules — never through a shell, in the project root, with a timeout, output
//! captured — and `http(s)` URLs opened with the system opener. It runs those programs and
//! appends their output to `.papa-yu/commands.log`; the caller asks the user first.

use std::collections::BTreeSet;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use camino::{Utf8Component, Utf8Path};
use serde::Serialize;

use crate::error::AutomationError;

/// Where command output is appended (the `commands` log source), relative to the root.
pub const COMMANDS_LOG: &str = ".papa-yu/commands.log";
/// The log keeps this many bytes at most (the newest).
const LOG_MAX_BYTES: usize = 256 * 1024;
/// Output kept per stream of one run.
const OUTPUT_MAX_BYTES: usize = 64 * 1024;

/// Every command papayu can run, as `program subcommand` (the built-in allow-list).
pub const BUILTIN: &[&str] = &[
    "git status",
    "git diff",
    "git log",
    "git add",
    "git commit",
    "git checkout",
    "git branch",
    "git fetch",
    "git pull",
    "git push",
    "npm ci",
    "npm install",
    "npm test",
    "npm run",
    "cargo build",
    "cargo test",
    "cargo check",
    "cargo clippy",
    "cargo fmt",
    "python3 -m pytest",
    "pip install",
];

/// The commands papayu may run: the built-in list or a part of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowList(BTreeSet<&'static str>);

impl AllowList {
    /// Every built-in entry.
    pub fn builtin() -> AllowList {
        AllowList(BUILTIN.iter().copied().collect())
    }

    /// The entries of a comma-separated list (`git status, cargo test`); an empty list allows
    /// nothing; an entry that is not built in is an error.
    pub fn parse(raw: &str) -> Result<AllowList, AutomationError> {
        let mut out = BTreeSet::new();
        for entry in raw
            .split(',')
            .map(|e| e.split_whitespace().collect::<Vec<_>>().join(" "))
        {
            if entry.is_empty() {
                continue;
            }
            let known = BUILTIN.iter().find(|b| **b == entry).ok_or_else(|| {
                AutomationError::AllowList {
                    entry: entry.clone(),
                    known: BUILTIN.join(", "),
                }
            })?;
            out.insert(*known);
        }
        Ok(AllowList(out))
    }

    /// The entries, sorted.
    pub fn names(&self) -> Vec<&'static str> {
        self.0.iter().copied().collect()
    }

    /// Whether `entry` is allowed.
    pub fn allows(&self, entry: &str) -> bool {
        self.0.contains(entry)
    }
}

/// Split a command line into words without a shell: `"…"` and `'…'` group words; shell
/// syntax (`;`, `|`, `&`, `<`, `>`, `$`, backquote, backslash, globs, newlines) is refused,
/// since nothing would interpret it.
pub fn split_line(line: &str) -> Result<Vec<String>, AutomationError> {
    let refuse = |reason: &str| AutomationError::Parse {
        line: line.to_owned(),
        reason: reason.to_owned(),
    };
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        if c.is_control() && c != '\t' {
            return Err(refuse("control characters"));
        }
        if matches!(c, '$' | '`' | '\\') {
            return Err(refuse(
                "shell expansion (`$`, backquotes, backslashes) is not run",
            ));
        }
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                in_word = true;
            }
            None if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            None if matches!(
                c,
                ';' | '|' | '&' | '<' | '>' | '*' | '?' | '(' | ')' | '{' | '}' | '~' | '#'
            ) =>
            {
                return Err(refuse(
                    "shell syntax (pipes, redirections, globs, `;`, `&&`) is not run",
                ));
            }
            None => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err(refuse("an unclosed quote"));
    }
    if in_word {
        words.push(word);
    }
    if words.is_empty() {
        return Err(refuse("no command"));
    }
    Ok(words)
}

/// A command the allow-list and its argument rules accept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckedCommand {
    /// The allow-list entry (`git commit`).
    pub entry: &'static str,
    /// The program run.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
}

impl CheckedCommand {
    /// The command as shown to the user.
    pub fn display(&self) -> String {
        std::iter::once(self.program.as_str())
            .chain(self.args.iter().map(String::as_str))
            .map(|w| {
                if w.is_empty() || w.contains(char::is_whitespace) {
                    format!("{w:?}")
                } else {
                    w.to_owned()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// One option an entry accepts: its spelling and whether it takes the next word as value.
type Flag = (&'static str, Value);

/// What kind of value an option or a positional argument must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value {
    /// The option takes no value.
    None,
    /// A git ref, remote or branch name.
    Ref,
    /// A free text (a commit message): passed as one argument, never interpreted.
    Text,
    /// A whole number.
    Number,
    /// A path inside the project.
    Path,
    /// A Rust package name or feature list.
    CargoName,
    /// After `cargo … --`: a test filter, a lint level (`-D`, `warnings`) or a test-harness
    /// switch.
    CargoTrailing,
    /// An npm package spec from the registry.
    NpmPackage,
    /// A PyPI requirement from the index.
    PipPackage,
    /// A script of the project's `package.json`.
    NpmScript,
    /// A pytest `-k` expression.
    Expression,
}

struct Rules {
    flags: &'static [Flag],
    /// What positional arguments are (`None`: none allowed).
    positional: Option<Value>,
    /// After `--`, arguments are of this kind.
    after_dashes: Option<Value>,
    /// At most this many positional arguments.
    max_positional: usize,
}

fn rules(entry: &str) -> Rules {
    use Value as V;
    let r = |flags, positional, after_dashes, max_positional| Rules {
        flags,
        positional,
        after_dashes,
        max_positional,
    };
    match entry {
        "git status" => r(
            &[
                ("-s", V::None),
                ("--short", V::None),
                ("-b", V::None),
                ("--branch", V::None),
                ("--porcelain", V::None),
            ],
            Some(V::Path),
            Some(V::Path),
            16,
        ),
        "git diff" => r(
            &[
                ("--stat", V::None),
                ("--cached", V::None),
                ("--staged", V::None),
                ("--name-only", V::None),
                ("--name-status", V::None),
                ("--no-color", V::None),
            ],
            Some(V::Ref),
            Some(V::Path),
            16,
        ),
        "git log" => r(
            &[
                ("--oneline", V::None),
                ("--stat", V::None),
                ("--graph", V::None),
                ("--no-color", V::None),
                ("-n", V::Number),
                ("--max-count", V::Number),
            ],
            Some(V::Ref),
            Some(V::Path),
            16,
        ),
        "git add" => r(
            &[
                ("-A", V::None),
                ("--all", V::None),
                ("-u", V::None),
                ("--update", V::None),
            ],
            Some(V::Path),
            Some(V::Path),
            64,
        ),
        "git commit" => r(
            &[
                ("-m", V::Text),
                ("--message", V::Text),
                ("-a", V::None),
                ("--all", V::None),
            ],
            None,
            None,
            0,
        ),
        "git checkout" => r(&[("-b", V::Ref)], Some(V::Ref), Some(V::Path), 1),
        "git branch" => r(
            &[
                ("--list", V::None),
                ("-a", V::None),
                ("-v", V::None),
                ("--show-current", V::None),
            ],
            Some(V::Ref),
            None,
            1,
        ),
        "git fetch" => r(
            &[
                ("--all", V::None),
                ("--tags", V::None),
                ("--prune", V::None),
            ],
            Some(V::Ref),
            None,
            2,
        ),
        "git pull" => r(
            &[
                ("--ff-only", V::None),
                ("--rebase", V::None),
                ("--no-rebase", V::None),
            ],
            Some(V::Ref),
            None,
            2,
        ),
        "git push" => r(
            &[
                ("-u", V::None),
                ("--set-upstream", V::None),
                ("--tags", V::None),
            ],
            Some(V::Ref),
            None,
            2,
        ),
        "npm ci" => r(
            &[
                ("--no-audit", V::None),
                ("--no-fund", V::None),
                ("--ignore-scripts", V::None),
            ],
            None,
            None,
            0,
        ),
        "npm install" => r(
            &[
                ("--no-audit", V::None),
                ("--no-fund", V::None),
                ("--ignore-scripts", V::None),
                ("-D", V::None),
                ("--save-dev", V::None),
            ],
            Some(V::NpmPackage),
            None,
            16,
        ),
        "npm test" => r(&[], None, None, 0),
        "npm run" => r(&[], Some(V::NpmScript), None, 1),
        "cargo build" | "cargo test" | "cargo check" | "cargo clippy" => r(
            &[
                ("--release", V::None),
                ("--workspace", V::None),
                ("--all-targets", V::None),
                ("--all-features", V::None),
                ("--no-default-features", V::None),
                ("--lib", V::None),
                ("--tests", V::None),
                ("-q", V::None),
                ("--quiet", V::None),
                ("-p", V::CargoName),
                ("--package", V::CargoName),
                ("--features", V::CargoName),
            ],
            if entry == "cargo test" {
                Some(V::CargoName)
            } else {
                None
            },
            Some(V::CargoTrailing),
            1,
        ),
        "cargo fmt" => r(
            &[
                ("--all", V::None),
                ("--check", V::None),
                ("-p", V::CargoName),
                ("--package", V::CargoName),
            ],
            None,
            None,
            0,
        ),
        "python3 -m pytest" => r(
            &[
                ("-q", V::None),
                ("-x", V::None),
                ("-v", V::None),
                ("-k", V::Expression),
                ("--maxfail", V::Number),
            ],
            Some(V::Path),
            None,
            16,
        ),
        "pip install" => r(
            &[("-U", V::None), ("--upgrade", V::None)],
            Some(V::PipPackage),
            None,
            16,
        ),
        _ => r(&[], None, None, 0),
    }
}

fn valid_ref(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(['-', '/', '.'])
        && !s.contains("..")
        && !s.contains("://")
        && !s.contains(':')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/-@^~".contains(c))
}

fn valid_path(s: &str) -> bool {
    let p = Utf8Path::new(s);
    !s.is_empty()
        && !s.starts_with('-')
        && !p.is_absolute()
        && !s.contains(':')
        && p.components()
            .all(|c| matches!(c, Utf8Component::Normal(_) | Utf8Component::CurDir))
}

fn valid_npm_package(s: &str) -> bool {
    let (name, version) = match s.strip_prefix('@') {
        Some(rest) => match rest.split_once('@') {
            Some((n, v)) => (format!("@{n}"), Some(v)),
            None => (s.to_owned(), None),
        },
        None => match s.split_once('@') {
            Some((n, v)) => (n.to_owned(), Some(v)),
            None => (s.to_owned(), None),
        },
    };
    let part = |p: &str| {
        !p.is_empty()
            && !p.starts_with(['.', '_', '-'])
            && p.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-._~".contains(c))
    };
    let name_ok = match name.strip_prefix('@') {
        Some(scoped) => scoped
            .split_once('/')
            .is_some_and(|(a, b)| part(a) && part(b)),
        None => part(&name),
    };
    name_ok
        && version.is_none_or(|v| {
            !v.is_empty()
                && v.chars()
                    .all(|c| c.is_ascii_alphanumeric() || ".-^~=<>x".contains(c))
        })
}

fn valid_pip_package(s: &str) -> bool {
    let name_end = s.find(|c: char| "=<>!~[".contains(c)).unwrap_or(s.len());
    let (name, spec) = s.split_at(name_end);
    !name.is_empty()
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        && spec
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "=<>!~.,*[]_-".contains(c))
}

fn npm_scripts(root: &Utf8Path) -> BTreeSet<String> {
    fs_err::read_to_string(root.join("package.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| {
            v.get("scripts")?
                .as_object()
                .map(|m| m.keys().cloned().collect())
        })
        .unwrap_or_default()
}

fn check_value(kind: Value, value: &str, root: &Utf8Path) -> Result<(), String> {
    let ok = match kind {
        Value::None => false,
        Value::Ref => valid_ref(value),
        Value::Text => !value.trim().is_empty(),
        Value::Number => value.parse::<u32>().is_ok(),
        Value::Path => valid_path(value),
        Value::CargoName => {
            !value.starts_with('-')
                && value
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-,/".contains(c))
        }
        Value::CargoTrailing => {
            [
                "-D",
                "-W",
                "-A",
                "--nocapture",
                "--ignored",
                "--include-ignored",
                "-q",
                "--quiet",
            ]
            .contains(&value)
                || (!value.starts_with('-')
                    && value
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_:-".contains(c)))
        }
        Value::NpmPackage => valid_npm_package(value),
        Value::PipPackage => valid_pip_package(value),
        Value::Expression => {
            !value.starts_with('-')
                && value
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || " _-.".contains(c))
        }
        Value::NpmScript => {
            let scripts = npm_scripts(root);
            if !scripts.contains(value) {
                return Err(format!(
                    "{value:?} is not a script of package.json (scripts: {})",
                    scripts.into_iter().collect::<Vec<_>>().join(", ")
                ));
            }
            true
        }
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{value:?} is not an allowed {kind:?} argument").to_lowercase())
    }
}

/// Check `words` (a split command line) against `allow` and the entry's argument rules:
/// only known options, each value of its kind, paths inside the project, `npm run` only of
/// a script `package.json` defines, packages only by registry name (no URL, path or git
/// spec). The error names the rule that refused it.
pub fn check(
    words: &[String],
    allow: &AllowList,
    root: &Utf8Path,
) -> Result<CheckedCommand, AutomationError> {
    let shown = words.join(" ");
    let refused = |reason: String| AutomationError::Refused {
        command: shown.clone(),
        reason,
    };
    let entry = BUILTIN
        .iter()
        .copied()
        .filter(|e| {
            let parts: Vec<&str> = e.split(' ').collect();
            words.len() >= parts.len() && parts.iter().zip(words).all(|(p, w)| p == w)
        })
        .max_by_key(|e| e.len())
        .ok_or_else(|| {
            refused(format!(
                "not on the allow-list (a command must start with one of: {})",
                allow.names().join(", ")
            ))
        })?;
    if !allow.allows(entry) {
        return Err(refused(format!(
            "`{entry}` is not on the configured allow-list"
        )));
    }
    let parts: Vec<&str> = entry.split(' ').collect();
    let rules = rules(entry);
    let mut args: Vec<String> = parts[1..].iter().map(|p| (*p).to_owned()).collect();
    let mut rest = words[parts.len()..].iter();
    let mut positional = 0;
    let mut after_dashes = false;
    while let Some(word) = rest.next() {
        if after_dashes {
            let kind = rules
                .after_dashes
                .ok_or_else(|| refused(format!("`{entry}` takes nothing after `--`")))?;
            check_value(kind, word, root).map_err(refused)?;
        } else if word == "--" {
            if rules.after_dashes.is_none() {
                return Err(refused(format!("`{entry}` takes nothing after `--`")));
            }
            after_dashes = true;
        } else if word.starts_with('-') {
            let (name, inline) = match word.split_once('=') {
                Some((n, v)) if n.starts_with("--") => (n, Some(v)),
                _ => (word.as_str(), None),
            };
            let &(_, kind) = rules
                .flags
                .iter()
                .find(|(f, _)| *f == name)
                .ok_or_else(|| refused(format!("option {name:?} is not allowed for `{entry}`")))?;
            match (kind, inline) {
                (Value::None, None) => {}
                (Value::None, Some(_)) => {
                    return Err(refused(format!("option {name:?} takes no value")));
                }
                (kind, Some(v)) => check_value(kind, v, root).map_err(refused)?,
                (kind, None) => {
                    let v = rest
                        .next()
                        .ok_or_else(|| refused(format!("option {name:?} needs a value")))?;
                    check_value(kind, v, root).map_err(refused)?;
                    args.push(word.clone());
                    args.push(v.clone());
                    continue;
                }
            }
        } else {
            let kind = rules
                .positional
                .ok_or_else(|| refused(format!("`{entry}` takes no argument {word:?}")))?;
            positional += 1;
            if positional > rules.max_positional {
                return Err(refused(format!("too many arguments for `{entry}`")));
            }
            check_value(kind, word, root).map_err(refused)?;
        }
        args.push(word.clone());
    }
    Ok(CheckedCommand {
        entry,
        program: parts[0].to_owned(),
        args,
    })
}

/// How one command ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommandRun {
    /// The command as shown.
    pub command: String,
    /// Its exit code (`None`: killed, e.g. on timeout).
    pub exit_code: Option<i32>,
    /// Whether the timeout ended it.
    pub timed_out: bool,
    /// Standard output (the last 64 KiB).
    pub stdout: String,
    /// Standard error (the last 64 KiB).
    pub stderr: String,
}

impl CommandRun {
    /// Exit code 0.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0)
    }
}

fn tail(bytes: &[u8]) -> String {
    let start = bytes.len().saturating_sub(OUTPUT_MAX_BYTES);
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}

fn reader<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut out);
        }
        out
    })
}

/// Run `command` in `root` (no shell, stdin closed), killed after `timeout`; its output is
/// returned and appended to [`COMMANDS_LOG`].
pub fn run(
    command: &CheckedCommand,
    root: &Utf8Path,
    timeout: Duration,
) -> Result<CommandRun, AutomationError> {
    let mut child = Command::new(&command.program)
        .args(&command.args)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| AutomationError::NotStarted {
            program: command.program.clone(),
            message: e.to_string(),
        })?;
    let out = reader(child.stdout.take());
    let err = reader(child.stderr.take());
    let started = Instant::now();
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() >= timeout => {
                timed_out = true;
                let _ = child.kill();
                break child.wait().ok();
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => break None,
        }
    };
    let run = CommandRun {
        command: command.display(),
        exit_code: status.and_then(|s| s.code()),
        timed_out,
        stdout: tail(&out.join().unwrap_or_default()),
        stderr: tail(&err.join().unwrap_or_default()),
    };
    append_log(root, &run);
    Ok(run)
}

fn append_log(root: &Utf8Path, run: &CommandRun) {
    let path = root.join(COMMANDS_LOG);
    let mut log = fs_err::read(&path).unwrap_or_default();
    let status = match (run.timed_out, run.exit_code) {
        (true, _) => "timed out".to_owned(),
        (false, Some(c)) => format!("exit {c}"),
        (false, None) => "killed".to_owned(),
    };
    log.extend_from_slice(
        format!(
            "$ {} ({status})\n{}{}\n",
            run.command, run.stdout, run.stderr
        )
        .as_bytes(),
    );
    let start = log.len().saturating_sub(LOG_MAX_BYTES);
    if let Err(e) = papayu_fs::write_atomic(&path, &log[start..]) {
        tracing::warn!(%path, error = %e, "the commands log was not written");
    }
}

/// The [`COMMANDS_LOG`] text of the project at `root` (`None` when no command ran yet).
pub fn log_text(root: &Utf8Path) -> Option<String> {
    fs_err::read(root.join(COMMANDS_LOG))
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// `raw` as a URL papayu opens: `http` or `https` with a host and no credentials; anything
/// else (`javascript:`, `file:`, `data:`, …) is refused.
pub fn check_url(raw: &str) -> Result<url::Url, AutomationError> {
    let bad = |reason: &str| AutomationError::BadUrl {
        url: raw.to_owned(),
        reason: reason.to_owned(),
    };
    let url = url::Url::parse(raw.trim()).map_err(|e| bad(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad("only http and https URLs are opened"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("no host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("credentials in a URL are not opened"));
    }
    Ok(url)
}

/// The system's opener when none is configured.
pub fn default_opener() -> &'static str {
    if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    }
}

/// Open `raw` (checked by [`check_url`]) with `opener` (default: [`default_opener`]), the URL
/// its only argument.
pub fn open_url(raw: &str, opener: Option<&str>) -> Result<url::Url, AutomationError> {
    let url = check_url(raw)?;
    let program = opener.unwrap_or(default_opener());
    let status = Command::new(program)
        .arg(url.as_str())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| AutomationError::Opener {
            program: program.to_owned(),
            message: e.to_string(),
        })?;
    if !status.success() && !cfg!(windows) {
        return Err(AutomationError::Opener {
            program: program.to_owned(),
            message: format!("exited with {status}"),
        });
    }
    Ok(url)
}
