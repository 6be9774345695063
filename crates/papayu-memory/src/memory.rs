//! [`Memory`]: both preference files together, the memory block, `set` and `memory_patch`.

use std::collections::BTreeMap;

use camino::{Utf8Path, Utf8PathBuf};
use papayu_protocol::ErrorCode;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::block;
use crate::error::MemoryError;
use crate::prefs::{ProjectPrefs, Section, UserPrefs, section_fields};
use crate::remember::remember_requested;
use crate::value::{RejectReason, Typed, kind_of, parse_cli, validate};

/// Where the user preferences live, relative to the config directory the caller passes.
pub const USER_PREFS_FILE: &str = "papayu/preferences.json";
/// Where the project preferences live, relative to the project root.
pub const PROJECT_PREFS_FILE: &str = ".papa-yu/project.json";

/// Where the original papa-yu app kept the operator's preferences, under the platform's
/// application data directory (seed 000: `app_data_dir()/papa-yu/preferences.json`).
pub const ORIGINAL_USER_PREFS_FILE: &str = "papa-yu/preferences.json";

/// The user and project preferences of one papayu run.
///
/// Changes made with [`set`](Self::set) and [`unset`](Self::unset) stay in memory until
/// [`save`](Self::save); [`apply_patch`](Self::apply_patch) saves by itself.
#[derive(Debug, Clone)]
pub struct Memory {
    user_file: Utf8PathBuf,
    project_file: Utf8PathBuf,
    user: UserPrefs,
    project: ProjectPrefs,
    user_dirty: bool,
    project_dirty: bool,
}

/// Why a `memory_patch` was allowed to change the files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PatchTrigger {
    /// The user's message asked papayu to remember something.
    UserAsked,
    /// The caller's autopatch flag (`PAPAYU_MEMORY_AUTOPATCH=1`) is on.
    Autopatch,
}

/// A `memory_patch` entry that was applied.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AppliedKey {
    /// The dotted key, e.g. `user.ask_budget`.
    pub key: String,
    /// The stored value.
    pub value: Value,
    /// Whether the value differs from what was stored before.
    pub changed: bool,
}

/// A `memory_patch` entry that was not applied, with the reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RejectedKey {
    /// The dotted key as the model sent it.
    pub key: String,
    /// The value as the model sent it.
    pub value: Value,
    /// Why it was not applied.
    #[serde(flatten)]
    pub reason: RejectReason,
    /// Always [`ErrorCode::MemoryPatchRejected`].
    pub code: ErrorCode,
}

/// What [`Memory::apply_patch`] did with each key of a `memory_patch`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct PatchReport {
    /// Why the patch could be applied; `None` when it could not (every valid key is then
    /// rejected with [`RejectReason::NotRequested`]).
    pub trigger: Option<PatchTrigger>,
    /// Applied keys, sorted by key.
    pub applied: Vec<AppliedKey>,
    /// Rejected keys (unknown, wrong type, out of range, not requested), sorted by key.
    pub rejected: Vec<RejectedKey>,
    /// Files written (only files whose content changed).
    pub written: Vec<Utf8PathBuf>,
}

impl PatchReport {
    /// Whether the patch had no (non-null) entries at all.
    pub fn is_empty(&self) -> bool {
        self.applied.is_empty() && self.rejected.is_empty()
    }

    /// [`ErrorCode::MemoryPatchRejected`] when at least one key was rejected.
    pub fn code(&self) -> Option<ErrorCode> {
        (!self.rejected.is_empty()).then_some(ErrorCode::MemoryPatchRejected)
    }
}

/// A settable key resolved to its place.
enum Target<'k> {
    User(&'static str, &'static str),
    Project(&'static str, &'static str),
    LogFile(&'k str),
}

fn resolve(key: &str) -> Option<Target<'_>> {
    if let Some(name) = key.strip_prefix("project.log_files.") {
        return Some(Target::LogFile(name));
    }
    if let Some((k, field, _)) = section_fields::<UserPrefs>().find(|(k, _, _)| *k == key) {
        return Some(Target::User(k, field));
    }
    section_fields::<ProjectPrefs>()
        .find(|(k, _, _)| *k == key)
        .map(|(k, field, _)| Target::Project(k, field))
}

impl Memory {
    /// Load `<config_dir>/papayu/preferences.json` and `<project_root>/.papa-yu/project.json`.
    ///
    /// A missing file means "nothing set". A file that is not JSON, not an object, or has a
    /// field of the wrong type or out of range is an error ([`ErrorCode::InvalidConfig`]) naming
    /// the file and the field; nothing is coerced.
    pub fn load(
        config_dir: impl AsRef<Utf8Path>,
        project_root: impl AsRef<Utf8Path>,
    ) -> Result<Memory, MemoryError> {
        let user_file = config_dir.as_ref().join(USER_PREFS_FILE);
        let project_file = project_root.as_ref().join(PROJECT_PREFS_FILE);
        Ok(Memory {
            user: UserPrefs::load(&user_file)?,
            project: ProjectPrefs::load(&project_file)?,
            user_file,
            project_file,
            user_dirty: false,
            project_dirty: false,
        })
    }

    /// Take the user preferences papayu's own file leaves unset from the original papa-yu
    /// app's `preferences.json` at `file` ([`ORIGINAL_USER_PREFS_FILE`] under its data
    /// directory): the lowest-priority source. Each value is validated like a `memory_patch`
    /// value; one papayu cannot use (the original took free-form styles such as "коротко, по
    /// делу"), an unknown field, or a file that is not a JSON object is skipped, since the file
    /// belongs to another program. Returns the dotted keys taken. Nothing is written: the
    /// values reach papayu's own file only when a later change of the user preferences saves it.
    pub fn fill_from_original_user_prefs(
        &mut self,
        file: &Utf8Path,
    ) -> Result<Vec<String>, MemoryError> {
        let text = match fs_err::read_to_string(file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(MemoryError::Io {
                    path: file.to_owned(),
                    source: e,
                });
            }
        };
        let Ok(Value::Object(original)) = serde_json::from_str::<Value>(&text) else {
            return Ok(Vec::new());
        };
        let mut taken = Vec::new();
        for (key, field, kind) in section_fields::<UserPrefs>() {
            if self.user.get(field).is_some() {
                continue;
            }
            let Some(raw) = original.get(field) else {
                continue;
            };
            if let Ok(typed) = validate(key, kind, raw)
                && self.user.assign(field, typed).is_ok()
            {
                taken.push(key.to_owned());
            }
        }
        Ok(taken)
    }

    /// The user preferences.
    pub fn user(&self) -> &UserPrefs {
        &self.user
    }

    /// The project preferences.
    pub fn project(&self) -> &ProjectPrefs {
        &self.project
    }

    /// Path of the user preferences file.
    pub fn user_file(&self) -> &Utf8Path {
        &self.user_file
    }

    /// Path of the project preferences file.
    pub fn project_file(&self) -> &Utf8Path {
        &self.project_file
    }

    /// The ENGINEERING_MEMORY block to append to the system prompt: only the fields that are
    /// set, deterministic, at most [`MAX_BLOCK_BYTES`](crate::MAX_BLOCK_BYTES). Empty when
    /// nothing is set.
    pub fn block(&self) -> String {
        block::build(&self.user, &self.project)
    }

    /// Every set value as `{"user": {...}, "project": {...}}` (for `papayu memory show --json`);
    /// unknown fields of the files are not included.
    pub fn to_json(&self) -> Value {
        let mut root = Map::new();
        let mut user = crate::prefs::section_to_json(&self.user);
        user.retain(|k, _| !self.user.unknown_fields().contains_key(k));
        let mut project = crate::prefs::section_to_json(&self.project);
        project.retain(|k, _| !self.project.unknown_fields().contains_key(k));
        root.insert("user".to_owned(), Value::Object(user));
        root.insert("project".to_owned(), Value::Object(project));
        Value::Object(root)
    }

    /// The value of a dotted key (a whitelisted key or `project.log_files.<name>`), `None` when
    /// unset.
    pub fn get(&self, key: &str) -> Result<Option<Value>, MemoryError> {
        match resolve(key) {
            Some(Target::User(_, field)) => Ok(self.user.get(field)),
            Some(Target::Project(_, field)) => Ok(self.project.get(field)),
            Some(Target::LogFile(name)) => Ok(self
                .project
                .log_files()
                .get(name)
                .map(|p| Value::from(p.as_str()))),
            None => Err(MemoryError::UnknownKey {
                key: key.to_owned(),
            }),
        }
    }

    /// Set a dotted key from a command-line string (`papayu memory set KEY VALUE`) and return
    /// the stored value. Integer keys take digits; list keys take a JSON array (`["src","lib"]`)
    /// or a comma-separated list (`src, lib`); `project.log_files.<name>` takes a relative
    /// path; everything else is taken verbatim. The value is validated exactly like a
    /// `memory_patch` value. The change is in memory only until [`save`](Self::save).
    pub fn set(&mut self, key: &str, value: &str) -> Result<Value, MemoryError> {
        let unknown = || MemoryError::UnknownKey {
            key: key.to_owned(),
        };
        let bad = |reason| MemoryError::InvalidValue {
            key: key.to_owned(),
            reason,
        };
        match resolve(key).ok_or_else(unknown)? {
            Target::LogFile(name) => {
                let v = Value::from(value);
                self.project.set_log_file(name, &v).map_err(bad)?;
                self.project_dirty = true;
                Ok(v)
            }
            Target::User(k, field) | Target::Project(k, field) => {
                let kind = kind_of(k).ok_or_else(unknown)?;
                let raw = parse_cli(kind, value).map_err(bad)?;
                let typed = validate(k, kind, &raw).map_err(bad)?;
                self.assign(k, field, typed).map_err(bad)?;
                self.get(key)?.ok_or_else(unknown)
            }
        }
    }

    /// Unset a dotted key; returns whether it was set. In memory only until
    /// [`save`](Self::save).
    pub fn unset(&mut self, key: &str) -> Result<bool, MemoryError> {
        let was_set = match resolve(key) {
            Some(Target::User(_, field)) => self.user.clear(field),
            Some(Target::Project(_, field)) => self.project.clear(field),
            Some(Target::LogFile(name)) => self.project.unset_log_file(name),
            None => {
                return Err(MemoryError::UnknownKey {
                    key: key.to_owned(),
                });
            }
        };
        if was_set {
            if key.starts_with(UserPrefs::PREFIX) {
                self.user_dirty = true;
            } else {
                self.project_dirty = true;
            }
        }
        Ok(was_set)
    }

    fn assign(&mut self, key: &str, field: &str, typed: Typed) -> Result<(), RejectReason> {
        if key.starts_with(UserPrefs::PREFIX) {
            self.user.assign(field, typed)?;
            self.user_dirty = true;
        } else {
            self.project.assign(field, typed)?;
            self.project_dirty = true;
        }
        Ok(())
    }

    /// Save the files changed since loading (or since the last save), atomically; returns the
    /// paths written. Unknown fields of the files are kept.
    pub fn save(&mut self) -> Result<Vec<Utf8PathBuf>, MemoryError> {
        let mut written = Vec::new();
        if self.user_dirty {
            self.user.save(&self.user_file)?;
            self.user_dirty = false;
            written.push(self.user_file.clone());
        }
        if self.project_dirty {
            self.project.save(&self.project_file)?;
            self.project_dirty = false;
            written.push(self.project_file.clone());
        }
        Ok(written)
    }

    /// Apply a model's `memory_patch`.
    ///
    /// Each key must be one of the 13 whitelisted dotted keys (`user.*`, `project.*`) and its
    /// value must have the key's type and range; anything else is rejected and reported, never
    /// coerced (`"user.ask_budget": 300` is rejected, not clamped). `null` values mean "absent"
    /// (strict-mode providers send every key) and are skipped. Valid keys are applied only when
    /// `user_message` asks papayu to remember something (see
    /// [`remember_requested`](crate::remember_requested)) or `autopatch` is on; otherwise they
    /// are reported as [`RejectReason::NotRequested`]. Changed files are written atomically
    /// before returning; an I/O error is returned as `Err` (the in-memory values then already
    /// hold the patch and a later [`save`](Self::save) retries).
    pub fn apply_patch(
        &mut self,
        patch: &BTreeMap<String, Value>,
        user_message: &str,
        autopatch: bool,
    ) -> Result<PatchReport, MemoryError> {
        let trigger = if remember_requested(user_message) {
            Some(PatchTrigger::UserAsked)
        } else if autopatch {
            Some(PatchTrigger::Autopatch)
        } else {
            None
        };
        let mut report = PatchReport {
            trigger,
            ..PatchReport::default()
        };
        let reject = |report: &mut PatchReport, key: &str, value: &Value, reason| {
            report.rejected.push(RejectedKey {
                key: key.to_owned(),
                value: value.clone(),
                reason,
                code: ErrorCode::MemoryPatchRejected,
            });
        };
        for (key, value) in patch {
            if value.is_null() {
                continue;
            }
            let (k, field, kind) = match resolve(key) {
                Some(Target::User(k, field) | Target::Project(k, field)) => match kind_of(k) {
                    Some(kind) => (k, field, kind),
                    None => {
                        reject(&mut report, key, value, RejectReason::UnknownKey);
                        continue;
                    }
                },
                _ => {
                    reject(&mut report, key, value, RejectReason::UnknownKey);
                    continue;
                }
            };
            let typed = match validate(k, kind, value) {
                Ok(t) => t,
                Err(reason) => {
                    reject(&mut report, key, value, reason);
                    continue;
                }
            };
            if trigger.is_none() {
                reject(&mut report, key, value, RejectReason::NotRequested);
                continue;
            }
            let before = self.get(key)?;
            let (user_dirty, project_dirty) = (self.user_dirty, self.project_dirty);
            if let Err(reason) = self.assign(k, field, typed) {
                reject(&mut report, key, value, reason);
                continue;
            }
            let after = self.get(key)?;
            let changed = before != after;
            if !changed {
                // Re-storing the same value must not rewrite the file.
                self.user_dirty = user_dirty;
                self.project_dirty = project_dirty;
            }
            report.applied.push(AppliedKey {
                key: key.clone(),
                value: after.unwrap_or(Value::Null),
                changed,
            });
        }
        report.written = self.save()?;
        Ok(report)
    }
}
